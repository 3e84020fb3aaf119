package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// tb builds a transcript the way the relay records one, so that a test reads
// as the session it describes: b.at(5000).reply("1") is "at 5 s the server
// answered request 1".
type tb struct {
	evs []wire.Event
	t   int64 // µs
	// client says a client program is under test, whose requests are held
	// to the official schema: recv gives the tables' requests written with
	// empty params those the schema requires (wellFormed).
	client bool
}

// wellFormed is what a client under test sends for the tables' requests
// with empty params: the params each method requires.
var wellFormed = map[string]string{
	`"method":"initialize","params":{}`: `"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`,
	`"method":"tools/call","params":{}`: `"method":"tools/call","params":{"name":"echo"}`,
}

const (
	testRepro    = "mcpchaos test --scenario sc --seed 7 -- python server.py"
	testScenario = "sc"
	testSeed     = uint64(7)
)

// newTB starts a transcript of a server under test with a 5 s deadline and
// a 3 s grace.
func newTB() *tb {
	b := &tb{}
	seed := testSeed
	b.add(wire.Event{Type: wire.EventSession, Seed: &seed, Command: []string{"python", "server.py"},
		Scenario: testScenario, Role: "server", DeadlineMS: 5000, GraceMS: 3000, Repro: testRepro})
	b.add(wire.Event{Type: wire.EventProcessStarted, PID: 42, Command: []string{"python", "server.py"}})
	return b
}

// at sets the clock, in milliseconds since the session started.
func (b *tb) at(ms float64) *tb {
	b.t = int64(ms * 1000)
	return b
}

func (b *tb) add(e wire.Event) int64 {
	e.Seq = int64(len(b.evs) + 1)
	e.T = b.t
	b.evs = append(b.evs, e)
	return e.Seq
}

func dirOf(s string) wire.Direction {
	d, err := wire.ParseDirection(s)
	if err != nil {
		panic(err)
	}
	return d
}

// recv records a frame read from a peer, classified as the relay does.
func (b *tb) recv(dir, raw string) int64 {
	if b.client && dir == "c2s" {
		for empty, full := range wellFormed {
			raw = strings.Replace(raw, empty, full, 1)
		}
	}
	m := wire.Classify([]byte(raw + "\n"))
	e := wire.Event{Type: wire.EventReceived}
	e.SetMessage(dirOf(dir), &m)
	return b.add(e)
}

func (b *tb) fwd(dir string, of int64) int64 {
	return b.add(wire.Event{Type: wire.EventForwarded, Dir: dir, Of: of})
}

func (b *tb) drop(dir string, of int64, detail string) int64 {
	return b.add(wire.Event{Type: wire.EventDropped, Dir: dir, Of: of, Detail: detail})
}

// call is a client request the relay forwarded; it returns the seq of its
// received event.
func (b *tb) call(id, method string) int64 {
	seq := b.recv("c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{}}`, id, method))
	b.fwd("c2s", seq)
	return seq
}

// reply is the server's answer to id, relayed to the client.
func (b *tb) reply(id string) int64 {
	return b.replyRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id))
}

func (b *tb) replyRaw(raw string) int64 {
	seq := b.recv("s2c", raw)
	b.fwd("s2c", seq)
	return seq
}

// probe is a liveness ping; of is the received seq of the overdue request
// (0 when the prober does not say, as mcpchaos test does not yet).
func (b *tb) probe(n int, of int64) string {
	id := fmt.Sprintf(`%s%d"`, wire.ProbeIDPrefix, n)
	raw := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n"
	e := wire.Event{Type: wire.EventProbe, Dir: "c2s", ID: id, Method: "ping", Of: of, Detail: "overdue"}
	e.SetRaw([]byte(raw))
	b.add(e)
	return id
}

// probeAnswer is the server answering a probe, swallowed by the relay.
func (b *tb) probeAnswer(id string) {
	seq := b.recv("s2c", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	b.drop("s2c", seq, "the answer to a liveness probe of mcpchaos")
}

func (b *tb) pipe(pipe, detail string, byUs bool) int64 {
	return b.add(wire.Event{Type: wire.EventPipeClosed, Pipe: pipe, Detail: detail, ByUs: byUs})
}

// clientClosed is the client ending the session: the ladder closes the
// server's stdin.
func (b *tb) clientClosed() int64 {
	return b.pipe(wire.PipeServerInput, "the client closed its output", true)
}

// eofFault is an eof fault closing the server's stdin.
func (b *tb) eofFault() int64 {
	b.add(wire.Event{Type: wire.EventFault, Fault: "eof#1", Spec: "eof:on=c2s:request:tools/call", Action: "eof", Detail: "close the server's stdin"})
	return b.pipe(wire.PipeServerInput, "early EOF from fault eof#1", true)
}

// stdoutEOF is the server ending its output (it exited, or closed stdout).
func (b *tb) stdoutEOF() int64 { return b.pipe(wire.PipeServerOutput, "end of file", false) }

// halfClose is a half-close fault closing our read end of the server's stdout.
func (b *tb) halfClose() int64 {
	b.add(wire.Event{Type: wire.EventFault, Fault: "half-close#1", Spec: "half-close:dir=s2c", Action: "half-close", Detail: "close the read end of s2c; the server's writes now fail"})
	return b.pipe(wire.PipeServerOutput, "half-closed by fault half-close#1", true)
}

// stall is a stall fault on the server's output, for ever or until untilMS.
func (b *tb) stall(untilMS float64) int64 {
	e := wire.Event{Type: wire.EventFault, Fault: "stall#1", Spec: "stall:dir=s2c", Action: "stall", Dir: "s2c"}
	if untilMS < 0 {
		e.Forever, e.Detail = true, "stop reading s2c until the session ends"
	} else {
		e.UntilUS, e.Detail = int64(untilMS*1000), "stop reading s2c for a while"
	}
	return b.add(e)
}

func (b *tb) signal(sig, why string) int64 {
	return b.add(wire.Event{Type: wire.EventSignal, Signal: sig, PID: 42, Detail: why, ByUs: true})
}

func (b *tb) exit(code int) int64 {
	return b.add(wire.Event{Type: wire.EventProcessExited, PID: 42, ExitCode: &code})
}

func (b *tb) killed(sig string, byUs bool) int64 {
	return b.add(wire.Event{Type: wire.EventProcessExited, PID: 42, Signal: sig, ByUs: byUs})
}

func (b *tb) stderr(lines ...string) {
	for _, l := range lines {
		e := wire.Event{Type: wire.EventStderr}
		e.SetRaw([]byte(l + "\n"))
		b.add(e)
	}
}

func (b *tb) end(detail string) int64 {
	return b.add(wire.Event{Type: wire.EventSessionEnd, Detail: detail})
}

// finish is the usual ending: the client closes, the server exits 0 at once.
func (b *tb) finish() {
	b.clientClosed()
	b.stdoutEOF()
	b.exit(0)
	b.end("the client closed its output")
}

// short is what the tables compare of a finding: everything but the
// excerpts, and the evidence by seq.
type short struct {
	Kind, Severity, Signature, Message string
	Request                            *reports.Request
	Seqs                               []int64
}

func shorten(fs []reports.Finding) []short {
	var out []short
	for _, f := range fs {
		s := short{Kind: f.Kind, Severity: f.Severity, Signature: f.Signature, Message: f.Message, Request: f.Request}
		for _, e := range f.Evidence {
			s.Seqs = append(s.Seqs, e.Seq)
		}
		out = append(out, s)
	}
	return out
}

// judgeCase is one row of the judge's tables.
type judgeCase struct {
	name  string
	build func(b *tb)
	want  []short
	// notes are substrings the notes (what a fault explains) must contain,
	// in order, one note each; nil means no notes. unknown is the same for
	// the reasons the session could not be judged (Verdict.Indeterminate).
	notes   []string
	unknown []string
}

func runJudgeCases(t *testing.T, cases []judgeCase) {
	t.Helper()
	runCasesFrom(t, newTB, testRepro, cases)
}

// runCasesFrom runs each case on a transcript that start begins, whose
// session event names repro.
func runCasesFrom(t *testing.T, start func() *tb, repro string, cases []judgeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := start()
			tc.build(b)
			v := Session(b.evs)
			if diff := cmp.Diff(tc.want, shorten(v.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			checkNotes(t, tc.notes, v.Notes)
			checkNotes(t, tc.unknown, v.Indeterminate)
			for _, f := range v.Findings {
				checkRule(t, f)
				if f.Scenario != testScenario || f.Seed != testSeed || f.Repro != repro {
					t.Errorf("finding %s: scenario %q seed %d repro %q, want them from the session event", f.Kind, f.Scenario, f.Seed, f.Repro)
				}
			}
			// The streaming judge must agree with the one over a slice.
			j := New()
			for _, e := range b.evs {
				j.Add(e)
			}
			if diff := cmp.Diff(v, j.Verdict()); diff != "" {
				t.Errorf("Judger disagrees with JudgeSession (-slice +stream):\n%s", diff)
			}
		})
	}
}

func checkNotes(t *testing.T, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("indeterminate notes: got %d, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("note %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

func req(id, method string) *reports.Request { return &reports.Request{ID: id, Method: method} }

func seqs(s ...int64) []int64 { return s }

// checkRule is what every judge test checks of every finding: it cites a
// rule, and its kind and severity are that rule's.
func checkRule(t *testing.T, f reports.Finding) {
	t.Helper()
	r, ok := reports.LookupRule(f.Rule)
	if !ok {
		t.Errorf("finding %s %q cites no known rule (%q)", f.Kind, f.Message, f.Rule)
		return
	}
	if r.Kind != f.Kind || r.Severity != f.Severity {
		t.Errorf("finding %s/%s cites rule %s, which is %s/%s", f.Kind, f.Severity, r.ID, r.Kind, r.Severity)
	}
}

// rulesOf lists the rule of each finding of v, in order.
func rulesOf(v Verdict) []string {
	var rules []string
	for _, f := range v.Findings {
		rules = append(rules, f.Rule)
	}
	return rules
}
