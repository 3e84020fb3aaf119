package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// bigRun is a failing run whose transcript holds n calls answered, then
// one that never is (a hang, as the judge would report it), as a report
// written with --transcript-dir has it.
func bigRun(t *testing.T, n int) *Report {
	t.Helper()
	var buf bytes.Buffer
	seq := int64(0)
	add := func(e wire.Event) wire.Event {
		seq++
		e.Seq, e.T = seq, seq*100
		line, _ := json.Marshal(e)
		buf.Write(append(line, '\n'))
		return e
	}
	message := func(dir, raw string) wire.Event {
		m := wire.Classify([]byte(raw + "\n"))
		d, _ := wire.ParseDirection(dir)
		e := wire.Event{Type: wire.EventReceived}
		e.SetMessage(d, &m)
		rec := add(e)
		add(wire.Event{Type: wire.EventForwarded, Dir: dir, Of: rec.Seq})
		return rec
	}
	add(wire.Event{Type: wire.EventSession, Scenario: "stall-s2c"})
	for i := 1; i <= n; i++ {
		message("c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{}}`, i))
		message("s2c", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i))
	}
	hung := message("c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{}}`, n+1))
	e := wire.Event{Type: wire.EventStderr}
	e.SetRaw([]byte("<script>alert('peer bytes')</script> </script><!--\n"))
	stderr := add(e)
	end := add(wire.Event{Type: wire.EventSessionEnd, Detail: "the client closed its output"})
	path := filepath.Join(t.TempDir(), "stall-s2c.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := Finding{Kind: KindHang, Severity: SeverityError, Rule: RuleUnanswered, Scenario: "stall-s2c", Seed: 7,
		Message: fmt.Sprintf("tools/call (id %d) unanswered", n+1), Request: &Request{ID: fmt.Sprint(n + 1), Method: "tools/call"},
		Evidence: []Evidence{{Seq: hung.Seq, TUS: hung.T, Type: hung.Type, Dir: "c2s"}, {Seq: stderr.Seq, TUS: stderr.T, Type: "stderr"}, {Seq: end.Seq, TUS: end.T, Type: "session-end"}},
		Repro:    "mcpchaos test --scenario stall-s2c --seed 7 -- python server.py"}
	return &Report{Schema: Schema, Outcome: OutcomeFail, Target: Target{Command: []string{"python", "server.py"}}, Seed: 7,
		Scenarios: []ScenarioResult{{Name: "stall-s2c", Seed: 7, Outcome: OutcomeFail, Findings: 1, Transcript: path}},
		Findings:  []Finding{f}}
}

// The HTML report is one self-contained page: no network (no src or href
// leaves the file), the peers' bytes cannot close its script, and its data
// holds every event of the failing scenario's transcript.
func TestHTMLSelfContained(t *testing.T) {
	r := bigRun(t, 50)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if regexp.MustCompile(`(?i)(src|href)=["']?(https?:)?//`).MatchString(page) {
		t.Error("the page loads something from the network")
	}
	if strings.Count(page, "</script>") != 2 {
		t.Errorf("a peer's bytes closed a script element: %d </script>", strings.Count(page, "</script>"))
	}
	if !strings.Contains(page, `tools/call #51`) {
		t.Error("the hung request is not in the page's data")
	}
}

// A transcript far longer than anyone reads (a wrap session of a million
// messages) makes a page of its ends and of what the findings point at,
// with rows saying how much was left out, not a page the size of the
// transcript.
func TestHTMLOfALongSessionKeepsWhatMatters(t *testing.T) {
	r := bigRun(t, 15000) // 60,004 events
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`tools/call #2"`, `tools/call #15001"`, "events left out of this page"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `tools/call #7000"`) {
		t.Error("the page holds a call from the middle of the session, far from the finding")
	}
	var full bytes.Buffer
	if err := WriteHTML(&full, bigRun(t, maxTimeline/4-10)); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > full.Len() {
		t.Errorf("the page of 60,004 events is %d bytes, more than that of a whole %d-event one (%d)", buf.Len(), maxTimeline, full.Len())
	}
}

// Blank lines, which ReadTranscript skips (a transcript edited by hand, or
// joined from pieces), do not count as events: counted, they pushed the
// session's last events out of the page's kept end.
func TestHTMLOfALongSessionWithBlankLinesKeepsItsEnd(t *testing.T) {
	r := bigRun(t, 15000)
	path := r.Scenarios[0].Transcript
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte("\n"), []byte("\n \r\n\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	// Call 14900 is among the last 2,000 events, and 400 before the hung
	// call the finding points at: only the kept end holds it.
	if !strings.Contains(buf.String(), `tools/call #14900"`) {
		t.Error("the page lacks the session's last events")
	}
}

// The HTML report in a real headless browser (Debian's Chromium, installed
// by scripts/install-tools): a run of 3,000 calls renders, with no console
// error, the rows the finding points at drawn and the rest folded, and a
// screenshot shows the diagram.
func TestHTMLInABrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (%v): run scripts/install-tools (it installs Debian's chromium)", err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, bigRun(t, 3000)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	browse := func(args ...string) (stdout, stderr string) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		argv := append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile"),
			"--enable-logging=stderr", "--v=0"}, args...)
		cmd := exec.CommandContext(ctx, chromium, append(argv, "file://"+page)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
		}
		return out.String(), errb.String()
	}
	dom, logs := browse("--dump-dom", "--virtual-time-budget=5000")
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			t.Errorf("console: %s", l)
		}
	}
	if !strings.Contains(dom, `data-rendered="ok"`) {
		t.Fatalf("the page's script did not finish rendering:\n%.2000s", dom)
	}
	rows := strings.Count(dom, `class="row`)
	if rows < 100 || rows > 400 {
		t.Errorf("%d timeline rows drawn; want the ends and the rows around the finding, the rest folded", rows)
	}
	if !strings.Contains(dom, `class="gap"`) || !strings.Contains(dom, "more events") {
		t.Error("no folded gap in a timeline of 6,000 messages")
	}
	if !strings.Contains(dom, `class="row bad"`) {
		t.Error("the hung request is not highlighted")
	}
	shot := filepath.Join(dir, "shot.png")
	browse("--screenshot="+shot, "--window-size=1280,1000")
	png, err := os.ReadFile(shot)
	if err != nil || len(png) < 20000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot: %d bytes, %v", len(png), err)
	}
}
