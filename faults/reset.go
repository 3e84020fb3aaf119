package faults

// reset resets the client's TCP connection (RST, not an orderly close):
// what a crashed server, a load balancer or a dropped NAT entry looks like
// to an HTTP client, which surfaces it as ECONNRESET rather than as the end
// of a body.
var resetFamily = &Family{
	Name: "reset",
	Doc: "reset the client's connection carrying the message (TCP RST): before it is sent on, the server never gets it; " +
		"with position=after, the server gets it and its answer never reaches the client (HTTP only); default on=c2s:request:tools/call",
	Phase: Before,
	On:    "c2s:request:tools/call",
	Params: []Param{
		streamParam("reset its connection"),
		serverSideParam,
	},
	New:      func(v Values) (Action, error) { return reset{newCutTarget(v)}, nil },
	Example:  "reset:on=c2s:request:tools/call",
	HTTPOnly: true,
}

type reset struct{ target cutTarget }

func (r reset) Fire(*FireContext) Effect {
	return r.target.apply(Effect{Respond: &Respond{Reset: true}, Detail: "reset the client's connection"})
}
