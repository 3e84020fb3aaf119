package judge

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The listed-items checker (issue 40): a tool, prompt or resource the
// server listed and then answered as unknown.
func TestListedItems(t *testing.T) {
	use := func(b *tb, id, method, params string) int64 {
		seq := b.recv("c2s", `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+`}`)
		b.fwd("c2s", seq)
		return seq
	}
	tools := func(b *tb) {
		b.call("1", "tools/list")
		b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get-forecast","inputSchema":{"type":"object"}},{"name":"read_file","inputSchema":{"type":"object"}}]}}`)
	}
	runJudgeCases(t, []judgeCase{
		{
			name: "a listed tool answered as unknown, by a JSON-RPC error and by a tool error: listed-not-found, once",
			build: func(b *tb) {
				tools(b)
				use(b, "2", "tools/call", `{"name":"get-forecast","arguments":{}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: get-forecast"}}`)
				use(b, "3", "tools/call", `{"name":"get-forecast","arguments":{}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Tool get-forecast not found"}],"isError":true}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityWarning,
				Message: `the server listed tool "get-forecast" (tools/list, id 1), then answered 2 tools/call requests for it (id 2) as one it does not know: "Unknown tool: get-forecast"; a client can only use what the list gives it`,
				Request: &reports.Request{ID: "2", Method: "tools/call", Tool: "get-forecast"}, Seqs: seqs(5, 7, 9)}},
		},
		{
			name: "what a tool could not find is not the tool not found; an unlisted name is the probe's own: nothing",
			build: func(b *tb) {
				tools(b)
				use(b, "2", "tools/call", `{"name":"read_file","arguments":{"path":"/nope"}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"tool read_file failed: file not found"}],"isError":true}}`)
				use(b, "3", "tools/call", `{"name":"read_file","arguments":{"path":"/x"}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"read_file: no such file or directory"}}`)
				use(b, "4", "tools/call", `{"name":"mcpchaos-no-such-tool","arguments":{}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown tool: mcpchaos-no-such-tool"}}`)
				b.finish()
			},
		},
		{
			name: "a list_changed between the listing and the use lets the item go",
			build: func(b *tb) {
				tools(b)
				b.replyRaw(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
				use(b, "2", "tools/call", `{"name":"get-forecast","arguments":{}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: get-forecast"}}`)
				b.finish()
			},
		},
		{
			name: "a listed resource answered -32002, a listed prompt answered not found",
			build: func(b *tb) {
				b.call("1", "resources/list")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///a.txt","name":"a"}]}}`)
				use(b, "2", "resources/read", `{"uri":"file:///a.txt"}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///a.txt"}}}`)
				b.call("3", "prompts/list")
				b.replyRaw(`{"jsonrpc":"2.0","id":3,"result":{"prompts":[{"name":"review"}]}}`)
				use(b, "4", "prompts/get", `{"name":"review"}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Prompt 'review' not found"}}`)
				b.finish()
			},
			want: []short{
				{Kind: reports.KindProtocolViolation, Severity: reports.SeverityWarning,
					Message: `the server listed resource "file:///a.txt" (resources/list, id 1), then answered a resources/read of it (id 2) as one it does not know: "Resource not found"; a client can only use what the list gives it`,
					Request: req("2", "resources/read"), Seqs: seqs(5, 7, 9)},
				{Kind: reports.KindProtocolViolation, Severity: reports.SeverityWarning,
					Message: `the server listed prompt "review" (prompts/list, id 3), then answered a prompts/get of it (id 4) as one it does not know: "Prompt 'review' not found"; a client can only use what the list gives it`,
					Request: req("4", "prompts/get"), Seqs: seqs(13, 15, 17)},
			},
		},
	})
	t.Run("an id a fault gave a second request is not judged", func(t *testing.T) {
		b := newTB()
		tools(b)
		use(b, "2", "tools/call", `{"name":"get-forecast","arguments":{}}`)
		seq := b.recv("c2s", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}`)
		m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}` + "\n"))
		e := wire.Event{Type: wire.EventForwarded, Of: seq, Detail: "id-collision#1"}
		e.SetMessage(wire.ToServer, &m)
		b.add(e)
		b.replyRaw(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: get-forecast"}}`)
		b.finish()
		for _, f := range Session(b.evs).Findings {
			if f.Rule == reports.RuleListedNotFound {
				t.Errorf("finding %q, want none", f.Message)
			}
		}
	})
}
