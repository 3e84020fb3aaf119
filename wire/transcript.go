package wire

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/mcpchaos/mcpchaos/internal/sse"
)

// ReadTranscript decodes a transcript, calling fn for each event in order.
// It reads every format up to TranscriptFormat: one JSON object a line,
// where (format 3) a received event's line may be followed by the bytes of
// frames read together, which it cuts and classifies, and may stand for
// their forwarded events too. It stops at the first malformed line with an
// error naming it, or when fn returns an error.
func ReadTranscript(r io.Reader, fn func(Event) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var e Event
			ref, jerr := decodeLine(b, &e)
			if jerr != nil {
				return fmt.Errorf("transcript line %d: %v", line, jerr)
			}
			if e.Type == "" {
				return fmt.Errorf("transcript line %d: no event type (is this an mcpchaos transcript?)", line)
			}
			if e.Type == EventSession && e.Format > TranscriptFormat {
				return fmt.Errorf("transcript line %d: written by %s in transcript format %d, which this mcpchaos (format %d) cannot read whole: judge it with that version of mcpchaos or a newer one",
					line, orUnknown(e.Tool), e.Format, TranscriptFormat)
			}
			if ref.Bytes == nil {
				if ferr := fn(e); ferr != nil {
					return ferr
				}
			} else {
				lines, ferr := readFrames(br, e, ref, fn)
				if ferr != nil {
					return fmt.Errorf("transcript line %d: %w", line, ferr)
				}
				line += lines
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readFrames reads the ref.Bytes bytes of frames that follow head's line
// and calls fn with the events the line stands for: for each frame, its
// received event, classified as the relay would have (SetMessage of
// Classify), then its forwarded event when the line says so. It says how
// many line ends the frames held.
func readFrames(br *bufio.Reader, head Event, ref frameRef, fn func(Event) error) (lines int, err error) {
	n := *ref.Bytes
	if n <= 0 || ref.Frames <= 0 || head.Type != EventReceived {
		return 0, fmt.Errorf("%d bytes of %d frames after a %s event: only a received event has frames, one or more, after it", n, ref.Frames, head.Type)
	}
	dir, err := ParseDirection(head.Dir)
	if err != nil {
		return 0, err
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(br, raw); err != nil {
		return 0, fmt.Errorf("its %d bytes of frames are cut short (%v)", n, err)
	}
	if ref.SSE {
		return readEvents(raw, head, dir, ref, fn)
	}
	frames := 0
	for rest := raw; len(rest) > 0; frames++ {
		end := bytes.IndexByte(rest, '\n') + 1
		if end == 0 {
			end = len(rest) // the last frame of a stream that ended mid-line
		} else {
			lines++
		}
		// Each event keeps a frame of its own: a judge holds on to some.
		e := head
		e.Seq = head.Seq + int64(frames)*ref.step()
		m := Classify(rest[:end:end])
		e.SetMessage(dir, &m)
		if err := fn(e); err != nil {
			return lines, err
		}
		if ref.Forwarded {
			if err := fn(ForwardedPair(e)); err != nil {
				return lines, err
			}
		}
		rest = rest[end:]
	}
	if frames != ref.Frames {
		return lines, fmt.Errorf("%d frames in its bytes; the line says %d", frames, ref.Frames)
	}
	return lines, nil
}

// readEvents calls fn with the events a run of SSE events stands for
// (AppendRelayedEventsHead): for each, its message's received event, with
// the event's id, and its forwarded event. It says how many line ends the
// run held.
func readEvents(raw []byte, head Event, dir Direction, ref frameRef, fn func(Event) error) (lines int, err error) {
	if head.Exchange == 0 || !ref.Forwarded {
		return 0, fmt.Errorf("a run of SSE events outside an HTTP exchange, or not forwarded: only the HTTP proxy records runs, of events it passed on")
	}
	lines = bytes.Count(raw, []byte("\n"))
	seq := head.Seq
	n, err := sse.SplitRun(raw, func(id, data []byte) error {
		e := head
		e.Seq, e.EventID = seq, string(id)
		m := Classify(data[:len(data):len(data)])
		e.SetMessage(dir, &m)
		if err := fn(e); err != nil {
			return err
		}
		seq += 2
		return fn(ForwardedPair(e))
	})
	if err != nil {
		return lines, err
	}
	if n != ref.Frames {
		return lines, fmt.Errorf("%d events in its bytes; the line says %d", n, ref.Frames)
	}
	return lines, nil
}

// ForwardedPair is the forwarded event of received, a frame relayed
// untouched: the next seq, at the same time, in the same direction and
// exchange. A line that frames follow (format 3 and 4) stands for both.
func ForwardedPair(received Event) Event {
	return Event{Seq: received.Seq + 1, T: received.T, Type: EventForwarded, Dir: received.Dir, Of: received.Seq, Exchange: received.Exchange}
}

// step is how far apart the seqs of the received events of a line's
// frames are: each frame's forwarded event, when the line stands for it
// too, takes the seq in between.
func (ref frameRef) step() int64 {
	if ref.Forwarded {
		return 2
	}
	return 1
}

// CountEvents counts the events of a transcript without decoding them
// all: the lines that hold more than white space, less the frames stored
// after a line (format 3), and one more for each such line that stands for
// a forwarded event too. It gives what ReadTranscript would, at little
// more cost than finding the line ends: only a line short enough to be
// one that a frame follows, and that names "bytes", is decoded.
func CountEvents(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0
	short := make([]byte, 0, maxFrameHead)
	for {
		// ReadSlice, not ReadBytes: a long line comes in pieces, and
		// nothing is copied but the start of a short one.
		short = short[:0]
		blank, long := true, false
		var err error
		for {
			var piece []byte
			piece, err = br.ReadSlice('\n')
			if blank && len(bytes.TrimSpace(piece)) > 0 {
				blank = false
			}
			if long = long || len(short)+len(piece) > maxFrameHead; !long {
				short = append(short, piece...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if !blank {
			n++
			if !long && bytes.Contains(short, []byte(`"bytes"`)) {
				var e Event
				if ref, derr := decodeLine(short, &e); derr == nil && ref.Bytes != nil && *ref.Bytes > 0 && ref.Frames > 0 {
					n += ref.Frames*int(ref.step()) - 1
					if _, derr := br.Discard(*ref.Bytes); derr != nil {
						return n, nil // cut short: ReadTranscript says how
					}
				}
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// maxFrameHead is longer than any line a frame follows: AppendRelayedHead
// writes five numbers and three short names, AppendRelayedEventHead six and
// an event id of at most MaxRelayedEventID bytes, escaped (at most six
// bytes each, \u0000).
const maxFrameHead = 512 + 6*MaxRelayedEventID

func orUnknown(tool string) string {
	if tool == "" {
		return "an unknown tool"
	}
	return tool
}
