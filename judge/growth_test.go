package judge

import (
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
)

// The input-cost checker (issue 40): a growth series whose answer time
// outgrows its input.
func TestInputCost(t *testing.T) {
	// step sends step i of a series at ms, of size bytes; answerAt answers
	// it at ms (never, when negative).
	step := func(b *tb, id string, i, size int, ms, answerAt float64) {
		b.at(ms)
		seq := b.recv("c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"resources/read","params":{"uri":"users://a,a/","_meta":{"dev.mcpchaos/growth":{"series":"resources/read users://{id}","step":%d,"size":%d}}}}`, id, i, size))
		b.fwd("c2s", seq)
		if answerAt >= 0 {
			b.at(answerAt)
			b.replyRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32002,"message":"Resource not found"}}`, id))
		}
	}
	runJudgeCases(t, []judgeCase{
		{
			name: "linear: nothing, however slow",
			build: func(b *tb) {
				step(b, "1", 0, 1000, 0, 100)
				step(b, "2", 1, 4000, 200, 600)
				step(b, "3", 2, 16000, 700, 2300)
				b.finish()
			},
		},
		{
			name: "noise under the floor: nothing",
			build: func(b *tb) {
				step(b, "1", 0, 20, 0, 0.2)
				step(b, "2", 1, 24, 10, 200)
				b.finish()
			},
		},
		{
			name: "exponential in the list items: cost-grows-with-input, at the first step that shows it",
			build: func(b *tb) {
				step(b, "1", 0, 20, 0, 1)
				step(b, "2", 1, 24, 10, 15)
				step(b, "3", 2, 28, 20, 100)
				step(b, "4", 3, 32, 200, 1500)
				b.finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning, Request: req("4", "resources/read"), Seqs: seqs(15, 17),
				Message: "resources/read users://{id}: the answer time grows faster than the input (20 B: 1ms, 24 B: 5ms, 28 B: 80ms, 32 B: 1.3s); its time grew 16-fold for 1.14-fold the input. A request a few bytes longer costs many times the time: one small request ties the server up, and every client waits with it"}},
		},
		{
			name: "one slow answer after flat ones is not a trend (a tool's network lookup)",
			build: func(b *tb) {
				step(b, "1", 0, 1024, 0, 3)
				step(b, "2", 1, 4096, 10, 13)
				step(b, "3", 2, 16384, 20, 23)
				step(b, "4", 3, 61440, 30, 5030)
				b.finish()
			},
		},
		{
			name: "a repeated step counts its faster answer: one pause is not a trend",
			build: func(b *tb) {
				step(b, "1", 0, 1000, 0, 1)
				step(b, "2", 1, 4000, 10, 600)
				step(b, "3", 1, 4000, 700, 705)
				b.finish()
			},
		},
		{
			name: "a step never answered after a jump: the deadline passed",
			build: func(b *tb) {
				step(b, "1", 0, 20, 0, 1)
				step(b, "2", 1, 24, 10, 15)
				step(b, "3", 2, 28, 20, 100)
				step(b, "4", 3, 32, 200, -1)
				b.at(9000).finish()
			},
			want: []short{
				{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("4", "resources/read"), Seqs: seqs(15, 16),
					Message: "resources/read (id 4) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"},
				{Kind: reports.KindHang, Severity: reports.SeverityWarning, Request: req("4", "resources/read"), Seqs: seqs(15),
					Message: "resources/read users://{id}: the answer time grows faster than the input (20 B: 1ms, 24 B: 5ms, 28 B: 80ms, 32 B: unanswered); the step after one whose time had jumped 16-fold was never answered. A request a few bytes longer costs many times the time: one small request ties the server up, and every client waits with it"},
			},
		},
	})
}
