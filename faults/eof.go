package faults

// eof is early EOF: the server's stdin closes while the session is busy, the
// moment that makes SDKs answer into closed streams or tear down under
// running handlers. Over HTTP it is a cut connection, which a real network
// cut ends at both sides: the server sees its client leave.
var eofFamily = &Family{
	Name:  "eof",
	Doc:   "close the server's stdin (early EOF), by default right after the triggering message is forwarded; over HTTP, cut the connection or event stream carrying it, at both ends",
	Phase: After,
	Params: []Param{
		streamParam("cut that stream"),
		serverSideParam,
	},
	New:     func(v Values) (Action, error) { return eof{newCutTarget(v)}, nil },
	Example: "eof:on=c2s:request:tools/call,inflight=3",
}

type eof struct{ target cutTarget }

func (e eof) Fire(*FireContext) Effect {
	return e.target.apply(Effect{CloseServerInput: true, Detail: "close the server's stdin"})
}
