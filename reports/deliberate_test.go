package reports

import (
	"testing"
)

// The duplicate and corrupt faults deliver frames the client never sent
// that way. What a correct server does with them (answer a copied request
// again, answer a broken line with a parse error) is not its finding.
func TestFramesFaultsDeliveredOnPurpose(t *testing.T) {
	const (
		call        = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}`
		split       = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/ca\nll\",\"params\":{}}"
		parseError  = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`
		replaced    = "replaced by fault corrupt#1"
		unknownNull = "the server sent 2 answers for ids never requested (null, null); an error with id null answers an unparseable frame, and none was sent"
	)
	runJudgeCases(t, []judgeCase{
		{
			name: "a copied request answered twice",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.fwd("c2s", seq)
				b.fwd("c2s", seq) // duplicate#1's copy
				b.at(10).reply("5")
				b.at(11).reply("5")
				b.at(100).finish()
			},
		},
		{
			name: "a copied request answered once (the server ignores the reused id)",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.fwd("c2s", seq)
				b.fwd("c2s", seq)
				b.at(10).reply("5")
				b.at(100).finish()
			},
		},
		{
			name: "without a copy, a second answer is still a duplicate",
			build: func(b *tb) {
				b.call("5", "tools/call")
				b.at(10).reply("5")
				b.at(11).reply("5")
				b.at(100).finish()
			},
			want: []short{{Kind: KindDuplicateResponse, Severity: SeverityError, Request: req("5", "tools/call"), Seqs: seqs(5, 7),
				Message: "the server answered tools/call (id 5) more than once"}},
		},
		{
			name: "a request split in two lines by corrupt, each answered with a parse error, one before the injection is recorded",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.drop("c2s", seq, replaced)
				b.at(1).recv("s2c", parseError)
				b.inject("c2s", "corrupt#1", split)
				b.at(2).recv("s2c", parseError)
				b.at(100).finish()
			},
		},
		{
			name: "parse errors nothing explains are unknown",
			build: func(b *tb) {
				b.call("5", "tools/call")
				b.at(1).reply("5")
				b.at(2).recv("s2c", parseError)
				b.at(3).recv("s2c", parseError)
				b.at(1000).finish()
			},
			want: []short{{Kind: KindUnknownResponse, Severity: SeverityError, Request: req("null", ""), Seqs: seqs(7, 8), Message: unknownNull}},
		},
	})
}
