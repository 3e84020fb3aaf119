package faults

import "strings"

// foreignOrigin sends the server, beside the client's session, the request
// a page of another site opens a session with when DNS rebinding has made
// its name point at the user's machine: an initialize (server/discover in
// the stateless era) with a foreign Host, a foreign Origin, Origin: null,
// or both foreign at once. A local server must refuse each before any
// method runs: MCP 2025-11-25 (Basic › Transports › Streamable HTTP ›
// Security Warning) says servers MUST validate Origin and answer an invalid
// one with 403, and SHOULD bind only to localhost; the SDKs' rebinding
// advisories (TypeScript GHSA-w48q-cv73-mx4w, Python GHSA-9h52-p55h-vw2f)
// added Host checks too. The judge's rebinding checker reads what the
// server answered each (wire.EventForeign).
var foreignOriginFamily = &Family{
	Name: "foreign-origin",
	Doc: "send the server, on exchanges of mcpchaos's own, the handshake a page of a foreign site sends through DNS rebinding: initialize (server/discover in the stateless era) with the client's credentials " +
		"but a foreign Host, a foreign Origin, Origin: null, or both foreign, each of which a local server must refuse (403 for an invalid Origin); a session one of them opens is ended (DELETE); " +
		"by default all four, right after the first answer, the handshake's (default on=s2c:response; HTTP only; skipped for a server that is not on a loopback address)",
	Phase: After,
	On:    "s2c:response",
	Params: []Param{forgeParam(ForeignForgeries,
		"which request: host (a foreign Host, no Origin), origin (a foreign Origin, the true Host), null-origin (Origin: null), rebinding (Host and Origin foreign, as a rebound page sends), or all four in turn")},
	New:      func(v Values) (Action, error) { return foreignOrigin{forge: forged(v, ForeignForgeries)}, nil },
	Example:  "foreign-origin:forge=rebinding",
	HTTPOnly: true,
}

// ForeignForgeries are the requests foreign-origin can send, in the order
// forge=all sends them.
var ForeignForgeries = []string{"host", "origin", "null-origin", "rebinding"}

type foreignOrigin struct{ forge []string }

func (f foreignOrigin) Fire(*FireContext) Effect {
	return Effect{Foreign: f.forge, Detail: "send the server the handshake of a foreign page: " + strings.Join(f.forge, ", ")}
}

// forgeParam is the forge= parameter of a fault that sends requests of
// its own, one of each of forgeries or all of them (the default).
func forgeParam(forgeries []string, doc string) Param {
	return Param{Name: "forge", Type: TypeChoice, Default: "all", Choices: append([]string{"all"}, forgeries...), Doc: doc}
}

// forged is what forge= asks of forgeries.
func forged(v Values, forgeries []string) []string {
	if forge := v.String("forge"); forge != "all" {
		return []string{forge}
	}
	return forgeries
}

// usesFamily reports whether one of sc's faults is of family f.
func usesFamily(sc Scenario, f *Family) bool {
	for _, spec := range sc.Faults {
		if spec == f.Name || strings.HasPrefix(spec, f.Name+":") {
			return true
		}
	}
	return false
}
