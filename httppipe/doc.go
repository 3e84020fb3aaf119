// Package httppipe is the client side of MCP's HTTP transports (streamable
// HTTP, in both protocol eras, and the legacy HTTP+SSE transport)
// presented as a pair of line pipes.
//
// The probe client of mcpchaos test speaks newline-delimited JSON-RPC, as
// over stdio, and bounds every wait itself. Giving it the same two pipes
// over HTTP lets one workload, one set of deadlines and one judge serve
// both transports, instead of a second client that could disagree with
// the first about what a server did.
//
// A Pipe behaves as a careful client transport does, so that what the
// probe reports is the server's doing: a POST per message, concurrently,
// so a slow tool call holds up nothing else; the session and protocol
// version headers, known before the answer that taught them is read; the
// GET stream for server-initiated messages; resumption of a cut event
// stream with Last-Event-ID; DELETE when the client closes. Closing the
// writer is the analog of closing a stdio server's stdin, and the reader's
// end of file the analog of the server closing its stdout.
//
// An HTTP failure that leaves a request without an answer becomes a
// JSON-RPC error for it, so the probe does not wait out its deadline for
// an answer that cannot come. Answers a server merely withholds are not
// invented: the probe's deadlines are what find them.
package httppipe
