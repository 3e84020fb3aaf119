package httpchaos_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/wire"
)

// longWay hides a recorder's paired methods, so that the proxy records
// every message as its own events, classified and encoded.
type longWay struct{ *chaos.MemoryRecorder }

func (r longWay) Record(e wire.Event) int64 { return r.MemoryRecorder.Record(e) }
func (r longWay) Now() int64                { return r.MemoryRecorder.Now() }

// The messages of a stream relayed untouched are recorded from their bytes,
// unclassified, after a line that stands for their received and forwarded
// events (format 3): read back, they are the events the long way records,
// message for message, whatever the events hold: an id to escape, data
// split over lines (recorded the long way), no JSON, no UTF-8.
func TestRelayedEventsReadBackAsRecordedTheLongWay(t *testing.T) {
	stream := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"two lines\"}}\n\n" +
		"data: not json\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"t\":\"\xff\"}}\n\n" +
		"id: a\"b\\c\u00e9\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":2}}\r\n\r\n" +
		"id: " + strings.Repeat("x", wire.MaxRelayedEventID+1) + "\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":3}}\n\n" +
		"id: r\"\\\u00e9\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":4}}\n\n" +
		": a comment, so that the event goes alone\nid: c1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":5}}\n\n" +
		"event: ping\ndata: \n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"é \\\"quoted\\\"\"}]}}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	}))
	t.Cleanup(up.Close)
	upstream, _ := url.Parse(up.URL + "/mcp")
	session := func(rec httpchaos.Recorder) string {
		p, err := httpchaos.New(httpchaos.Config{Upstream: upstream, Plan: faults.NewPlan(1, nil), Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		front := httptest.NewServer(p)
		defer front.Close()
		resp, err := http.Post(front.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p.Close("the test ended")
		return string(got)
	}
	messages := func(events []wire.Event) []wire.Event {
		var out []wire.Event
		for _, e := range events {
			if e.Type == wire.EventReceived || e.Type == wire.EventForwarded || e.Type == wire.EventDropped {
				out = append(out, e)
			}
		}
		return out
	}

	mem := chaos.NewMemoryRecorder()
	if got := session(longWay{mem}); got != stream {
		t.Fatalf("the client got %q; want the stream as the server sent it", got)
	}
	want := messages(mem.Events())

	var file bytes.Buffer
	jr := chaos.NewJSONLRecorder(&file)
	var seen []wire.Event
	jr.OnEvent = func(e wire.Event) { seen = append(seen, e) }
	if got := session(jr); got != stream {
		t.Fatalf("the client got %q; want the stream as the server sent it", got)
	}
	if err := jr.Flush(); err != nil {
		t.Fatal(err)
	}
	fromBytes, runs := 0, 0
	for _, m := range regexp.MustCompile(`"frames":([0-9]+),"forwarded":true(,"sse":true)?`).FindAllStringSubmatch(file.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		fromBytes += n
		if m[2] != "" {
			runs++
		}
	}
	// Eight messages of one data line: seven go as three runs (their ids
	// in the bytes, however long, "\r\n" line ends as they came), and the
	// one after a comment alone, after a line that holds its id.
	if fromBytes != 8 || runs != 3 {
		t.Errorf("%d messages recorded from their bytes, %d runs of them; want 8, 3 runs", fromBytes, runs)
	}
	var back []wire.Event
	if err := wire.ReadTranscript(&file, func(e wire.Event) error { back = append(back, e); return nil }); err != nil {
		t.Fatal(err)
	}
	ignoreTime := cmpopts.IgnoreFields(wire.Event{}, "T")
	if diff := cmp.Diff(want, messages(back), ignoreTime); diff != "" {
		t.Errorf("messages (-the long way +read back):\n%s", diff)
	}
	if diff := cmp.Diff(back, seen); diff != "" {
		t.Errorf("events (-read back +OnEvent):\n%s", diff)
	}
	// The memory recorder takes the paired path too, as tests see it.
	mem = chaos.NewMemoryRecorder()
	session(mem)
	if diff := cmp.Diff(want, messages(mem.Events()), ignoreTime); diff != "" {
		t.Errorf("messages (-the long way +paired, in memory):\n%s", diff)
	}
}
