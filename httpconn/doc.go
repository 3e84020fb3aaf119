// Package httpconn is the client side of MCP's HTTP transports (streamable
// HTTP in both protocol eras, and the legacy HTTP+SSE transport) presented
// as a pair of line pipes. The probe client of mcpchaos test speaks
// newline-delimited JSON-RPC, as over stdio; through a Conn it drives an
// HTTP server unchanged, so one workload, one set of deadlines and one
// judge serve both transports.
//
// A Conn does what a well-behaved client transport does: one POST per
// message, concurrently; the session id and protocol version headers; the
// GET stream for server-initiated messages; resumption of a cut event
// stream with Last-Event-ID; DELETE when the client closes. An HTTP
// failure that answers a request becomes a JSON-RPC error for it, so the
// probe does not wait out its deadline for an answer that cannot come.
package httpconn
