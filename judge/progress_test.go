package judge

import (
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Progress is liveness (issue 9): @modelcontextprotocol/server-everything's
// trigger-long-running-operation reports progress every 2s for 10s. The MCP
// timeout rules let a client restart a request's timeout on each progress
// notification, up to a maximum; a judge that ignores progress calls the
// tool hung at the 5s deadline.

// progressCall is a tools/call with a progress token, forwarded.
func (b *tb) progressCall(id, token string) int64 {
	seq := b.recv("c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"_meta":{"progressToken":%q},"name":"slow","arguments":{}}}`, id, token))
	b.fwd("c2s", seq)
	return seq
}

// progress is the server reporting progress for token, relayed.
func (b *tb) progress(token string, n int) int64 {
	return b.replyRaw(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":%d,"total":5}}`, token, n))
}

func TestJudgeProgressIsLiveness(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name: "progress every 2s for 10s, then the answer: no hang",
			build: func(b *tb) {
				b.progressCall("1", "p1")
				for i := 1; i <= 5; i++ {
					b.at(float64(2000*i)).progress("p1", i)
				}
				b.at(10001).reply("1")
				b.at(10100).finish()
			},
		},
		{
			name: "progress that stops is a hang, and the message says when it stopped",
			build: func(b *tb) {
				b.progressCall("1", "p1")    // 3, 4
				b.at(2000).progress("p1", 1) // 5, 6
				b.at(4000).progress("p1", 2) // 7, 8
				id := b.at(9000).probe(1, 3) // 9
				b.at(9001).probeAnswer(id)   // 10, 11
				b.at(12000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: &reports.Request{ID: "1", Method: "tools/call", Tool: "slow"}, Seqs: seqs(3, 4, 7, 9, 10),
				Message: "tools/call (id 1) unanswered after it made progress and then stopped: 2 progress notifications, the last at 4s, then none for 5s; the server answered a liveness ping, so its receive loop runs but the handler is stuck"}},
		},
		{
			name: "still open when the transcript ends within the deadline of its last progress: not judged",
			build: func(b *tb) {
				b.progressCall("1", "p1")
				b.at(4000).progress("p1", 1)
				b.at(6000).progress("p1", 2)
				b.at(8000).clientClosed()
				b.end("interrupted")
			},
			notes: []string{"unanswered when the transcript ends, before the deadline"},
		},
		{
			name: "progress never pushes the deadline past the maximum",
			build: func(b *tb) {
				b.progressCall("1", "p1")
				for i := 1; i <= 40; i++ {
					b.at(float64(2000*i)).progress("p1", i)
				}
				b.at(90000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: &reports.Request{ID: "1", Method: "tools/call", Tool: "slow"}, Seqs: seqs(3, 4, 3+2*40),
				Message: "tools/call (id 1) unanswered after 1m0s, the maximum any request may run (--max-deadline), although it made progress (40 progress notifications, the last at 1m20s); no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			name: "progress for another token keeps nothing alive",
			build: func(b *tb) {
				b.progressCall("1", "p1")
				b.at(2000).progress("other", 1)
				b.at(4000).progress("other", 2)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: &reports.Request{ID: "1", Method: "tools/call", Tool: "slow"}, Seqs: seqs(3, 4),
				Message: "tools/call (id 1) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			name: "progress for a token no open request holds, once its request was answered, changes nothing",
			build: func(b *tb) {
				b.progressCall("1", "p1")
				b.at(100).reply("1")
				b.at(200).progress("p1", 1)
				b.at(300).call("2", "tools/call")
				b.at(400).progress("p1", 2)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("2", "tools/call"), Seqs: seqs(9, 10),
				Message: "tools/call (id 2) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
	})
}

// The session event carries the maximum; a shorter one ends progress sooner.
func TestJudgeProgressMaxDeadlineFromSession(t *testing.T) {
	b := &tb{}
	seed := testSeed
	b.add(wire.Event{Type: wire.EventSession, Seed: &seed, Scenario: testScenario, Role: "server",
		DeadlineMS: 5000, MaxDeadlineMS: 8000, GraceMS: 3000, Repro: testRepro})
	b.progressCall("1", "p1")
	for i := 1; i <= 6; i++ {
		b.at(float64(2000*i)).progress("p1", i)
	}
	b.at(20000).finish()
	fs := Findings(b.evs)
	if len(fs) != 1 || fs[0].Kind != reports.KindHang {
		t.Fatalf("findings = %+v, want one hang", shorten(fs))
	}
	want := "tools/call (id 1) unanswered after 8s, the maximum any request may run (--max-deadline), although it made progress (6 progress notifications, the last at 12s); no liveness ping was sent, so whether its receive loop runs is unknown"
	if fs[0].Message != want {
		t.Errorf("message:\n got %s\nwant %s", fs[0].Message, want)
	}
}
