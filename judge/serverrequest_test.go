package judge

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
)

// A server's handler that asks the client something (sampling, elicitation,
// roots) waits for the answer. When a fault kept that request from the
// client, the call it serves stays open for a reason of mcpchaos's making:
// not a hang. Found on @modelcontextprotocol/server-everything 0.6.2 over
// the legacy HTTP+SSE transport, whose sampleLLM tool waited for ever on a
// sampling/createMessage sent down the stream cut-before-result had cut.
func TestHandlerWaitingOnAServerRequestAFaultDropped(t *testing.T) {
	const sampling = `{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":100}}`
	stuck := "tools/call (id 18) unanswered after 5s; the server answered a liveness ping, so its receive loop runs but the handler is stuck"
	runJudgeCases(t, []judgeCase{
		{
			name: "dropped after the call: the handler waits on it",
			build: func(b *tb) {
				b.call("18", "tools/call")
				s := b.at(10).recv("s2c", sampling)
				b.drop("s2c", s, "the client's stream was cut by fault eof#1")
				id := b.at(5000).probe(1, 3)
				b.at(5001).probeAnswer(id)
				b.at(10000).finish()
			},
			notes: []string{"tools/call (id 18) unanswered, but the server sent sampling/createMessage (id 0) while it was open, and mcpchaos did not deliver it (the client's stream was cut by fault eof#1): the handler may be waiting for its answer"},
		},
		{
			name: "one dropped before the call and one after: the later one excuses it",
			build: func(b *tb) {
				s := b.recv("s2c", sampling)
				b.drop("s2c", s, "dropped by fault drop#1")
				b.at(10).call("18", "tools/call")
				s = b.at(20).recv("s2c", `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`)
				b.drop("s2c", s, "the client's stream was cut by fault eof#1")
				id := b.at(5010).probe(1, 5)
				b.at(5011).probeAnswer(id)
				b.at(10000).finish()
			},
			notes: []string{"tools/call (id 18) unanswered, but the server sent roots/list (id 1) while it was open, and mcpchaos did not deliver it (the client's stream was cut by fault eof#1)"},
		},
		{
			name: "delivered and answered: the call is owed",
			build: func(b *tb) {
				b.call("18", "tools/call")
				s := b.at(10).recv("s2c", sampling)
				b.fwd("s2c", s)
				a := b.at(20).recv("c2s", `{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
				b.fwd("c2s", a)
				id := b.at(5000).probe(1, 3)
				b.at(5001).probeAnswer(id)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("18", "tools/call"), Seqs: seqs(3, 4, 9, 10), Message: stuck}},
		},
		{
			name: "dropped before the call was sent: the call is owed",
			build: func(b *tb) {
				s := b.recv("s2c", sampling)
				b.drop("s2c", s, "the client's stream was cut by fault eof#1")
				b.at(10).call("18", "tools/call")
				id := b.at(5010).probe(1, 5)
				b.at(5011).probeAnswer(id)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("18", "tools/call"), Seqs: seqs(5, 6, 7, 8), Message: stuck}},
		},
		{
			name: "dropped after the call was overdue: the call is owed",
			build: func(b *tb) {
				b.call("18", "tools/call")
				id := b.at(5000).probe(1, 3)
				b.at(5001).probeAnswer(id)
				s := b.at(6000).recv("s2c", sampling)
				b.drop("s2c", s, "the client's stream was cut by fault eof#1")
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("18", "tools/call"), Seqs: seqs(3, 4, 5, 6), Message: stuck}},
		},
	})
}
