package reports

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/wire"
)

//go:embed htmlpage/page.html
var htmlPage string

// WriteHTML writes the report as one self-contained page (no network): the
// scenario table, then for each failing scenario its findings and a
// timeline drawn as a sequence diagram, client, mcpchaos and server lanes,
// every message, the fault that fired, stderr and exits on the same
// clock, and the events the findings point at highlighted (the request
// that hung or lost its answer in red). The timeline is read from the
// scenario's transcript (test --transcript-dir); without one, from the
// findings' evidence. A run of thousands of messages stays usable: rows
// far from what the findings point at are folded until clicked, and past
// maxTimeline events they are left out of the page.
func WriteHTML(w io.Writer, r *Report) error {
	data := htmlData{Report: htmlHead{Outcome: r.Outcome}, Target: targetWords(r.Target), Totals: totals(r), Timelines: []htmlTimeline{}}
	for _, s := range tableRows(r) {
		data.Rows = append(data.Rows, htmlRow{Name: s.label(s.Name), Outcome: s.Outcome, Findings: s.Findings, Duration: words.Duration((s.DurationMS) * 1000), Notes: append(append([]string{}, s.Indeterminate...), s.Notes...)})
		if s.Outcome == OutcomeFail {
			data.Timelines = append(data.Timelines, timelineOf(len(data.Timelines), s.ScenarioResult, r.Findings))
		}
	}
	if x := r.Explore; x != nil {
		data.Explore = &htmlExplore{Lines: x.lines(), Coverage: x.Coverage}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	// The data sits in a <script> element: nothing in it may close it.
	js := strings.NewReplacer("</", `<\/`, "<!--", `<\!--`).Replace(string(raw))
	_, err = io.WriteString(w, strings.Replace(htmlPage, "{{DATA}}", js, 1))
	return err
}

type htmlData struct {
	Report    htmlHead       `json:"report"`
	Target    string         `json:"target"`
	Totals    string         `json:"totals"`
	Rows      []htmlRow      `json:"rows"`
	Timelines []htmlTimeline `json:"timelines"`
	Explore   *htmlExplore   `json:"explore,omitempty"`
}

// htmlExplore is what an explore run covered: its summary lines and the
// coverage table.
type htmlExplore struct {
	Lines    []string          `json:"lines"`
	Coverage []ExploreCoverage `json:"coverage"`
}

type htmlHead struct {
	Outcome string `json:"outcome"`
}

type htmlRow struct {
	Name     string   `json:"name"`
	Outcome  string   `json:"outcome"`
	Findings int      `json:"findings"`
	Duration string   `json:"duration"`
	Notes    []string `json:"notes"`
}

type htmlTimeline struct {
	Index     int           `json:"index"`
	Name      string        `json:"name"`
	Findings  []htmlFinding `json:"findings"`
	Events    []htmlEvent   `json:"events"`
	Highlight []int64       `json:"highlight"`
	Bad       []int64       `json:"bad"`
}

type htmlFinding struct {
	Kind      string `json:"kind"`
	Severity  string `json:"severity"`
	Signature string `json:"signature,omitempty"`
	Message   string `json:"message"`
	Repro     string `json:"repro"`
}

// htmlEvent is one row of a timeline: lane says where it is drawn (c2s and
// s2c are messages between the peers, reached whether mcpchaos sent them
// on; inj-* what a fault wrote; fault, server, client and mid the rest).
type htmlEvent struct {
	Seq     int64  `json:"seq"`
	T       int64  `json:"t"`
	Lane    string `json:"lane"`
	Label   string `json:"label"`
	Excerpt string `json:"excerpt,omitempty"`
	Reached bool   `json:"reached,omitempty"`
	Why     string `json:"why,omitempty"`
	Fault   string `json:"fault,omitempty"`
}

func timelineOf(index int, s ScenarioResult, all []Finding) htmlTimeline {
	tl := htmlTimeline{Index: index, Name: s.Name, Findings: []htmlFinding{}, Events: []htmlEvent{}, Highlight: []int64{}, Bad: []int64{}}
	var evidence []Evidence
	for _, f := range all {
		if f.Scenario != s.Name {
			continue
		}
		tl.Findings = append(tl.Findings, htmlFinding{Kind: f.Kind, Severity: f.Severity, Signature: f.Signature, Message: f.Message, Repro: f.Repro})
		for k, e := range f.Evidence {
			if e.Session > 1 {
				// The timeline draws the first session's transcript.
				continue
			}
			tl.Highlight = append(tl.Highlight, e.Seq)
			if k == 0 && (f.Kind == KindHang || f.Kind == KindLostResponse) {
				tl.Bad = append(tl.Bad, e.Seq)
			}
		}
		for _, e := range f.Evidence {
			if e.Session <= 1 {
				evidence = append(evidence, e)
			}
		}
	}
	if events, err := readTimeline(s.Transcript, tl.Highlight); err == nil {
		tl.Events = htmlEvents(events)
		return tl
	}
	for _, e := range evidence {
		lane := "mid"
		switch {
		case e.Dir == "c2s" && e.Type == wire.EventReceived:
			lane = "c2s"
		case e.Dir == "s2c" && e.Type == wire.EventReceived:
			lane = "s2c"
		case e.Type == wire.EventStderr || e.Type == wire.EventProcessExited:
			lane = "server"
		}
		tl.Events = append(tl.Events, htmlEvent{Seq: e.Seq, T: e.TUS, Lane: lane, Label: e.Type + ": " + words.Cut(firstLine(e.Excerpt), 80), Excerpt: words.Cut(e.Excerpt, 300), Reached: true})
	}
	return tl
}

// A timeline holds a whole transcript up to maxTimeline events. Past that
// (a wrap session of a million messages), it holds the first and the last
// timelineEnds events and timelineAround on each side of every event a
// finding points at, with a row saying how many were left out between:
// the page, and the memory that writes it, stay the size of what a reader
// can use, however long the session.
const (
	maxTimeline    = 20000
	timelineEnds   = 2000
	timelineAround = 200
)

// gapEvent is the type of the row that stands for events left out.
const gapEvent = "timeline-gap"

// readTimeline reads the events of a scenario's timeline from its
// transcript, in two passes when it is long: one to count, one to keep.
func readTimeline(path string, highlight []int64) ([]wire.Event, error) {
	if path == "" {
		return nil, os.ErrNotExist
	}
	total, err := countEvents(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []wire.Event
	if total <= maxTimeline {
		err = wire.ReadTranscript(f, func(e wire.Event) error { events = append(events, e); return nil })
		return events, err
	}
	kept := map[int64]bool{} // the received events kept, whose fate is kept too
	index, left := 0, 0
	err = wire.ReadTranscript(f, func(e wire.Event) error {
		index++
		keep := index <= timelineEnds || index > total-timelineEnds || near(e.Seq, highlight) ||
			((e.Type == wire.EventForwarded || e.Type == wire.EventDropped) && kept[e.Of])
		if !keep {
			left++
			return nil
		}
		if left > 0 {
			events = append(events, wire.Event{Type: gapEvent, Detail: fmt.Sprintf("%d events left out of this page (the transcript has them all)", left)})
			left = 0
		}
		if e.Type == wire.EventReceived {
			kept[e.Seq] = true
		}
		events = append(events, e)
		return nil
	})
	return events, err
}

func near(seq int64, highlight []int64) bool {
	for _, h := range highlight {
		if seq >= h-timelineAround && seq <= h+timelineAround {
			return true
		}
	}
	return false
}

// countEvents counts the events of the transcript at path without decoding
// them all (wire.CountEvents).
func countEvents(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return wire.CountEvents(f)
}

// htmlEvents turns a transcript into timeline rows: a message received and
// sent on is one arrow across both lanes; one dropped stops at mcpchaos
// with why.
func htmlEvents(events []wire.Event) []htmlEvent {
	fate := map[int64]*wire.Event{}
	for i := range events {
		e := &events[i]
		if (e.Type == wire.EventForwarded || e.Type == wire.EventDropped) && e.Of != 0 && fate[e.Of] == nil {
			fate[e.Of] = e
		}
	}
	var out []htmlEvent
	for i := range events {
		e := &events[i]
		h := htmlEvent{Seq: e.Seq, T: e.T, Lane: "mid"}
		who := "server"
		if e.Peer == "client" {
			who = "client"
		}
		switch e.Type {
		case wire.EventForwarded, wire.EventDropped:
			continue // drawn with the message they are the fate of
		case wire.EventReceived:
			h.Lane, h.Label, h.Excerpt = e.Dir, messageLabel(e), words.Cut(rawOf(e), 300)
			if f := fate[e.Seq]; f != nil && f.Type == wire.EventForwarded {
				h.Reached = true
			} else if f != nil {
				h.Why = words.Cut(f.Detail, 60)
			}
		case wire.EventInjected, wire.EventProbe:
			h.Lane, h.Label, h.Excerpt, h.Fault = "inj-"+e.Dir, messageLabel(e), words.Cut(rawOf(e), 300), e.Fault
			if e.Type == wire.EventProbe {
				h.Fault = "liveness probe"
			}
		case wire.EventFault:
			h.Lane, h.Label = "fault", words.Cut(e.Fault+": "+e.Detail, 90)
		case wire.EventStderr:
			h.Lane, h.Label, h.Excerpt = who, words.Cut(firstLine(rawOf(e)), 90), words.Cut(rawOf(e), 300)
		case wire.EventProcessExited:
			h.Lane, h.Label = who, e.ExitWords()
		case wire.EventProcessStarted:
			h.Lane, h.Label = who, "started"
		case wire.EventSignal:
			h.Label = fmt.Sprintf("%s to the %s", e.Signal, who)
		case wire.EventHTTP:
			h.Label = words.Cut(strings.TrimSpace(e.HTTP+" "+statusWord(e.Status)+" "+e.Detail), 90)
		case gapEvent:
			h.Label = "… " + e.Detail
		default:
			h.Label = words.Cut(strings.TrimSpace(e.Type+" "+e.Pipe+" "+e.Detail), 90)
		}
		out = append(out, h)
	}
	return out
}

func messageLabel(e *wire.Event) string {
	label := cmp.Or(e.Method, e.Kind, "frame")
	if e.ID != "" {
		label += " #" + e.ID
	}
	return label
}

func rawOf(e *wire.Event) string {
	if e.Raw != "" {
		return e.Raw
	}
	if e.RawBase64 != "" {
		return "(binary, " + fmt.Sprint(e.Size) + " bytes)"
	}
	return ""
}

func statusWord(s int) string {
	if s == 0 {
		return ""
	}
	return fmt.Sprint(s)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
