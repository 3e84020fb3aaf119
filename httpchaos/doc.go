// Package httpchaos is the streamable HTTP transport of mcpchaos, beside the
// stdio transport of package chaos: a reverse proxy between an MCP client
// and an MCP server that talk over HTTP. It frames request bodies, JSON
// answers and server-sent event streams into messages, relays them
// unchanged, carries out what the fault plan (package faults) decides, and
// records every message with its HTTP context in the transcript the judge
// (package reports) reads, in the same JSONL schema as stdio.
//
// The legacy HTTP+SSE transport goes through the same proxy: its GET stream
// is an event stream like any other, its POSTs are answered 202, and the
// endpoint event that tells the client where to POST is rewritten to point
// at the proxy.
//
// A fault means on HTTP what it means on stdio where HTTP has that meaning:
// eof cuts the stream (or connection) that carries the triggering message,
// stall stops reading the upstream's stream, injections toward the client
// are written into an open event stream and injections toward the server
// are POSTed with the client's session headers. Faults without an HTTP
// meaning are refused before the proxy starts (see Supports).
package httpchaos
