package judge

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Evidence stays small: a finding names events by seq (the transcript has
// the rest), and a report with a thousand findings must still be readable.
const (
	// maxExcerpt is the most bytes of one frame an excerpt keeps.
	maxExcerpt = 500
	// maxEvidence is the most events one finding cites.
	maxEvidence = 10
	// maxStderrLines is the most stderr lines a crash excerpt keeps.
	maxStderrLines = 40
	// maxStderrLine is the most bytes of one stderr line an excerpt keeps.
	maxStderrLine = 300
)

// frameExcerpt is what a report shows of a frame: its text without the line
// end, or, for bytes that are not UTF-8, a quoted form of them.
func frameExcerpt(e *wire.Event) string {
	if e.RawBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(e.RawBase64)
		if err != nil {
			return words.Cut("raw_b64 "+e.RawBase64, maxExcerpt)
		}
		if len(b) > maxExcerpt {
			return strconv.Quote(string(b[:maxExcerpt])) + "…[" + strconv.Itoa(len(b)-maxExcerpt) + " more bytes]"
		}
		return strconv.Quote(string(b))
	}
	return words.Cut(strings.TrimRight(e.Raw, "\r\n"), maxExcerpt)
}

// evidenceOf turns one event into evidence; frames keep their bytes, other
// events a sentence that says what happened.
func evidenceOf(e *wire.Event) reports.Evidence {
	ev := reports.Evidence{Seq: e.Seq, TUS: e.T, Type: e.Type, Dir: e.Dir}
	switch e.Type {
	case wire.EventReceived, wire.EventInjected, wire.EventProbe:
		ev.Excerpt = frameExcerpt(e)
	default:
		ev.Excerpt = words.Cut(describe(e), maxExcerpt)
	}
	return ev
}

// describe says in words what a non-frame event records.
func describe(e *wire.Event) string {
	var b strings.Builder
	switch e.Type {
	case wire.EventForwarded:
		fmt.Fprintf(&b, "forwarded the frame of seq %d", e.Of)
	case wire.EventDropped:
		fmt.Fprintf(&b, "dropped the frame of seq %d", e.Of)
	case wire.EventPipeClosed:
		b.WriteString(e.Pipe + " closed")
		if e.ByUs {
			b.WriteString(" by mcpchaos")
		}
	case wire.EventSignal:
		b.WriteString("sent " + e.Signal)
		if e.Peer != "" {
			b.WriteString(" to the " + e.Peer)
		}
	case wire.EventProcessStarted:
		b.WriteString("the " + peerName(e) + " started")
		if len(e.Command) > 0 {
			b.WriteString(": " + strings.Join(e.Command, " "))
		}
	case wire.EventProcessExited:
		b.WriteString("the " + peerName(e) + " " + e.ExitWords())
		if e.ByUs {
			b.WriteString(" (signalled by mcpchaos)")
		}
	case wire.EventFault:
		b.WriteString("fault " + e.Fault)
		if e.Action != "" {
			b.WriteString(" (" + e.Action + ")")
		}
	case wire.EventStderr:
		return stderrText(e)
	default:
		b.WriteString(e.Type)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}

// peerName is whose process a process event is about: the server's unless
// the event names a peer.
func peerName(e *wire.Event) string {
	if e.Peer != "" {
		return e.Peer
	}
	return "server"
}

// stderrText is one stderr line as text: invalid UTF-8 is replaced, so that
// signature matching and excerpts work on what a person would see.
func stderrText(e *wire.Event) string {
	s := e.Raw
	if e.RawBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(e.RawBase64)
		if err != nil {
			return ""
		}
		s = strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return strings.TrimRight(s, "\r\n")
}

// addEvidence appends ev unless the finding already cites maxEvidence events
// or this one.
func addEvidence(list []reports.Evidence, ev ...reports.Evidence) []reports.Evidence {
	for _, e := range ev {
		if len(list) >= maxEvidence {
			return list
		}
		dup := false
		for _, have := range list {
			if have.Seq == e.Seq && have.Type == e.Type {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, e)
		}
	}
	return list
}

// idList names up to five ids and counts the rest, for aggregated findings.
func idList(ids []string, total int) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 5 {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(id)
	}
	if more := total - min(len(ids), 5); more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// EvidenceOf is the evidence an event gives, as the judge cites it: the
// frame's excerpt, or what a non-frame event records in words. The check
// across sessions (package crosssession) cites events with it too.
func EvidenceOf(e *wire.Event) reports.Evidence { return evidenceOf(e) }
