// Package everything is a small, well-behaved MCP server to point mcpchaos at.
// Each tool exercises one protocol feature a chaos proxy has to carry intact
// (a plain reply, progress notifications, list_changed notifications, the
// server-to-client roots, sampling, elicitation and ping requests, a large
// result), so a test that fails through the proxy but passes without it has
// found a fault in the proxy, not here.
package everything
