package faults

import "fmt"

// forgeOrigin sends the client's own request on with the Host and Origin a
// page of a foreign site would send: the rewrite foreign-origin makes on
// requests of mcpchaos's own, made here on the client's, so that a user
// relaying their own client (mcpchaos proxy) sees what the server does
// with each header and what their client does when the server refuses.
// Each forgery is judged as foreign-origin's is (the rebinding checker):
// served is a finding naming the check that is missing.
var forgeOriginFamily = &Family{
	Name: "forge-origin",
	Doc: "send the client's own request on with a forged Host or Origin, as a page of a foreign site sends it through DNS rebinding: a foreign Host, a foreign Origin, Origin: null, or both (the server must refuse it, 403 for an invalid Origin, and the client is told what it answered); " +
		"default on=c2s:request, the first request (HTTP only)",
	Phase: Before,
	On:    "c2s:request",
	Params: []Param{{Name: "forge", Type: TypeChoice, Default: "rebinding", Choices: ForeignForgeries,
		Doc: "which header: host (a foreign Host, the client's Origin dropped), origin (a foreign Origin, the true Host), null-origin (Origin: null), or rebinding (Host and Origin foreign)"}},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		return forgeOrigin{forge: v.String("forge")}, nil
	},
	Example:  "forge-origin:on=c2s:request:tools/call,forge=origin",
	HTTPOnly: true,
}

type forgeOrigin struct{ forge string }

func (f forgeOrigin) Fire(*FireContext) Effect {
	return Effect{ForgeOrigin: f.forge, Detail: fmt.Sprintf("send the message on with a forged Host or Origin (%s), as a page of a foreign site would", f.forge)}
}
