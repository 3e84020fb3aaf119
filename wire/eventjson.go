package wire

import (
	"encoding/base64"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendLine appends e as one JSON line, newline included, to dst. It writes
// what encoding/json writes for Event (same member names, order and
// omissions), without reflection and without escaping <, > and &, because the
// transcript carries every frame's bytes and encoding/json's cost would be
// most of the relay's.
func (e *Event) AppendLine(dst []byte) []byte {
	return e.AppendBody(AppendHead(dst, e.Seq, e.T))
}

// AppendHead appends the start of an event's line, which holds its Seq and
// T: a recorder can encode the body, the costly part, before it stamps
// them, and outside its lock.
func AppendHead(dst []byte, seq, t int64) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, `,"t_us":`...)
	return strconv.AppendInt(dst, t, 10)
}

// AppendBody appends the rest of e's line, after AppendHead, newline included.
func (e *Event) AppendBody(dst []byte) []byte {
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, e.Type)
	dst = appendField(dst, "dir", e.Dir)
	dst = appendField(dst, "kind", e.Kind)
	dst = appendField(dst, "id", e.ID)
	dst = appendField(dst, "method", e.Method)
	dst = appendField(dst, "progress_token", e.ProgressToken)
	dst = appendField(dst, "era", e.Era)
	dst = appendField(dst, "problem", e.Problem)
	dst = appendInt(dst, "size", int64(e.Size))
	switch message := isMessageKind(e.Kind); {
	case message && e.Exchange == 0 && isJSONLine(e.Raw):
		dst = appendMessage(dst, e.Raw[:len(e.Raw)-1])
	case message && e.Exchange != 0 && isJSONObject(e.Raw):
		// An HTTP body or SSE event's data has no newline to frame it.
		dst = appendMessage(dst, e.Raw)
	default:
		dst = appendField(dst, "raw", e.Raw)
	}
	dst = appendField(dst, "raw_b64", e.RawBase64)
	dst = appendInt(dst, "of", e.Of)
	dst = appendField(dst, "fault", e.Fault)
	dst = appendField(dst, "spec", e.Spec)
	dst = appendField(dst, "action", e.Action)
	dst = appendField(dst, "detail", e.Detail)
	dst = appendInt(dst, "until_us", e.UntilUS)
	dst = appendInt(dst, "cpu_share", int64(e.CPUShare))
	if e.Forever {
		dst = append(dst, `,"forever":true`...)
	}
	dst = appendField(dst, "pipe", e.Pipe)
	dst = appendInt(dst, "pid", int64(e.PID))
	dst = appendStrings(dst, "command", e.Command)
	if e.ExitCode != nil {
		dst = append(dst, `,"exit_code":`...)
		dst = strconv.AppendInt(dst, int64(*e.ExitCode), 10)
	}
	dst = appendField(dst, "signal", e.Signal)
	if e.ByUs {
		dst = append(dst, `,"by_us":true`...)
	}
	if e.Seed != nil {
		dst = append(dst, `,"seed":`...)
		dst = strconv.AppendUint(dst, *e.Seed, 10)
	}
	dst = appendStrings(dst, "faults", e.Faults)
	dst = appendField(dst, "tool", e.Tool)
	dst = appendInt(dst, "format", int64(e.Format))
	dst = appendField(dst, "scenario", e.Scenario)
	dst = appendField(dst, "role", e.Role)
	dst = appendInt(dst, "deadline_ms", e.DeadlineMS)
	dst = appendInt(dst, "max_deadline_ms", e.MaxDeadlineMS)
	dst = appendInt(dst, "grace_ms", e.GraceMS)
	dst = appendInt(dst, "hang_after_ms", e.HangAfterMS)
	dst = appendField(dst, "repro", e.Repro)
	dst = appendField(dst, "expect", e.Expect)
	dst = appendField(dst, "peer", e.Peer)
	dst = appendInt(dst, "wall_start_unix_ns", e.WallStartUnixNano)
	dst = appendInt(dst, "session", int64(e.Session))
	dst = appendInt(dst, "sessions", int64(e.Sessions))
	dst = appendField(dst, "marker", e.Marker)
	dst = appendField(dst, "url_template", e.URLTemplate)
	dst = appendInt(dst, "exchange", e.Exchange)
	dst = appendField(dst, "http", e.HTTP)
	dst = appendInt(dst, "status", int64(e.Status))
	dst = appendField(dst, "event_id", e.EventID)
	dst = appendField(dst, "mcp_session", e.MCPSession)
	dst = appendField(dst, "url", e.URL)
	dst = appendField(dst, "cut", e.Cut)
	dst = appendField(dst, "forged", e.Forged)
	dst = appendField(dst, "challenge", e.Challenge)
	if e.Standalone {
		dst = append(dst, `,"standalone":true`...)
	}
	return append(dst, '}', '\n')
}

// appendMessage writes a frame's JSON text, which isJSONObject accepted, as
// the message member: as it is, without escaping, so that a reader of the
// transcript gets the message as JSON rather than as a string.
func appendMessage[T string | []byte](dst []byte, text T) []byte {
	dst = append(dst, `,"message":`...)
	return append(dst, text...)
}

// AppendReceivedBody appends what AppendBody appends for the received event
// of m travelling in dir (an Event of type EventReceived after SetMessage),
// without the Event: the relay records most frames this way, and building
// the event (forty fields to clear, copy and check, and the frame copied
// into a string) cost as much as encoding it.
func AppendReceivedBody(dst []byte, dir Direction, m *Message) []byte {
	kind := m.Kind.String()
	dst = append(dst, `,"type":"received"`...)
	dst = appendField(dst, "dir", dir.String())
	dst = appendField(dst, "kind", kind)
	dst = appendField(dst, "id", m.ID)
	dst = appendField(dst, "method", m.Method)
	dst = appendField(dst, "progress_token", m.ProgressToken)
	dst = appendField(dst, "era", m.Era.String())
	dst = appendField(dst, "problem", m.Problem)
	dst = appendInt(dst, "size", int64(len(m.Raw)))
	switch b := m.Raw; {
	case !utf8.Valid(b):
		dst = appendName(dst, "raw_b64")
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, b)
		dst = append(dst, '"')
	case isMessageKind(kind) && isJSONLine(b):
		dst = appendMessage(dst, b[:len(b)-1])
	case len(b) > 0:
		dst = appendMember(dst, "raw", string(b))
	}
	return append(dst, '}', '\n')
}

// AppendRelayedHead appends the line that stands, in transcript format 3,
// for frames frames travelling in dir, read together and forwarded at once
// at time t: each frame's received event and its forwarded event, seq,
// seq+1, seq+2... The frames' size bytes go right after the line, as they
// came, one after the other; the reader cuts them after each newline and
// classifies them. Nothing in a frame is read or escaped to record it,
// which keeps a transcript close to the cost of copying the frames.
func AppendRelayedHead(dst []byte, seq, t int64, dir Direction, size, frames int) []byte {
	dst = AppendHead(dst, seq, t)
	dst = append(dst, `,"type":"received"`...)
	dst = appendField(dst, "dir", dir.String())
	dst = appendIntMember(dst, "bytes", int64(size))
	dst = appendIntMember(dst, "frames", int64(frames))
	return append(dst, `,"forwarded":true}`+"\n"...)
}

// AppendRelayedEventHead appends the line that stands, in transcript
// format 3, for the message of one SSE event that the HTTP proxy relayed
// untouched in exchange at time t: its received event (seq, with the
// event's id) and its forwarded event (seq+1). The message's size bytes go
// right after the line, as they came. They must hold no newline: the
// reader cuts frames there, and the event's would be two.
func AppendRelayedEventHead(dst []byte, seq, t int64, dir Direction, exchange int64, eventID string, size int) []byte {
	dst = AppendHead(dst, seq, t)
	dst = append(dst, `,"type":"received"`...)
	dst = appendField(dst, "dir", dir.String())
	dst = appendInt(dst, "exchange", exchange)
	dst = appendField(dst, "event_id", eventID)
	dst = appendIntMember(dst, "bytes", int64(size))
	return append(dst, `,"frames":1,"forwarded":true}`+"\n"...)
}

// AppendRelayedEventsHead appends the line that stands, in transcript
// format 4, for a run of SSE events that the HTTP proxy read together in
// exchange and relayed untouched at time t: the received event of each
// one's message (seq, seq+2...; with the event's id) and its forwarded
// event (seq+1, seq+3...). The run's size bytes go right after the line,
// as the server sent them: n message events, each of one data line,
// which the reader frames (sse.SplitRun) and classifies.
func AppendRelayedEventsHead(dst []byte, seq, t int64, dir Direction, exchange int64, size, n int) []byte {
	dst = AppendHead(dst, seq, t)
	dst = append(dst, `,"type":"received"`...)
	dst = appendField(dst, "dir", dir.String())
	dst = appendInt(dst, "exchange", exchange)
	dst = appendIntMember(dst, "bytes", int64(size))
	dst = appendIntMember(dst, "frames", int64(n))
	return append(dst, `,"forwarded":true,"sse":true}`+"\n"...)
}

// MaxRelayedEventID is the longest SSE event id AppendRelayedEventHead
// may be given: its line must stay shorter than the longest a reader
// takes for one that frames follow.
const MaxRelayedEventID = 256

// AppendForwardedLine appends the whole line of the forwarded event of
// the frame of event of, travelling in dir: what AppendLine appends for
// Event{Seq: seq, T: t, Type: EventForwarded, Dir: dir.String(), Of: of}.
func AppendForwardedLine(dst []byte, seq, t int64, dir Direction, of int64) []byte {
	dst = AppendHead(dst, seq, t)
	dst = append(dst, `,"type":"forwarded"`...)
	dst = appendField(dst, "dir", dir.String())
	dst = appendInt(dst, "of", of)
	return append(dst, '}', '\n')
}

// isMessageKind reports whether kind is one Classify gives only to a frame
// whose JSON structure it read whole and found well-formed.
func isMessageKind(kind string) bool {
	switch kind {
	case "request", "notification", "response", "error":
		return true
	}
	return false
}

// isJSONLine reports whether s, a frame whose JSON structure Classify found
// well-formed and whose bytes SetRaw found to be UTF-8, is a line whose
// text isJSONObject accepts, followed by a newline.
func isJSONLine[T string | []byte](s T) bool {
	n := len(s) - 1
	return n >= 0 && s[n] == '\n' && isJSONObject(s[:n])
}

// isJSONObject reports whether s, a frame whose JSON structure Classify
// found well-formed and whose bytes SetRaw found to be UTF-8, can stand in
// a transcript line as it is and be read back byte for byte: one object,
// nothing around it, and nothing encoding/json would refuse in its strings
// (control characters, unknown escapes), which Classify does not check.
func isJSONObject[T string | []byte](s T) bool {
	n := len(s)
	if n < 2 || s[0] != '{' || s[n-1] != '}' {
		return false
	}
	for i := 0; i < n; {
		if i+8 <= n {
			w := load64(s, i)
			care := hasZero(w^(ones*'\\')) | ((w - ones*0x20) & ^w & highs)
			if care == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(care) / 8
		}
		switch c := s[i]; {
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= n {
				return false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > n || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) || !isHex(s[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		default:
			i++
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// appendField and appendInt are small enough to be inlined, so that the
// many members an event leaves empty cost a comparison each, not a call.
func appendField(dst []byte, name, value string) []byte {
	if value == "" {
		return dst
	}
	return appendMember(dst, name, value)
}

func appendMember(dst []byte, name, value string) []byte {
	dst = appendName(dst, name)
	return appendString(dst, value)
}

func appendInt(dst []byte, name string, n int64) []byte {
	if n == 0 {
		return dst
	}
	return appendIntMember(dst, name, n)
}

func appendIntMember(dst []byte, name string, n int64) []byte {
	dst = appendName(dst, name)
	return strconv.AppendInt(dst, n, 10)
}

// appendName writes ,"name": before a member's value.
func appendName(dst []byte, name string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

func appendStrings(dst []byte, name string, values []string) []byte {
	if len(values) == 0 {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, `":[`...)
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, v)
	}
	return append(dst, ']')
}

// plain marks the ASCII bytes a JSON string may hold unescaped.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does; frames that are not UTF-8 are stored as base64 before
// they get here, so no peer byte is lost to this.
//
// A frame's text is mostly plain ASCII broken up by quotes every few bytes.
// The loop looks at eight bytes at a time and copies them whole up to the
// first that needs care, into room made once a chunk: it is the
// transcript's inner loop, and going byte by byte between quotes was most
// of its time.
func appendString(dst []byte, s string) []byte {
	if len(s) <= shortPlain && isPlain(s) {
		// Most strings of an event are short names (a type, a
		// direction, a method): the chunked loop's set-up would cost
		// more than they do.
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	// Room for the string with some escapes at once: a 64 MiB frame must
	// not be copied over and over as its encoding grows.
	dst = slices.Grow(dst, len(s)+len(s)/8+2)
	dst = append(dst, '"')
	const chunk = 1024
	for i := 0; i < len(s); {
		end := min(len(s), i+chunk)
		// An input byte becomes at most six (\u00XX, \ufffd); a rune
		// that crosses end adds at most three more; eight bytes are
		// stored at a time.
		if need := 6*(end-i) + 16; cap(dst)-len(dst) < need {
			dst = slices.Grow(dst, need)
		}
		n, buf := len(dst), dst[:cap(dst)]
		for i < end {
			if i+8 <= end {
				w := load64(s, i)
				binary.LittleEndian.PutUint64(buf[n:], w)
				care := careMask(w)
				if care == 0 {
					n += 8
					i += 8
					continue
				}
				// The lowest byte marked is exact (see hasZero): the
				// bytes before it are plain, and stay as stored.
				k := bits.TrailingZeros64(care) / 8
				n += k
				i += k
			}
			c := s[i]
			switch {
			case c < utf8.RuneSelf && plain[c]:
				buf[n] = c
				n++
				i++
			case c < utf8.RuneSelf:
				n += putEscape(buf[n:], c)
				i++
			default:
				r, size := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && size == 1 {
					n += copy(buf[n:], `\ufffd`)
				} else {
					n += copy(buf[n:], s[i:i+size])
				}
				i += size
			}
		}
		dst = buf[:n]
	}
	return append(dst, '"')
}

// shortPlain is the length up to which appendString first checks whether a
// string can be copied as it is.
const shortPlain = 64

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || !plain[c] {
			return false
		}
	}
	return true
}

// putEscape writes the JSON escape of the ASCII byte c at the start of b and
// returns its length.
func putEscape(b []byte, c byte) int {
	b[0] = '\\'
	switch c {
	case '"', '\\':
		b[1] = c
	case '\n':
		b[1] = 'n'
	case '\r':
		b[1] = 'r'
	case '\t':
		b[1] = 't'
	default:
		b[1], b[2], b[3], b[4], b[5] = 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]
		return 6
	}
	return 2
}

// ones has a one in each byte; ones*c repeats byte c eight times.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load64 reads the eight bytes of s from i as one word. Slicing first
// leaves one bounds check: indexing s[i+1]...s[i+7] after a check of s[i+7]
// kept all eight.
func load64[T string | []byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// careMask has a high bit set in each of the eight bytes in w that is a
// control character, a quote, a backslash or not ASCII, and may have false
// positives only after a true one.
func careMask(w uint64) uint64 {
	return (w & highs) | hasZero(w^(ones*'"')) | hasZero(w^(ones*'\\')) | ((w - ones*0x20) & ^w & highs)
}

// hasZero has a high bit set in each byte of x that is zero, and may have
// false positives only after a true one: the lowest set bit is exact.
func hasZero(x uint64) uint64 { return (x - ones) & ^x & highs }
