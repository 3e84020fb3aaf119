// Package rawmcp is a minimal MCP server over stdio, written straight on
// newline-delimited JSON-RPC so that the example servers next to it can each
// plant one bug that a full SDK would not let them write.
//
// A Server reads one message a line, runs every request in its own goroutine,
// writes each message as one line through one locked writer, speaks both
// protocol eras (stateful initialize up to 2025-11-25, stateless 2026-07-28
// with server/discover and per-request _meta), can send requests to the client
// (roots/list) and wait for their answers, and on stdin EOF waits a bounded
// time for running handlers before Serve returns. Each exported hook on Server
// (OnNotification, OnInitialized, OnRequest, OnStrayResponse, WriteLine,
// AtEOF, KeepPendingAtEOF, HandlerWait, ReadLines, OnBadLine) is one
// behaviour an example swaps to plant its bug; left at its zero value it is
// the correct behaviour.
package rawmcp
