package httpchaos_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

// progressEvent is the i-th event of the streams below: a progress
// notification with an id.
func progressEvent(i int) string {
	return fmt.Sprintf("id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":%d}}\n\n", i, i)
}

// postStream POSTs a tools/call through the proxy at front and returns the
// answer's body.
func postStream(t *testing.T, front string) io.ReadCloser {
	t.Helper()
	resp, err := postToolCall(front, "x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp.Body
}

// postToolCall POSTs a tools/call of the tool name through the proxy at front, as
// a client that takes a JSON answer or a stream.
func postToolCall(front, name string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, front, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`"}}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return http.DefaultClient.Do(req)
}

// readEvent reads one event's bytes, blank line included.
func readEvent(br *bufio.Reader) (string, error) {
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		ev.WriteString(line)
		if err != nil || line == "\n" {
			return ev.String(), err
		}
	}
}

// An event the server writes alone reaches the client before the server
// writes the next: events that come together leave together, but none
// waits for one that has not come. The server here writes each event only
// once the client has read the one before it, so an event held back would
// hold the stream for good.
func TestAnEventAloneIsNotHeldForTheNext(t *testing.T) {
	const events = 5
	for _, tc := range []struct{ name, spec string }{
		{"no fault", ""},
		// Weighed against every event toward the client, acting on none.
		{"a plan that never acts", "drop:on=s2c:notification:never/this"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := make(chan int, events)
			upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 1; i <= events; i++ {
					_, _ = io.WriteString(w, progressEvent(i))
					w.(http.Flusher).Flush()
					select {
					case <-read:
					case <-time.After(testTimeout):
						t.Errorf("event %d did not reach the client before the server wrote the next", i)
						return
					case <-r.Context().Done():
						return
					}
				}
			})
			var specs []string
			if tc.spec != "" {
				specs = append(specs, tc.spec)
			}
			front, _, rec := proxyTo(t, upstream, "/mcp", specs...)
			br := bufio.NewReader(postStream(t, front))
			for i := 1; i <= events; i++ {
				got, err := readEvent(br)
				if err != nil || got != progressEvent(i) {
					t.Fatalf("event %d: got %q (%v), want %q", i, got, err, progressEvent(i))
				}
				read <- i
			}
			forwarded := 0
			for _, e := range rec.Events() {
				if e.Type == wire.EventForwarded && e.Dir == wire.ToClient.String() {
					forwarded++
				}
			}
			if forwarded != events {
				t.Errorf("recorded %d events forwarded to the client, want %d", forwarded, events)
			}
		})
	}
}

// Events the server writes in one go leave the proxy together, each still
// framed, weighed by the plan and recorded, and a fault acts between two
// of them as its trigger says: the client gets exactly the events before
// it, then what the fault makes of the rest.
func TestEventsThatCameTogether(t *testing.T) {
	const events = 6
	var burst strings.Builder
	for i := 1; i <= events; i++ {
		burst.WriteString(progressEvent(i))
	}
	eventsOf := func(ns ...int) string {
		var b strings.Builder
		for _, n := range ns {
			b.WriteString(progressEvent(n))
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, spec string
		want       string
		// cut says the client's connection ends after want.
		cut bool
		// heldBefore is the event a delay holds: the ones before it come
		// at once, it and the rest after the delay.
		heldBefore int
	}{
		{name: "no fault", want: burst.String()},
		{name: "a plan that never acts", spec: "drop:on=s2c:notification:never/this", want: burst.String()},
		{name: "drop the third", spec: "drop:on=s2c:notification:notifications/progress,nth=3", want: eventsOf(1, 2, 4, 5, 6)},
		{name: "duplicate the second", spec: "duplicate:on=s2c:notification:notifications/progress,nth=2", want: eventsOf(1, 2, 2, 3, 4, 5, 6)},
		{name: "cut after the third", spec: "eof:on=s2c:notification:notifications/progress,nth=3", want: eventsOf(1, 2, 3), cut: true},
		{name: "delay the fourth", spec: "delay:on=s2c:notification:notifications/progress,nth=4,for=300ms", want: burst.String(), heldBefore: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, burst.String())
			})
			var specs []string
			if tc.spec != "" {
				specs = append(specs, tc.spec)
			}
			front, _, rec := proxyTo(t, upstream, "/mcp", specs...)
			br := bufio.NewReader(postStream(t, front))
			var got strings.Builder
			var at []time.Time
			var err error
			for {
				var ev string
				ev, err = readEvent(br)
				got.WriteString(ev)
				if err != nil {
					break
				}
				at = append(at, time.Now())
			}
			if got.String() != tc.want {
				t.Errorf("the client got\n%s\nwant\n%s", got.String(), tc.want)
			}
			if cut := err != io.EOF; cut != tc.cut {
				t.Errorf("the stream ended with %v; cut by the proxy: %v, want %v", err, cut, tc.cut)
			}
			if n := tc.heldBefore; n > 0 && len(at) >= n {
				if d := at[n-1].Sub(at[n-2]); d < 250*time.Millisecond {
					t.Errorf("event %d came %v after event %d: the delay held the events before it too", n, d, n-1)
				}
			}
			// The client's call and every event, or, when the cut closed the
			// server's side too, the events up to the cut.
			want := events + 1
			if tc.cut {
				want = 4
			}
			if received := messages(rec.Events(), wire.EventReceived); len(received) != want {
				t.Errorf("recorded %d messages received, want %d: %q", len(received), want, received)
			}
		})
	}
}

// An event larger than the proxy's read buffer, between two that share a
// write with it, passes whole and in order, and is recorded whole.
func TestAnEventLargerThanTheReadBuffer(t *testing.T) {
	big := fmt.Sprintf("id: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}\n\n", strings.Repeat("x", 300<<10))
	stream := progressEvent(1) + big + progressEvent(3)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	})
	front, _, rec := proxyTo(t, upstream, "/mcp")
	got, err := io.ReadAll(postStream(t, front))
	if err != nil || string(got) != stream {
		t.Fatalf("the client got %d bytes (%v), want the server's %d", len(got), err, len(stream))
	}
	var sizes []int
	for _, e := range rec.Events() {
		if e.Type == wire.EventReceived && e.Dir == wire.ToClient.String() {
			sizes = append(sizes, e.Size)
		}
	}
	want := []int{len(progressEvent(1)) - len("id: 1\ndata: \n\n"), len(big) - len("id: 2\ndata: \n\n"), len(progressEvent(3)) - len("id: 3\ndata: \n\n")}
	if !slices.Equal(sizes, want) {
		t.Errorf("recorded messages of %v bytes, want %v", sizes, want)
	}
}

// Each stream's reader gives its buffer to the next stream once the relay
// is done with it (sse.Reader.Release). Streams one after another and side
// by side must still each reach their client, and the record, exactly as
// their server sent them: in runs, and event by event when a plan watches
// the server's events.
func TestStreamsKeepTheirOwnBytes(t *testing.T) {
	const clients, rounds = 6, 8
	streamOf := func(name string, n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "id: %s-%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%q,\"progress\":%d}}\n\n", name, i, name, i)
		}
		return b.String()
	}
	// Streams of different lengths, in two writes: what one stream left in
	// a buffer would show past the end of a shorter one.
	sizeOf := func(c, r int) int { return 1 + (c*rounds+r)*7%40 }
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sent struct {
			Params struct{ Name string } `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&sent); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var c, round int
		if _, err := fmt.Sscanf(sent.Params.Name, "c%dr%d", &c, &round); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		stream := streamOf(sent.Params.Name, sizeOf(c, round))
		w.Header().Set("Content-Type", "text/event-stream")
		half := strings.Index(stream[len(stream)/2:], "\n\n") + len(stream)/2 + 2
		_, _ = io.WriteString(w, stream[:half])
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, stream[half:])
	})
	for _, tc := range []struct{ name, spec string }{
		{"runs", ""},
		{"event by event", "drop:on=s2c:notification:never/this"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var specs []string
			if tc.spec != "" {
				specs = append(specs, tc.spec)
			}
			front, _, rec := proxyTo(t, upstream, "/mcp", specs...)
			var wg sync.WaitGroup
			errs := make(chan error, clients*rounds)
			for c := range clients {
				wg.Go(func() {
					for r := range rounds {
						name := fmt.Sprintf("c%dr%d", c, r)
						got, err := postCall(front, name)
						if want := streamOf(name, sizeOf(c, r)); err != nil || got != want {
							errs <- fmt.Errorf("%s: the client got\n%s(%v)\nwant\n%s", name, got, err, want)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			got := map[string]int{}
			for _, e := range rec.Events() {
				if e.Type == wire.EventReceived && e.Dir == wire.ToClient.String() {
					got[e.ProgressToken]++
				}
			}
			want := map[string]int{}
			for c := range clients {
				for r := range rounds {
					want[fmt.Sprintf(`"c%dr%d"`, c, r)] = sizeOf(c, r)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("messages recorded from the server by progress token (-want +got):\n%s", diff)
			}
		})
	}
}

// postCall is postToolCall, with the whole answer read.
func postCall(front, name string) (string, error) {
	resp, err := postToolCall(front, name)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}
