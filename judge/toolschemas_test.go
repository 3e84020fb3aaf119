package judge

import (
	"slices"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The tool-schemas checker (issue 40): arguments that break a tool's
// inputSchema answered with a success, and structuredContent that breaks
// its outputSchema.
func TestToolSchemas(t *testing.T) {
	const listing = `{"jsonrpc":"2.0","id":1,"result":{"tools":[` +
		`{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]},` +
		`"outputSchema":{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}},` +
		`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},` +
		`{"name":"remote","inputSchema":{"type":"object","$ref":"https://example.com/schema.json"}}]}}`
	list := func(b *tb) {
		b.call("1", "tools/list")
		b.replyRaw(listing)
	}
	call := func(b *tb, id, args string) int64 {
		seq := b.recv("c2s", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":`+args+`}}`)
		b.fwd("c2s", seq)
		return seq
	}
	runJudgeCases(t, []judgeCase{
		{
			name: "valid arguments, conforming output: nothing",
			build: func(b *tb) {
				list(b)
				call(b, "2", `"add","arguments":{"a":1,"b":2}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":{"sum":3}}}`)
				b.finish()
			},
		},
		{
			name: "bad arguments refused: a tool error, a JSON-RPC error; nothing",
			build: func(b *tb) {
				list(b)
				call(b, "2", `"echo","arguments":{"text":7}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"text must be a string"}],"isError":true}}`)
				call(b, "3", `"echo"`)
				b.replyRaw(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params"}}`)
				b.finish()
			},
		},
		{
			name: "bad arguments answered as a success: input-not-validated, once per tool",
			build: func(b *tb) {
				list(b)
				call(b, "2", `"echo","arguments":{"text":{"mcpchaos":true}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[object Object]"}]}}`)
				call(b, "3", `"echo"`)
				b.replyRaw(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"undefined"}]}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityWarning,
				Message: "tool echo answered 2 calls whose arguments break its inputSchema with a successful result, where it must refuse them (a JSON-RPC error, or a result with isError): /arguments/text: got object, want string",
				Request: &reports.Request{ID: "2", Method: "tools/call", Tool: "echo"}, Seqs: seqs(7, 9, 11, 13)}},
		},
		{
			name: "output that breaks the outputSchema, or is missing: output-schema",
			build: func(b *tb) {
				list(b)
				call(b, "2", `"add","arguments":{"a":1,"b":2}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":{"sum":"3"}}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError,
				Message: "tool add answered 1 call with a result that does not conform to its outputSchema: /result/structuredContent/sum: got string, want integer",
				Request: &reports.Request{ID: "2", Method: "tools/call", Tool: "add"}, Seqs: seqs(7, 9)}},
		},
		{
			name: "a schema the judge cannot compile (a remote $ref), a tool never listed: nothing",
			build: func(b *tb) {
				list(b)
				call(b, "2", `"remote","arguments":{"x":1}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
				call(b, "3", `"unlisted","arguments":{"x":1}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
				b.finish()
			},
		},
	})
}

func TestCheckersDeclareTheirRules(t *testing.T) {
	for _, c := range Checkers {
		if c.Name == "" || c.Doc == "" || len(c.Reads) == 0 || len(c.Rules) == 0 || c.New == nil {
			t.Errorf("checker %+v does not say what it is, reads or cites", c)
		}
		for _, r := range c.Rules {
			if !slices.ContainsFunc(reports.Rules, func(x reports.Rule) bool { return x.ID == r }) {
				t.Errorf("checker %s cites rule %q, which reports.Rules lacks", c.Name, r)
			}
		}
	}
}

// A request whose envelope is malformed, dropped: a warning of its own, not
// a hang of a stuck handler (issue 40).
func TestMalformedRequestUnanswered(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name: "params null, dropped",
			build: func(b *tb) {
				seq := b.recv("c2s", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":null}`)
				b.fwd("c2s", seq)
				b.at(6000)
				b.finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning,
				Message: "tools/call (id 21) unanswered after 5s, the request is malformed (params null), and the server dropped it without the error JSON-RPC owes an invalid request (-32600 Invalid Request, or -32602 Invalid params)",
				Request: &reports.Request{ID: "21", Method: "tools/call"}, Seqs: seqs(3, 4)}},
		},
		{
			name: "a well-formed request a mutate fault sent on with params null, dropped: what the server got decides",
			build: func(b *tb) {
				seq := b.recv("c2s", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"echo"}}`)
				m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":null}` + "\n"))
				e := wire.Event{Type: wire.EventForwarded, Of: seq, Detail: "mutate#1"}
				e.SetMessage(wire.ToServer, &m)
				b.add(e)
				b.at(6000)
				b.finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning,
				Message: "tools/call (id 21) unanswered after 5s, the request is malformed (params null), and the server dropped it without the error JSON-RPC owes an invalid request (-32600 Invalid Request, or -32602 Invalid params)",
				Request: &reports.Request{ID: "21", Method: "tools/call", Tool: "echo"}, Seqs: seqs(3, 4)}},
		},
		{
			name: "a well-formed request unanswered is still a hang error",
			build: func(b *tb) {
				b.call("21", "tools/call")
				b.at(6000)
				b.finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError,
				Message: "tools/call (id 21) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown",
				Request: &reports.Request{ID: "21", Method: "tools/call"}, Seqs: seqs(3, 4)}},
		},
	})
}

func TestMalformedRequest(t *testing.T) {
	for raw, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`:                                  "",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`:                                                        "no params",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                                                        "",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`:                                          "params null",
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":[]}`:                                           "params an array",
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":7}`:                                                   "params neither an object nor an array",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":42}}`:                                   "a tool name that is not a string",
		`{"jsonrpc":"2.0","id":1,"method":"mcpchaos/x","params":{"name":42}}`:                                   "",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"t":"\ud800x"}}}`:      "a lone surrogate escape in a string, which I-JSON forbids (RFC 7493 §2.1) and RFC 8259 §8.2 leaves to the receiver",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"t":"x\udc00"}}}`:      "a lone surrogate escape in a string, which I-JSON forbids (RFC 7493 §2.1) and RFC 8259 §8.2 leaves to the receiver",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"t":"\ud83d\ude00"}}}`: "",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"t":"\\ud800"}}}`:      "",
	} {
		b := newTB()
		seq := b.recv("c2s", raw)
		if got := malformedRequest(&b.evs[seq-1]); got != want {
			t.Errorf("malformedRequest(%s) = %q, want %q", raw, got, want)
		}
	}
}
