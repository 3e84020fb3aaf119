package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// format3Frames are frames of every shape a stdio peer sends: JSON-RPC,
// not JSON, not UTF-8, a \r\n line, spaces around, and the unterminated end
// of a stream.
var format3Frames = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p"}}}` + "\n",
	`{"jsonrpc":"2.0","id":"a","result":{"t":"é \"quoted\" \u0007"}}` + "\r\n",
	"not json\n",
	"\n",
	"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"t\":\"\xff\"}}\n",
	`  {"jsonrpc":"2.0","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}  ` + "\n",
	`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`,
}

// pairs are the events the relay records for frames no fault touches: for
// each, received (classified) and forwarded at the same time.
func pairs(dir Direction, seq, t int64, frames []string) []Event {
	var out []Event
	for _, f := range frames {
		m := Classify([]byte(f))
		e := Event{Seq: seq, T: t, Type: EventReceived}
		e.SetMessage(dir, &m)
		out = append(out, e, Event{Seq: seq + 1, T: t, Type: EventForwarded, Dir: dir.String(), Of: seq})
		seq += 2
	}
	return out
}

func readAllEvents(t *testing.T, b []byte) []Event {
	t.Helper()
	var out []Event
	if err := ReadTranscript(bytes.NewReader(b), func(e Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Frames stored as they came (format 3), several after one line or each
// after its own, read back as the events format 2 wrote line by line.
func TestRelayedFramesReadAsTheirEvents(t *testing.T) {
	session := Event{Seq: 1, Type: EventSession, Format: TranscriptFormat}
	last := len(format3Frames) - 1
	want := append([]Event{session}, pairs(ToServer, 2, 10, format3Frames[:last])...)
	want = append(want, pairs(ToClient, 2+2*int64(last), 12, format3Frames[last:])...)

	var format2 bytes.Buffer
	for _, e := range want {
		format2.Write(e.AppendLine(nil))
	}
	if diff := cmp.Diff(want, readAllEvents(t, format2.Bytes())); diff != "" {
		t.Fatalf("format 2 (-want +read):\n%s", diff)
	}

	together := session.AppendLine(nil)
	run := strings.Join(format3Frames[:last], "")
	together = AppendRelayedHead(together, 2, 10, ToServer, len(run), last)
	together = append(together, run...)
	together = AppendRelayedHead(together, 2+2*int64(last), 12, ToClient, len(format3Frames[last]), 1)
	together = append(together, format3Frames[last]...)
	if diff := cmp.Diff(want, readAllEvents(t, together)); diff != "" {
		t.Errorf("format 3, one line for the frames of a read (-want +read):\n%s", diff)
	}

	apart := session.AppendLine(nil)
	for i, f := range format3Frames {
		at, dir := int64(10), ToServer
		if i == last {
			at, dir = 12, ToClient
		}
		apart = AppendRelayedHead(apart, 2+2*int64(i), at, dir, len(f), 1)
		apart = append(apart, f...)
	}
	if diff := cmp.Diff(want, readAllEvents(t, apart)); diff != "" {
		t.Errorf("format 3, one line a frame (-want +read):\n%s", diff)
	}

	for name, b := range map[string][]byte{"format 2": format2.Bytes(), "format 3 together": together, "format 3 apart": apart} {
		if n, err := CountEvents(bytes.NewReader(b)); err != nil || n != len(want) {
			t.Errorf("%s: CountEvents = %d, %v; want %d", name, n, err, len(want))
		}
	}
}

// A line of format 2 whose message has a member named "bytes" is not a
// line frames follow.
func TestCountEventsReadsOnlyTheMembersOfTheLine(t *testing.T) {
	e := Event{Seq: 1, T: 1, Type: EventReceived}
	m := Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"bytes":3,"frames":2,"forwarded":true}}` + "\n"))
	e.SetMessage(ToServer, &m)
	fwd := Event{Seq: 2, T: 1, Type: EventForwarded, Dir: "c2s", Of: 1}
	b := append(e.AppendLine(nil), fwd.AppendLine(nil)...)
	if n, err := CountEvents(bytes.NewReader(b)); err != nil || n != 2 {
		t.Errorf("CountEvents = %d, %v; want 2", n, err)
	}
	if got := readAllEvents(t, b); len(got) != 2 || got[0].Raw != string(m.Raw) {
		t.Errorf("read %+v", got)
	}
}

// Frames that do not add up are refused, naming the line.
func TestBrokenRelayedFramesAreRefused(t *testing.T) {
	head := func(size, frames int) string {
		return string(AppendRelayedHead(nil, 2, 1, ToServer, size, frames))
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cut short", head(100, 1) + `{"jsonrpc":"2.0"}` + "\n", "cut short"},
		{"more frames than said", head(6, 1) + "a\nb\nc\n", "3 frames in its bytes; the line says 1"},
		{"no frames member", `{"seq":2,"t_us":1,"type":"received","dir":"c2s","bytes":2}` + "\na\n", "0 frames"},
		{"after a forwarded event", `{"seq":2,"t_us":1,"type":"forwarded","dir":"c2s","bytes":2,"frames":1}` + "\na\n", "only a received event"},
		{"no direction", `{"seq":2,"t_us":1,"type":"received","bytes":2,"frames":1}` + "\na\n", "direction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"seq":1,"t_us":0,"type":"session"}` + "\n" + tc.in
			err := ReadTranscript(strings.NewReader(in), func(Event) error { return nil })
			if err == nil || !strings.Contains(err.Error(), "transcript line 2") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one naming line 2 and saying %q", err, tc.want)
			}
		})
	}
}

// A run of SSE events the HTTP proxy relayed untouched (format 4) reads
// back as each message's received event, with its event id and exchange,
// and its forwarded event: what the proxy records event by event.
func TestRelayedEventRunsReadAsTheirEvents(t *testing.T) {
	session := Event{Seq: 1, Type: EventSession, Format: TranscriptFormat}
	messages := []struct{ id, data string }{
		{"1", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`},
		{"", "not json"},
		{`q"\é`, "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"t\":\"\xff\"}}"},
		{"4", `{"jsonrpc":"2.0","id":1,"result":{}}`},
	}
	want := []Event{session}
	var run strings.Builder
	for i, msg := range messages {
		m := Classify([]byte(msg.data))
		e := Event{Seq: 2 + 2*int64(i), T: 10, Type: EventReceived, Exchange: 3, EventID: msg.id}
		e.SetMessage(ToClient, &m)
		want = append(want, e, Event{Seq: e.Seq + 1, T: 10, Type: EventForwarded, Dir: "s2c", Of: e.Seq, Exchange: 3})
		if msg.id != "" {
			run.WriteString("id: " + msg.id + "\n")
		}
		if i == 3 {
			run.WriteString("event: message\n")
		}
		run.WriteString("data: " + msg.data + "\n\n")
	}
	b := session.AppendLine(nil)
	b = AppendRelayedEventsHead(b, 2, 10, ToClient, 3, run.Len(), len(messages))
	b = append(b, run.String()...)
	b = (&Event{Seq: 10, T: 11, Type: EventHTTP, Exchange: 3, Detail: "stream ended: the server closed it"}).AppendLine(b)
	want = append(want, Event{Seq: 10, T: 11, Type: EventHTTP, Exchange: 3, Detail: "stream ended: the server closed it"})
	if diff := cmp.Diff(want, readAllEvents(t, b)); diff != "" {
		t.Errorf("a run of events (-want +read):\n%s", diff)
	}
	if n, err := CountEvents(bytes.NewReader(b)); err != nil || n != len(want) {
		t.Errorf("CountEvents = %d, %v; want %d", n, err, len(want))
	}
}

// A run that is not what the proxy records as one is refused, naming the
// line, rather than read as events it did not relay.
func TestBrokenEventRunsAreRefused(t *testing.T) {
	head := func(exchange int64, run string, n int) string {
		return string(AppendRelayedEventsHead(nil, 2, 1, ToClient, exchange, len(run), n)) + run
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"more events than said", head(3, "data: {}\n\ndata: {}\n\n", 1), "2 events in its bytes; the line says 1"},
		{"a comment", head(3, ": c\n\n", 1), "not a message event"},
		{"unfinished", head(3, "data: {}\n", 1), "not a message event"},
		{"no exchange", head(0, "data: {}\n\n", 1), "outside an HTTP exchange"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"seq":1,"t_us":0,"type":"session"}` + "\n" + tc.in
			err := ReadTranscript(strings.NewReader(in), func(Event) error { return nil })
			if err == nil || !strings.Contains(err.Error(), "transcript line 2") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one naming line 2 and saying %q", err, tc.want)
			}
		})
	}
}
