package httpchaos_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// A liveness probe goes to the server on an exchange of its own, with the
// client's session, in the era the client speaks; its answer is recorded
// and dropped, and the judge reads the server as alive.
func TestProbeAsksTheServerInTheClientsEra(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			r := startRig(t, 1)
			c := r.dial(t, era.protocol)
			if _, err := call(c, testTimeout, "echo", map[string]any{"text": "hi"}, nil); err != nil {
				t.Fatal(err)
			}
			r.proxy.Probe("a test asks")
			c.Close()
			v := r.end(t)
			if len(v.Findings) != 0 {
				t.Errorf("findings: %+v", v.Findings)
			}
			method := "ping"
			if era.protocol == "" {
				method = "server/discover"
			}
			var got []string
			for _, e := range r.rec.Events() {
				switch {
				case e.Type == wire.EventProbe:
					got = append(got, "probe "+e.Method+" "+e.Detail)
				case e.Type == wire.EventReceived && e.Dir == "s2c" && e.ID != "" && e.ID[0] == '"':
					got = append(got, "answer "+e.Kind)
				case e.Type == wire.EventDropped && e.Dir == "s2c":
					got = append(got, "dropped: "+e.Detail)
				}
			}
			want := []string{"probe " + method + " a test asks", "answer response", "dropped: the answer to a liveness probe of mcpchaos"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("probe events (-want +got):\n%s", diff)
			}
		})
	}
}

// A liveness probe toward the client goes on its GET stream; mcp-go's
// client answers the ping by POST, and the proxy records the answer and
// swallows it: the server never sees an answer to a request it did not
// send. With no stream open toward the client, the probe is recorded as
// not delivered, which the judge does not count; in the stateless era,
// which has no requests from the server, none is sent.
func TestProbeClientOnTheGETStream(t *testing.T) {
	t.Run("GET stream", func(t *testing.T) {
		r := startRig(t, 1)
		c := r.dial(t, mcp.ProtocolVersion20251125, transport.WithContinuousListening())
		r.waitFor(t, func(e wire.Event) bool { return e.Type == wire.EventHTTP && strings.HasPrefix(e.HTTP, "GET ") })
		r.waitFor(t, func(e wire.Event) bool {
			return e.Type == wire.EventHTTP && e.Status == 200 && strings.HasPrefix(e.Detail, "response: text/event-stream") && r.method(e.Exchange) == "GET"
		})
		// The stream's head is recorded before the relay registers the
		// stream as one to write to: a probe sent in between finds none
		// (CI, under load), and is recorded as not delivered. The test
		// asks again until one goes on the stream.
		for delivered, deadline := false, time.Now().Add(testTimeout); !delivered; {
			if time.Now().After(deadline) {
				t.Fatalf("no probe went on the GET stream within %v", testTimeout)
			}
			r.proxy.ProbeClient("a test asks")
			delivered = !slices.ContainsFunc(r.rec.Events(), func(e wire.Event) bool {
				return e.Type == wire.EventProbe && e.Seq == lastProbe(r) && strings.Contains(e.Detail, "not delivered")
			})
			if !delivered {
				time.Sleep(10 * time.Millisecond)
			}
		}
		r.waitFor(t, func(e wire.Event) bool { return e.Type == wire.EventDropped })
		c.Close()
		if v := r.end(t); len(v.Findings) != 0 {
			t.Errorf("findings: %+v", v.Findings)
		}
		// The probe is recorded once written, so the client's answer may
		// be recorded first (the judge pairs them either way).
		want := []string{"dropped: the answer to a liveness probe of mcpchaos", "probe s2c ping on GET: a test asks", "received c2s response"}
		got := slices.DeleteFunc(probeEvents(r), func(s string) bool { return strings.Contains(s, "not delivered") })
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("probe events (-want +got):\n%s", diff)
		}
	})
	t.Run("no stream", func(t *testing.T) {
		r := startRig(t, 1)
		c := r.dial(t, mcp.ProtocolVersion20251125)
		r.proxy.ProbeClient("a test asks")
		c.Close()
		r.end(t)
		want := []string{"probe s2c ping on : a test asks; not delivered: no event stream is open toward the client"}
		if diff := cmp.Diff(want, probeEvents(r)); diff != "" {
			t.Errorf("probe events (-want +got):\n%s", diff)
		}
	})
	t.Run("stateless", func(t *testing.T) {
		r := startRig(t, 1)
		c := r.dial(t, "")
		r.proxy.ProbeClient("a test asks")
		c.Close()
		r.end(t)
		if got := probeEvents(r); len(got) != 0 {
			t.Errorf("probe events in the stateless era: %q", got)
		}
	})
}

// method is the HTTP method of exchange n.
func (r *rig) method(n int64) string {
	for _, e := range r.rec.Events() {
		if e.Type == wire.EventHTTP && e.Exchange == n && e.HTTP != "" {
			m, _, _ := strings.Cut(e.HTTP, " ")
			return m
		}
	}
	return ""
}

// lastProbe is the seq of the latest probe event.
func lastProbe(r *rig) int64 {
	var seq int64
	for _, e := range r.rec.Events() {
		if e.Type == wire.EventProbe {
			seq = e.Seq
		}
	}
	return seq
}

// probeEvents are the probe toward the client (with the method of the
// exchange it went on) and what became of its answer.
func probeEvents(r *rig) []string {
	var got []string
	for _, e := range r.rec.Events() {
		switch {
		case e.Type == wire.EventProbe:
			got = append(got, "probe "+e.Dir+" "+e.Method+" on "+r.method(e.Exchange)+": "+e.Detail)
		case e.Type == wire.EventReceived && e.Dir == "c2s" && strings.HasPrefix(e.ID, wire.ProbeIDPrefix):
			got = append(got, "received c2s "+e.Kind)
		case e.Type == wire.EventDropped:
			got = append(got, "dropped: "+e.Detail)
		}
	}
	return got
}

// A liveness probe a server refuses with an error status (its session is
// gone) was answered by the status; server-everything writes the body as
// {"jsonrpc":"2.0","error":{...}} with no id, as the specification lets an
// error status's body be. It is recorded as it came, and judged as the
// status's body: not a frame that breaks JSON-RPC (a false
// not-an-mcp-message under end-session-task, issue 29).
func TestProbeRefusedByAnErrorStatus(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
	})
	_, p, rec := proxyTo(t, upstream, "/mcp")
	p.Probe("a test asks")
	events := rec.Events()
	var got []string
	for _, e := range events {
		if e.Type == wire.EventReceived || e.Type == wire.EventDropped {
			got = append(got, e.Type+" "+e.Kind)
		}
	}
	if diff := cmp.Diff([]string{"received invalid", "dropped "}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	seed := uint64(1)
	events = append([]wire.Event{{Type: wire.EventSession, Seed: &seed, URL: "http://upstream/mcp", Role: "server"}}, events...)
	if v := judge.Session(events); len(v.Findings) != 0 {
		t.Errorf("findings %+v, want none: the body is the error status's", v.Findings)
	}
}
