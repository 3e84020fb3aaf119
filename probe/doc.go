// Package probe is the built-in MCP client that `mcpchaos test` points at a
// server through the chaos transport. It writes raw JSON-RPC itself instead of
// using an SDK client, so that it can later do what a well-behaved client never
// does (choose ids, reuse them, race requests), and it bounds every wait, so a
// server that hangs under a fault shows up as unanswered requests instead of a
// stuck test run.
package probe
