package faults

import (
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/wire"
)

// earlyRequest sends the server a request before the client has said
// notifications/initialized: the spec asks clients to wait, but a server
// meets such requests from eager clients, and must answer them (a result or
// an error), not crash or leave them hanging.
var earlyRequestFamily = &Family{
	Name:  "early-request",
	Doc:   "inject a request toward the server before the client's notifications/initialized reaches it (default on=c2s:notification:notifications/initialized); the relay swallows the answer and the judge holds the server to giving one; skipped in the stateless 2026-07-28 era, which has no handshake",
	Phase: Before,
	On:    "c2s:notification:notifications/initialized",
	Params: []Param{
		{Name: "method", Type: TypeString, Default: "tools/list", Doc: "the request's method; it is sent with empty params, so pick one that needs none (tools/list, prompts/list, resources/list, ping) unless the error is the point; initialize is sent with the params of a well-formed initialize (a second handshake in the session)"},
	},
	New: func(v Values) (Action, error) {
		m := v.String("method")
		if strings.HasPrefix(m, "notifications/") {
			return nil, fmt.Errorf("method: %q is a notification; early-request sends a request (tools/list, prompts/list, resources/list, ping, ...)", m)
		}
		return earlyRequest{method: m}, nil
	},
	Example: "early-request:method=prompts/list",
}

type earlyRequest struct{ method string }

func (r earlyRequest) Fire(c *FireContext) Effect {
	if c.Era == wire.Stateless {
		return Effect{Skipped: true, Detail: "skipped: the client speaks the stateless 2026-07-28 protocol, which has no initialize handshake to come before"}
	}
	id := c.InjectID()
	params := "{}"
	if r.method == "initialize" {
		params = secondInitialize
	}
	return Effect{
		Inject: []Injection{{Dir: wire.ToServer, Raw: injectedRequest(id, r.method, params)}},
		Detail: fmt.Sprintf("inject %s (id %s) toward the server", r.method, id),
	}
}

// secondInitialize is the params of the initialize early-request sends
// when told to: well formed, so that what the server does with a second
// handshake in a session is the point, not its params.
const secondInitialize = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpchaos-second-initialize","version":"1.0.0"}}`
