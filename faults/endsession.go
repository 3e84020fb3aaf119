package faults

// endSession ends the client's session at the server, as a DELETE with its
// Mcp-Session-Id does: the server must stop the session's handlers without
// crashing (the transport closed under running handlers, bug class 3), and
// from then on answer the session's requests with 404, on which a client
// must start a new session (MCP 2025-11-25, Transports: Session Management).
// Fired before a request, the request meets an expired session.
var endSessionFamily = &Family{
	Name: "end-session",
	Doc: "end the client's session at the server with a DELETE carrying its Mcp-Session-Id, as if the session expired; " +
		"by default right after the triggering message is sent on, while it is in flight; with position=before the message meets the ended session " +
		"(HTTP only; skipped on a session without an id); default on=c2s:request:tools/call",
	Phase:    After,
	On:       "c2s:request:tools/call",
	New:      func(Values) (Action, error) { return endSession{}, nil },
	Example:  "end-session:on=c2s:request:tools/call,inflight=3",
	HTTPOnly: true,
}

type endSession struct{}

func (endSession) Fire(*FireContext) Effect {
	return Effect{EndSession: true, Detail: "end the session at the server (DELETE)"}
}
