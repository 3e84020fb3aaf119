package faults

import (
	"encoding/json"
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// serverRequest asks the client something it did not expect to be asked
// now: a roots/list, sampling or elicitation request in the middle of a tool
// call is what clients that serve server requests from the loop waiting on
// the call deadlock on, and what clients without the capability must still
// answer (with an error) rather than ignore.
var serverRequestFamily = &Family{
	Name:  "server-request",
	Doc:   "inject a well-formed server-to-client request toward the client (default on=c2s:request:tools/call: right after a tool call reaches the server); the relay swallows the answer and the judge holds the client to giving one; skipped in the stateless 2026-07-28 era, which has no server-to-client requests",
	Phase: After,
	On:    "c2s:request:tools/call",
	Params: []Param{
		{Name: "method", Type: TypeChoice, Choices: serverRequestMethods, Default: "roots/list", Doc: "the request to send; its params are valid for MCP 2025-11-25"},
		streamParam("write the request into that stream, where a server asks what relates to no call"),
	},
	New: func(v Values) (Action, error) {
		return serverRequest{method: v.String("method"), stream: v.String("stream")}, nil
	},
	Example: "server-request:method=sampling/createMessage",
}

var serverRequestMethods = []string{"roots/list", "sampling/createMessage", "elicitation/create", "ping"}

// serverRequestParams are the params of each method ("" for none), minimal
// and valid for MCP 2025-11-25. The elicitation leaves out mode, which that
// revision makes optional for a form, so 2025-06-18 clients accept it too.
var serverRequestParams = map[string]string{
	"roots/list":             "",
	"sampling/createMessage": `{"messages":[{"role":"user","content":{"type":"text","text":"mcpchaos: a sampling request injected by fault server-request"}}],"maxTokens":16}`,
	"elicitation/create":     `{"message":"mcpchaos: an elicitation injected by fault server-request","requestedSchema":{"type":"object","properties":{"answer":{"type":"string"}}}}`,
	"ping":                   "",
}

type serverRequest struct{ method, stream string }

func (r serverRequest) Fire(c *FireContext) Effect {
	if c.Era == wire.Stateless {
		return Effect{Skipped: true, Detail: "skipped: the client speaks the stateless 2026-07-28 protocol, which has no server-to-client requests"}
	}
	id := c.InjectID()
	return Effect{
		Stream: r.stream,
		Inject: []Injection{{Dir: wire.ToClient, Raw: injectedRequest(id, r.method, serverRequestParams[r.method])}},
		Detail: fmt.Sprintf("inject %s (id %s) toward the client", r.method, id),
	}
}

// injectedRequest is the frame of a request mcpchaos sends; params is JSON
// text or "" for none.
func injectedRequest(id, method, params string) []byte {
	m, _ := json.Marshal(method) // JSON's quoting, not Go's: \x escapes are not JSON
	s := `{"jsonrpc":"2.0","id":` + id + `,"method":` + string(m)
	if params != "" {
		s += `,"params":` + params
	}
	return []byte(s + "}\n")
}
