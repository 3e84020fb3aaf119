package suite

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// sessionLog takes one scenario's events as the relay records them: it
// feeds them to the streaming judge and keeps only what the runner needs
// besides (the fault decisions, the server's last stderr lines), writing the transcript to a file only when the user asked
// for one. A server that floods its stderr at 100 MB/s is then judged in
// bounded memory and fills no disk it was not given.
type sessionLog struct {
	rec       *chaos.JSONLRecorder
	file      *os.File // nil when no transcript is kept
	path      string
	judge     *judge.Judger
	decisions decisionLog
	// stderr is the server's, clientStderr the client program's (under
	// test-client over HTTP, where both go into one session).
	stderr, clientStderr tailLines
	// opened is set once the client sent an MCP session's opening request
	// (initialize, or server/discover in the stateless revision); first
	// says what else it sent first, for a set-up error about a program that
	// is not an MCP client.
	opened atomic.Bool
	first  string
	// served watches whether the server answered the opening request.
	served openingAnswer
	// messages, if set, collects the messages received (Trials' baseline).
	messages *messageLog
	// also, if set, sees every event after the session's judge: the check
	// across the sessions of a run of several.
	also func(wire.Event)
	// struck, if set, is closed when a fault of the session first fires.
	struck     chan struct{}
	struckOnce sync.Once
	// secrets, if set, watches what the server sends for the client's
	// credentials.
	secrets *secretWatch
}

// openingAnswer sees whether a session's opening request (initialize, or
// server/discover) got a result: a session that never did was never
// opened, which beside other runs is what a server of one session does.
type openingAnswer struct {
	id       string
	answered bool
}

func (o *openingAnswer) see(e *wire.Event) {
	switch {
	case o.answered:
	case o.id == "" && e.Dir == wire.ToServer.String() && e.Kind == "request" && (e.Method == "initialize" || e.Method == "server/discover"):
		o.id = e.ID
	case o.id != "" && e.Dir == wire.ToClient.String() && e.Kind == "response" && e.ID == o.id:
		o.answered = true
	}
}

// stderrTailLines is how much of the server's stderr a set-up error shows.
const stderrTailLines = 40

// newSessionLog starts the log of scenario name; with dir set, the
// transcript goes to dir/NAME.jsonl.
func newSessionLog(dir, name string) (*sessionLog, error) {
	l := &sessionLog{judge: judge.New(), stderr: tailLines{max: stderrTailLines}, clientStderr: tailLines{max: stderrTailLines}}
	var w io.Writer = io.Discard
	if dir != "" {
		l.path = filepath.Join(dir, name+".jsonl")
		f, err := os.Create(l.path)
		if err != nil {
			return nil, fmt.Errorf("writing transcript: %w", err)
		}
		l.file, w = f, f
	}
	l.rec = chaos.NewJSONLRecorder(w)
	l.rec.OnEvent = l.see
	return l, nil
}

// see is called for every event, in order, under the recorder's lock.
func (l *sessionLog) see(e wire.Event) {
	l.judge.Add(e)
	if l.secrets != nil {
		l.secrets.see(&e)
	}
	l.decisions.add(&e)
	l.served.see(&e)
	if l.messages != nil {
		l.messages.see(&e)
	}
	if l.also != nil {
		l.also(e)
	}
	if l.struck != nil && e.Type == wire.EventFault && e.Spec != "" && !strings.HasPrefix(e.Detail, "skipped") && !strings.HasPrefix(e.Detail, wire.NotLanded) {
		l.struckOnce.Do(func() { close(l.struck) })
	}
	if !l.opened.Load() {
		l.seeOpening(&e)
	}
	if e.Type == wire.EventStderr {
		b, _ := e.Bytes()
		line := strings.TrimRight(string(b), "\r\n")
		if e.Peer == "client" {
			l.clientStderr.add(line)
		} else {
			l.stderr.add(line)
		}
	}
}

// seeOpening looks for the request that opens a client's MCP session, and
// keeps what the client sent first if it is not one.
func (l *sessionLog) seeOpening(e *wire.Event) {
	switch {
	case e.Type == wire.EventReceived && e.Dir == wire.ToServer.String():
		if e.Kind == "request" && (e.Method == "initialize" || e.Method == "server/discover") {
			l.opened.Store(true)
			return
		}
		if l.first == "" || strings.HasPrefix(l.first, "an HTTP ") {
			b, _ := e.Bytes()
			l.first = "the message " + words.Cut(strings.TrimSpace(string(b)), 120)
		}
	case e.Type == wire.EventHTTP && e.HTTP != "" && l.first == "":
		l.first = "an HTTP " + e.HTTP + " with no MCP message"
	}
}

// finish writes out the transcript, if one is kept, and returns the verdict.
func (l *sessionLog) finish() (judge.Verdict, error) {
	l.rec.StopEvents()
	v := l.judge.Verdict()
	if l.secrets != nil {
		l.secrets.apply(&v.Findings)
	}
	if l.file == nil {
		return v, nil
	}
	err := l.rec.Flush()
	if cerr := l.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing transcript %s: %w", l.path, cerr)
	}
	return v, err
}

// tailLines keeps the last max lines given.
type tailLines struct {
	max   int
	lines []string
	next  int
}

func (t *tailLines) add(s string) {
	if len(t.lines) < t.max {
		t.lines = append(t.lines, s)
		return
	}
	t.lines[t.next] = s
	t.next = (t.next + 1) % t.max
}

func (t *tailLines) list() []string {
	return append(append([]string(nil), t.lines[t.next:]...), t.lines[:t.next]...)
}

// decisionLog collects a transcript's fault decisions, each with the
// message it fired on, as the events stream by. A fault fires on a message
// just received, so only the last messages are remembered, without their
// bytes.
type decisionLog struct {
	recent map[int64]wire.Event
	order  []int64 // a ring of the seqs in recent
	next   int
	out    []faults.Decision
}

// recentMessages bounds the messages a decision can name.
const recentMessages = 4096

func (d *decisionLog) add(e *wire.Event) {
	switch e.Type {
	case wire.EventReceived:
		if d.recent == nil {
			d.recent = make(map[int64]wire.Event)
		}
		if len(d.order) < recentMessages {
			d.order = append(d.order, e.Seq)
		} else {
			delete(d.recent, d.order[d.next])
			d.order[d.next] = e.Seq
			d.next = (d.next + 1) % recentMessages
		}
		d.recent[e.Seq] = wire.Event{Seq: e.Seq, Dir: e.Dir, Kind: e.Kind, Method: e.Method, ID: e.ID}
	case wire.EventFault:
		dec := faults.Decision{Label: e.Fault, Spec: e.Spec, Action: e.Action, Detail: e.Detail}
		if m, ok := d.recent[e.Of]; ok && e.Of != 0 {
			dec.Seq, dec.Dir, dec.Kind, dec.Method, dec.ID = m.Seq, m.Dir, m.Kind, m.Method, m.ID
		}
		d.out = append(d.out, dec)
	}
}
