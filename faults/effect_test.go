package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

// progressFrames are the injections a progress burst of n makes for token.
func progressFrames(dir wire.Direction, token string, n int, gap time.Duration) []Injection {
	var out []Injection
	for i := 1; i <= n; i++ {
		raw := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d,"message":"mcpchaos burst"}}`+"\n", token, i, n)
		out = append(out, Injection{Dir: dir, Raw: []byte(raw), Gap: gap})
	}
	return out
}

func messageFrames(dir wire.Direction, n int) []Injection {
	var out []Injection
	for i := 1; i <= n; i++ {
		raw := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"mcpchaos","data":"burst %d of %d"}}`+"\n", i, n)
		out = append(out, Injection{Dir: dir, Raw: []byte(raw)})
	}
	return out
}

func bareFrames(dir wire.Direction, method string, n int, gap time.Duration) []Injection {
	var out []Injection
	for range n {
		out = append(out, Injection{Dir: dir, Raw: []byte(`{"jsonrpc":"2.0","method":"` + method + `"}` + "\n"), Gap: gap})
	}
	return out
}

func TestEffects(t *testing.T) {
	callAnswered := []frame{
		request(c2s, "5", "tools/call", "55"),
		request(c2s, "7", "tools/call", `"tok"`),
		response(s2c, "7"),
	}
	tests := []struct {
		name   string
		specs  []string
		frames []frame
		want   []decision
	}{
		// burst: progress
		{
			name:   "progress for the request the response answers",
			specs:  []string{"burst:on=s2c:response:tools/call,count=3"},
			frames: callAnswered,
			want: []decision{{At: 3, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:response:tools/call,count=3", Effect: Effect{
				Inject: progressFrames(s2c, `"tok"`, 3, 0),
				Detail: `inject 3 notifications/progress toward the client for progress token "tok"`,
			}}},
		},
		{
			name:   "the family example",
			specs:  []string{burstFamily.Example},
			frames: callAnswered,
			want: []decision{{At: 3, Phase: Before, Label: "burst#1", Spec: burstFamily.Example, Effect: Effect{
				Inject: progressFrames(s2c, `"tok"`, 20, 0),
				Detail: `inject 20 notifications/progress toward the client for progress token "tok"`,
			}}},
		},
		{
			name:  "a number token on an error answer, with a gap",
			specs: []string{"burst:on=s2c:error,count=2,gap=25ms"},
			frames: []frame{
				request(c2s, `"r"`, "tools/call", "42"),
				errorAnswer(s2c, `"r"`),
			},
			want: []decision{{At: 2, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:error,count=2,gap=25ms", Effect: Effect{
				Inject: progressFrames(s2c, "42", 2, 25*time.Millisecond),
				Detail: `inject 2 notifications/progress toward the client for progress token 42`,
			}}},
		},
		{
			name:  "the answered request has no token: another unanswered request's",
			specs: []string{"burst:on=s2c:response,count=1"},
			frames: []frame{
				request(c2s, "5", "tools/call", "55"),
				request(c2s, "7", "tools/call", ""),
				response(s2c, "7"),
			},
			want: []decision{{At: 3, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:response,count=1", Effect: Effect{
				Inject: progressFrames(s2c, "55", 1, 0),
				Detail: `inject 1 notifications/progress toward the client for progress token 55`,
			}}},
		},
		{
			name:  "no token anywhere: skipped",
			specs: []string{"burst:on=s2c:response:tools/call"},
			frames: []frame{
				request(c2s, "7", "tools/call", ""),
				response(s2c, "7"),
			},
			want: []decision{{At: 2, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:response:tools/call", Effect: Effect{
				Detail:  "skipped: no unanswered request from the client carries a progress token",
				Skipped: true,
			}}},
		},
		{
			name:  "a skipped burst does not use up its firing",
			specs: []string{"burst:on=s2c:response,count=2"},
			frames: []frame{
				request(c2s, "1", "ping", ""),
				response(s2c, "1"),
				request(c2s, "2", "tools/call", "2"),
				response(s2c, "2"),
			},
			want: []decision{
				{At: 2, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:response,count=2", Effect: Effect{
					Detail:  "skipped: no unanswered request from the client carries a progress token",
					Skipped: true,
				}},
				{At: 4, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:response,count=2", Effect: Effect{
					Inject: progressFrames(s2c, "2", 2, 0),
					Detail: `inject 2 notifications/progress toward the client for progress token 2`,
				}},
			},
		},
		{
			name:  "a token of the server's own request is not used toward the client",
			specs: []string{"burst:on=s2c:response"},
			frames: []frame{
				request(s2c, "1", "sampling/createMessage", "9"),
				request(c2s, "7", "tools/call", ""),
				response(s2c, "7"),
			},
			want: []decision{{At: 3, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:response", Effect: Effect{
				Detail:  "skipped: no unanswered request from the client carries a progress token",
				Skipped: true,
			}}},
		},
		{
			name:  "an answered request's token is not reused later",
			specs: []string{"burst:on=s2c:notification,count=1"},
			frames: []frame{
				request(c2s, "7", "tools/call", "7"),
				response(s2c, "7"),
				notif(s2c, "notifications/message"),
			},
			want: []decision{{At: 3, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:notification,count=1", Effect: Effect{
				Detail:  "skipped: no unanswered request from the client carries a progress token",
				Skipped: true,
			}}},
		},
		{
			name:  "toward the server for the server's request",
			specs: []string{"burst:on=c2s:response:sampling/createMessage,dir=c2s,count=2"},
			frames: []frame{
				request(s2c, `"s1"`, "sampling/createMessage", "9"),
				response(c2s, `"s1"`),
			},
			want: []decision{{At: 2, Phase: Before, Label: "burst#1", Spec: "burst:on=c2s:response:sampling/createMessage,dir=c2s,count=2", Effect: Effect{
				Inject: progressFrames(c2s, "9", 2, 0),
				Detail: `inject 2 notifications/progress toward the server for progress token 9`,
			}}},
		},
		{
			name:  "dir=s2c on a client request reports progress on that request",
			specs: []string{"burst:on=c2s:request:tools/call,dir=s2c,count=2,position=after"},
			frames: []frame{
				request(c2s, "3", "tools/call", `"t3"`),
			},
			want: []decision{{At: 1, Phase: After, Label: "burst#1", Spec: "burst:on=c2s:request:tools/call,dir=s2c,count=2,position=after", Effect: Effect{
				Inject: progressFrames(s2c, `"t3"`, 2, 0),
				Detail: `inject 2 notifications/progress toward the client for progress token "t3"`,
			}}},
		},
		{
			name:  "by default a burst goes toward the client, for the client's request",
			specs: []string{"burst:on=c2s:request:tools/call,count=3"},
			frames: []frame{
				request(c2s, "3", "tools/call", `"t3"`),
			},
			want: []decision{{At: 1, Phase: Before, Label: "burst#1", Spec: "burst:on=c2s:request:tools/call,count=3", Effect: Effect{
				Inject: progressFrames(s2c, `"t3"`, 3, 0),
				Detail: `inject 3 notifications/progress toward the client for progress token "t3"`,
			}}},
		},
		{
			name:  "a progress token given in params outside _meta of a request is ignored",
			specs: []string{"burst:on=s2c:response"},
			frames: []frame{
				{c2s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"progressToken":1}}` + "\n"},
				response(s2c, "1"),
			},
			want: []decision{{At: 2, Phase: Before, Label: "burst#1", Spec: "burst:on=s2c:response", Effect: Effect{
				Detail:  "skipped: no unanswered request from the client carries a progress token",
				Skipped: true,
			}}},
		},

		// burst: other methods
		{
			name:   "log messages",
			specs:  []string{"burst:method=notifications/message,count=2,on=s2c"},
			frames: callAnswered,
			want: []decision{{At: 3, Phase: Before, Label: "burst#1", Spec: "burst:method=notifications/message,count=2,on=s2c", Effect: Effect{
				Inject: messageFrames(s2c, 2),
				Detail: "inject 2 notifications/message toward the client",
			}}},
		},
		{
			name:   "tools list_changed mid-call",
			specs:  []string{"burst:method=notifications/tools/list_changed,count=3,gap=1ms,on=c2s:request:tools/call,dir=s2c,nth=2"},
			frames: callAnswered,
			want: []decision{{At: 2, Phase: Before, Label: "burst#1", Spec: "burst:method=notifications/tools/list_changed,count=3,gap=1ms,on=c2s:request:tools/call,dir=s2c,nth=2", Effect: Effect{
				Inject: bareFrames(s2c, "notifications/tools/list_changed", 3, time.Millisecond),
				Detail: "inject 3 notifications/tools/list_changed toward the client",
			}}},
		},
		{
			name:   "a custom notification toward the server",
			specs:  []string{"burst:method=notifications/roots/list_changed,count=1,dir=c2s"},
			frames: callAnswered,
			want: []decision{{At: 1, Phase: Before, Label: "burst#1", Spec: "burst:method=notifications/roots/list_changed,count=1,dir=c2s", Effect: Effect{
				Inject: bareFrames(c2s, "notifications/roots/list_changed", 1, 0),
				Detail: "inject 1 notifications/roots/list_changed toward the server",
			}}},
		},

		// stall
		{
			name:   "stall defaults to the triggering direction, for ever",
			specs:  []string{"stall:on=s2c"},
			frames: callAnswered,
			want: []decision{{At: 3, Phase: Before, Label: "stall#1", Spec: "stall:on=s2c", Effect: Effect{
				Stall:  &Stall{Dir: s2c},
				Detail: "stop reading s2c until the session ends",
			}}},
		},
		{
			name:   "stall of a client message",
			specs:  []string{"stall"},
			frames: callAnswered,
			want: []decision{{At: 1, Phase: Before, Label: "stall#1", Spec: "stall", Effect: Effect{
				Stall:  &Stall{Dir: c2s},
				Detail: "stop reading c2s until the session ends",
			}}},
		},
		{
			name:   "stall dir, for and shrink",
			specs:  []string{"stall:on=s2c,dir=c2s,for=5s,shrink=true"},
			frames: callAnswered,
			want: []decision{{At: 3, Phase: Before, Label: "stall#1", Spec: "stall:on=s2c,dir=c2s,for=5s,shrink=true", Effect: Effect{
				Stall:  &Stall{Dir: c2s, For: 5 * time.Second, ShrinkPipe: true},
				Detail: "stop reading c2s for 5s",
			}}},
		},
		{
			name:   "stall for=forever",
			specs:  []string{"stall:dir=s2c,for=forever"},
			frames: callAnswered,
			want: []decision{{At: 1, Phase: Before, Label: "stall#1", Spec: "stall:dir=s2c,for=forever", Effect: Effect{
				Stall:  &Stall{Dir: s2c},
				Detail: "stop reading s2c until the session ends",
			}}},
		},
		{
			name:   "stall for a compound duration",
			specs:  []string{"stall:for=1m30s,position=after"},
			frames: callAnswered,
			want: []decision{{At: 1, Phase: After, Label: "stall#1", Spec: "stall:for=1m30s,position=after", Effect: Effect{
				Stall:  &Stall{Dir: c2s, For: 90 * time.Second},
				Detail: "stop reading c2s for 1m30s",
			}}},
		},

		// eof
		{
			name:   "eof closes the server's input after forwarding",
			specs:  []string{"eof:on=s2c:response"},
			frames: callAnswered,
			want: []decision{{At: 3, Phase: After, Label: "eof#1", Spec: "eof:on=s2c:response", Effect: Effect{
				CloseServerInput: true,
				Detail:           "close the server's stdin",
			}}},
		},

		// half-close
		{
			name:   "half-close defaults to s2c",
			specs:  []string{"half-close"},
			frames: callAnswered,
			want: []decision{{At: 1, Phase: After, Label: "half-close#1", Spec: "half-close", Effect: Effect{
				HalfClose: s2c,
				Detail:    "close the read end of s2c; the server's writes now fail",
			}}},
		},
		{
			name:   "half-close c2s",
			specs:  []string{"half-close:dir=c2s,on=s2c"},
			frames: callAnswered,
			want: []decision{{At: 3, Phase: After, Label: "half-close#1", Spec: "half-close:dir=c2s,on=s2c", Effect: Effect{
				HalfClose: c2s,
				Detail:    "close the read end of c2s; the client's writes now fail",
			}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runPlan(t, 1, tc.specs, tc.frames)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			for _, d := range got {
				checkInjections(t, d)
			}
		})
	}
}

// checkInjections checks that every frame a burst injects is a valid JSON-RPC
// notification of the burst's method, one line long, and that progress
// notifications carry the token and count up to the total.
func checkInjections(t *testing.T, d decision) {
	t.Helper()
	f := mustParse(t, d.Spec)[0]
	b, ok := f.Action.(burst)
	if !ok {
		if len(d.Effect.Inject) != 0 {
			t.Errorf("%s is not a burst but injected %d frames", d.Spec, len(d.Effect.Inject))
		}
		return
	}
	if strings.HasPrefix(d.Effect.Detail, "skipped:") {
		if len(d.Effect.Inject) != 0 {
			t.Errorf("a skipped burst injected %d frames", len(d.Effect.Inject))
		}
		return
	}
	if len(d.Effect.Inject) != b.count {
		t.Errorf("%d injections; want count=%d", len(d.Effect.Inject), b.count)
	}
	for i, inj := range d.Effect.Inject {
		m := wire.Classify(inj.Raw)
		if m.Kind != wire.Notification || m.Problem != "" {
			t.Errorf("injection %d %q classifies as %v (%s); want a notification", i, inj.Raw, m.Kind, m.Problem)
		}
		if m.Method != b.method {
			t.Errorf("injection %d method = %q; want %q", i, m.Method, b.method)
		}
		if !bytes.HasSuffix(inj.Raw, []byte("\n")) || bytes.Count(inj.Raw, []byte("\n")) != 1 {
			t.Errorf("injection %d %q is not one newline-terminated line", i, inj.Raw)
		}
		if !json.Valid(inj.Raw) {
			t.Errorf("injection %d %q is not JSON", i, inj.Raw)
		}
		if inj.Gap != b.gap {
			t.Errorf("injection %d gap = %v; want %v", i, inj.Gap, b.gap)
		}
		if b.dir != 0 && inj.Dir != b.dir {
			t.Errorf("injection %d dir = %v; want %v", i, inj.Dir, b.dir)
		}
		if b.method != "notifications/progress" {
			if m.ProgressToken != "" {
				t.Errorf("injection %d has a progress token %s", i, m.ProgressToken)
			}
			continue
		}
		if !strings.Contains(d.Effect.Detail, "progress token "+m.ProgressToken) || m.ProgressToken == "" {
			t.Errorf("injection %d token %q is not the one the detail %q names", i, m.ProgressToken, d.Effect.Detail)
		}
		var n struct {
			Params struct {
				Progress, Total int
			}
		}
		if err := json.Unmarshal(inj.Raw, &n); err != nil {
			t.Fatalf("injection %d: %v", i, err)
		}
		if n.Params.Progress != i+1 || n.Params.Total != b.count {
			t.Errorf("injection %d progress %d of %d; want %d of %d", i, n.Params.Progress, n.Params.Total, i+1, b.count)
		}
	}
}

// TestBurstTokenFallbackIsSeeded: when the triggering message answers no
// request with a token, the token is one of the receiver's unanswered
// requests', chosen by the seed: every seed picks an open one, the choice
// repeats for a seed, and across seeds more than one gets picked.
func TestBurstTokenFallbackIsSeeded(t *testing.T) {
	frames := []frame{
		request(c2s, "1", "tools/call", `"a"`),
		request(c2s, "2", "tools/call", ""),
		request(c2s, "3", "tools/call", `"b"`),
		request(c2s, "4", "tools/call", `"c"`),
		response(s2c, "3"), // "b" is no longer open
		request(s2c, "9", "sampling/createMessage", `"server"`),
		notif(s2c, "notifications/message"),
	}
	spec := "burst:on=s2c:notification,count=1"
	picked := map[string]int{}
	for seed := range uint64(64) {
		ds := runPlan(t, seed, []string{spec}, frames)
		if len(ds) != 1 || len(ds[0].Effect.Inject) != 1 {
			t.Fatalf("seed %d: decisions %+v; want one injection", seed, ds)
		}
		token := wire.Classify(ds[0].Effect.Inject[0].Raw).ProgressToken
		if token != `"a"` && token != `"c"` {
			t.Errorf("seed %d: token %s; want one of the open client requests' (\"a\", \"c\")", seed, token)
		}
		if again := runPlan(t, seed, []string{spec}, frames); !cmp.Equal(ds, again) {
			t.Errorf("seed %d: a second run picked differently", seed)
		}
		picked[token]++
	}
	if len(picked) != 2 {
		t.Errorf("64 seeds picked %v; want both open tokens to come up", picked)
	}
}

// TestSentOldestFirst: FireContext.Sent lists open requests in the order they
// were received whatever the map order, so that a seeded pick is stable.
func TestSentOldestFirst(t *testing.T) {
	tr := newInFlight()
	var want []string
	for i := range 50 {
		id := fmt.Sprintf(`"r%d"`, (i*37)%50) // ids not in the order they arrive
		m := wire.Message{Kind: wire.Request, ID: id, Method: "tools/call"}
		tr.observe(c2s, &m, uint64(i+1), new(Pending))
		want = append(want, id)
	}
	for range 5 {
		var got []string
		for _, p := range tr.sent(c2s) {
			got = append(got, p.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("sent (-want +got):\n%s", diff)
		}
	}
	if n := len(tr.sent(s2c)); n != 0 {
		t.Errorf("sent(s2c) has %d requests; want none", n)
	}
	if tr.count() != 50 {
		t.Errorf("count() = %d; want 50", tr.count())
	}
}

// A peer that never answers (cat as a server echoes every request back)
// must not grow the table without end: past maxOpen a direction forgets its
// oldest open requests, and the rest stay oldest first and answerable.
func TestInFlightStaysBounded(t *testing.T) {
	tr := newInFlight()
	n := 3*maxOpen + 17
	for i := range n {
		m := wire.Message{Kind: wire.Request, ID: strconv.Itoa(i), Method: "tools/call"}
		tr.observe(c2s, &m, uint64(i+1), new(Pending))
		if i%3 == 0 { // a third answered, so the order holds closed entries too
			a := wire.Message{Kind: wire.Response, ID: strconv.Itoa(i)}
			if tr.observe(s2c, &a, uint64(i+1), nil) == nil {
				t.Fatalf("answer to %d found no request", i)
			}
		}
	}
	if got := len(tr.open[c2s]); got > maxOpen {
		t.Fatalf("%d open requests kept; want at most %d", got, maxOpen)
	}
	if got := len(tr.order[c2s]); got > 2*maxOpen+64 {
		t.Fatalf("order holds %d entries; want at most %d", got, 2*maxOpen+64)
	}
	sent := tr.sent(c2s)
	if len(sent) != len(tr.open[c2s]) {
		t.Fatalf("sent lists %d requests, the table holds %d", len(sent), len(tr.open[c2s]))
	}
	for i := 1; i < len(sent); i++ {
		if sent[i-1].ordinal >= sent[i].ordinal {
			t.Fatalf("sent not oldest first at %d: %d then %d", i, sent[i-1].ordinal, sent[i].ordinal)
		}
	}
	if last := sent[len(sent)-1].ID; last != strconv.Itoa(n-1) {
		t.Fatalf("newest open request is %s; want %d", last, n-1)
	}
	a := wire.Message{Kind: wire.Response, ID: strconv.Itoa(n - 1)}
	if tr.observe(s2c, &a, 0, nil) == nil {
		t.Fatal("the newest request is not answerable")
	}
}
