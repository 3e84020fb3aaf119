package judge

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Pieces the fuzzer assembles transcripts from: frames and stderr lines
// that reach every branch of the judge, in any order the fuzzer likes.
var (
	fuzzFrames = []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s"}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"tools":[{"name":"t"},{"inputSchema":{}},7]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":"x"}}`,
		`{"jsonrpc":"2.0","id":"mcpchaos-probe-1","result":{}}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\t\\q\"}}",
		"not json at all",
		"",
		"\xff\xfe{",
	}
	fuzzStderr = []string{
		"Traceback (most recent call last):", `  File "x.py", line 1, in f`, "    raise X", "anyio.ClosedResourceError",
		"RuntimeError: dictionary changed size during iteration", "BrokenPipeError: [Errno 32] Broken pipe",
		"  + Exception Group Traceback (most recent call last):", "  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)",
		"  +-+---------------- 1 ----------------", "    | Traceback (most recent call last):", "    | anyio.EndOfStream",
		"    +---------------- 2 ----------------", "    +------------------------------------", "    |",
		"During handling of the above exception, another exception occurred:", "Exception ignored in: <stdout>",
		"panic: send on closed channel", "fatal error: concurrent map writes", "fatal error: all goroutines are asleep - deadlock!",
		"node:events:497", "      throw er; // Unhandled 'error' event", "      ^", "", "Error: write EPIPE",
		"Emitted 'error' event on Socket instance at:", "[UnhandledPromiseRejection: x]", "TypeError: y", "Node.js v20.12.2",
		"|", "+", "+--", " | +-+", "\x1b[31mTraceback (most recent call last):\x1b[0m",
	}
	fuzzPipes   = []string{wire.PipeServerInput, wire.PipeServerOutput, wire.PipeClientInput, wire.PipeClientOutput}
	fuzzDetails = []string{"the client closed its output", "early EOF from fault eof#1", "end of file", "half-closed by fault h#1", "interrupted"}
)

// eventsFromBytes decodes fuzz input into a transcript, four bytes an event:
// what kind of event, and three choices for it. Seqs count up and times
// never go back, as in a real transcript; everything else is up to the
// fuzzer, including references to events that do not exist.
func eventsFromBytes(data []byte) []wire.Event {
	var evs []wire.Event
	var t int64
	pick := func(list []string, b byte) string { return list[int(b)%len(list)] }
	earlier := func(b byte) int64 { return int64(len(evs)) - int64(b)%int64(len(evs)+1) }
	for len(data) >= 4 {
		op, a, b, c := data[0], data[1], data[2], data[3]
		data = data[4:]
		t += int64(c) * 250
		e := wire.Event{Seq: int64(len(evs) + 1), T: t}
		dir := []string{"c2s", "s2c"}[a&1]
		switch op % 12 {
		case 0:
			seed := uint64(a)
			e.Type, e.Seed, e.Scenario, e.Repro = wire.EventSession, &seed, "fuzz", "mcpchaos test --seed 1"
			e.Role = []string{"server", "", "client", "weird"}[b%4]
			e.Expect = []string{expectSuccess, expectFailure, "", "maybe"}[(b/4)%4]
			e.DeadlineMS, e.GraceMS = int64(a%10)*500, int64(c%5)*500
		case 1, 4:
			raw := []byte(pick(fuzzFrames, b) + "\n")
			if a&0x80 != 0 && len(data) > 0 {
				n := min(int(b)%32, len(data))
				raw = data[:n]
			}
			m := wire.Classify(raw)
			e.Type = wire.EventReceived
			if op%12 == 4 {
				e.Type, e.Fault = wire.EventInjected, "inject#1"
			}
			e.SetMessage(dirOf(dir), &m)
			if a&0x40 != 0 {
				e.Problem = "line longer than the 64-byte cap, piece 1"
				e.Kind = "invalid"
			}
		case 2:
			e.Type, e.Dir, e.Of = wire.EventForwarded, dir, earlier(b)
		case 3:
			e.Type, e.Dir, e.Of = wire.EventDropped, dir, earlier(b)
		case 5:
			e.Type, e.Dir, e.ID, e.Method, e.Of = wire.EventProbe, dir, `"mcpchaos-probe-`+string(rune('0'+b%4))+`"`, "ping", earlier(c)
			if a&2 != 0 {
				e.Detail = "overdue; not delivered: broken pipe"
			}
		case 6:
			e.Type, e.Fault = wire.EventFault, "f#1"
			e.Action = []string{"stall", "eof", "signal", "half-close", "burst"}[b%5]
			e.Dir = dir
			if a&2 != 0 {
				e.Forever = true
			} else {
				e.UntilUS = t + int64(c)*1000
			}
		case 7:
			e.Type, e.Pipe, e.ByUs, e.Detail = wire.EventPipeClosed, pick(fuzzPipes, b), a&2 != 0, pick(fuzzDetails, c)
		case 8:
			e.Type, e.Signal, e.ByUs, e.Detail = wire.EventSignal, []string{"SIGTERM", "SIGKILL"}[b&1], a&2 != 0, "ladder"
			e.Peer = clientPeerOf(a)
		case 9:
			e.Type, e.ByUs, e.Peer = wire.EventProcessExited, a&2 != 0, clientPeerOf(a)
			if b&1 == 0 {
				code := int(c) - 2
				e.ExitCode = &code
			} else {
				e.Signal = []string{"SIGTERM", "SIGKILL", "SIGPIPE", "SIGSEGV"}[c%4]
			}
		case 10:
			e.Type, e.Peer = wire.EventStderr, clientPeerOf(a)
			e.SetRaw([]byte(pick(fuzzStderr, b) + "\n"))
			if a&0x80 != 0 && len(data) > 0 {
				e.SetRaw(data[:min(int(c)%64, len(data))])
			}
		case 11:
			e.Type = []string{wire.EventSessionEnd, wire.EventError, wire.EventProcessStarted, "unknown-type"}[b%4]
			if e.Type == wire.EventProcessStarted {
				e.Peer = clientPeerOf(a)
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// clientPeerOf makes one event in four about the client program (bit 2 of
// a, and not bit 3, which leaves one in eight to a peer nobody judges).
func clientPeerOf(a byte) string {
	switch a & 0x0c {
	case 0x04:
		return "client"
	case 0x0c:
		return "other"
	}
	return ""
}

func FuzzJudge(f *testing.F) {
	// A client-role session: the client calls, the server sends list_changed
	// and a request, probes go unanswered, the runner signals the client.
	f.Add([]byte{0, 4, 2, 0, 11, 4, 2, 0, 1, 0, 0, 1, 2, 0, 0, 1, 1, 1, 8, 1, 2, 1, 1, 1, 5, 1, 0, 40, 8, 4, 0, 40, 9, 6, 1, 1, 10, 4, 3, 1})
	f.Add([]byte{0, 4, 0, 0, 1, 0, 0, 0, 2, 0, 0, 10, 1, 1, 3, 10, 10, 0, 0, 0, 9, 0, 0, 3})
	f.Add([]byte{0, 6, 0, 0, 1, 0, 0, 1, 2, 0, 0, 1, 5, 0, 0, 40, 7, 2, 0, 30, 8, 2, 0, 40, 9, 2, 1, 1, 11, 0, 0, 0})
	f.Add(bytes.Repeat([]byte{1, 0, 0, 1, 2, 0, 0, 1, 10, 0, 6, 1, 10, 0, 7, 1, 10, 0, 9, 1}, 8))
	f.Add(bytes.Repeat([]byte{10, 0, 19, 3, 10, 0, 20, 3, 10, 0, 21, 3, 10, 0, 22, 3, 10, 0, 23, 3}, 4))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := eventsFromBytes(data)
		v := Session(evs)
		if again := Session(evs); !cmp.Equal(v, again) {
			t.Fatalf("the same events judged twice differ:\n%s", cmp.Diff(v, again))
		}
		for i, f := range v.Findings {
			if !reports.IsKind(f.Kind) {
				t.Errorf("finding %d has kind %q", i, f.Kind)
			}
			if f.Severity != reports.SeverityError && f.Severity != reports.SeverityWarning {
				t.Errorf("finding %d has severity %q", i, f.Severity)
			}
			if len(f.Evidence) > maxEvidence {
				t.Errorf("finding %d cites %d events", i, len(f.Evidence))
			}
			for _, e := range f.Evidence {
				if e.Type == "stderr" {
					if n := strings.Count(e.Excerpt, "\n") + 1; n > maxStderrLines {
						t.Errorf("stderr excerpt of %d lines", n)
					}
				} else if len(e.Excerpt) > 3*maxExcerpt {
					t.Errorf("excerpt of %d bytes", len(e.Excerpt))
				}
			}
			if i > 0 && reports.KindRank(v.Findings[i-1].Kind) > reports.KindRank(f.Kind) {
				t.Errorf("findings out of order: %s before %s", v.Findings[i-1].Kind, f.Kind)
			}
			if strings.Contains(f.Message, "\n") {
				t.Errorf("message is not one line: %q", f.Message)
			}
		}
		// Whatever was found must survive the report round trip.
		r := &reports.Report{Schema: reports.Schema, Outcome: reports.OutcomeFail, Findings: v.Findings}
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := reports.ReadReport(&buf); err != nil {
			t.Fatal(err)
		}
		reports.WriteSummary(&bytes.Buffer{}, r)
	})
}

func FuzzStderrScanner(f *testing.F) {
	for _, name := range []string{"python_two_leaves_group.txt", "node_unhandled_error_epipe.txt", "go_concurrent_map_writes.txt"} {
		lines := readLines(f, name)
		f.Add(strings.Join(lines, "\n"))
	}
	f.Add("  +-+\n    |\n+--\n|x\n  + \nTraceback (most recent call last):\nA.b: c")
	f.Fuzz(func(t *testing.T, text string) {
		for _, h := range scanLines(strings.Split(text, "\n")) {
			if !strings.HasPrefix(h.sig, "python:") && !strings.HasPrefix(h.sig, "go:") && !strings.HasPrefix(h.sig, "node:") {
				t.Errorf("signature %q has no known prefix", h.sig)
			}
			if h.excerpt == nil || len(h.excerpt.lines()) > maxStderrLines {
				t.Errorf("hit %q: excerpt missing or too long", h.sig)
			}
		}
	})
}

// FuzzMember checks the judge's member scanner against encoding/json on
// every valid JSON object the fuzzer finds.
func FuzzMember(f *testing.F) {
	f.Add([]byte(`{"result":{"tools":[{"name":"a"}]},"id":1}`), "result")
	f.Add([]byte(`{"a":1,"a":2}`), "a")
	f.Add([]byte(`{"\u0069d":"x"}`), "id")
	f.Add([]byte(`{"s":"a\"b\\","t":[1,{"u":"]"}]}`), "t")
	f.Fuzz(func(t *testing.T, obj []byte, key string) {
		got := member(obj, key)
		elements(obj, func([]byte) bool { return true })
		stringsValid(obj)
		var m map[string]json.RawMessage
		if !json.Valid(obj) || json.Unmarshal(obj, &m) != nil {
			return
		}
		want, ok := m[key]
		if !ok {
			// encoding/json matches the last of duplicate keys and so does
			// member; a key encoding/json cannot represent exactly (invalid
			// UTF-8 is replaced) is out of scope.
			if got != nil && bytes.Equal(bytes.ToValidUTF8([]byte(key), []byte("\uFFFD")), []byte(key)) {
				t.Errorf("member(%s, %q) = %s, encoding/json finds no such key", obj, key, got)
			}
			return
		}
		if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			t.Errorf("member(%s, %q) = %s, want %s", obj, key, got, want)
		}
		if ok, sure := stringsValid(obj); sure && !ok {
			t.Errorf("stringsValid(%s) is sure it is invalid; json.Valid disagrees", obj)
		}
	})
}
