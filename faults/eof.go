package faults

// eof is early EOF: the server's stdin closes while the session is busy, the
// moment that makes SDKs answer into closed streams or tear down under
// running handlers.
var eofFamily = &Family{
	Name:    "eof",
	Doc:     "close the server's stdin (early EOF), by default right after the triggering message is forwarded",
	Phase:   After,
	New:     func(Values) (Action, error) { return eof{}, nil },
	Example: "eof:on=c2s:request:tools/call,inflight=3",
}

type eof struct{}

func (eof) Fire(*FireContext) Effect {
	return Effect{CloseServerInput: true, Detail: "close the server's stdin"}
}
