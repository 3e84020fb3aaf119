package httpchaos_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
)

// benchUpstream answers every POST with one JSON-RPC answer, as a JSON
// body, or as an event stream of events-1 progress notifications and the
// answer: the cost measured is the proxy's, not a server's. With flushEach
// the stream is flushed event by event, as the SDK servers send progress;
// without it the whole stream goes in one write, the proxy's worst case
// (every event framed, recorded and written, against one copy direct).
func benchUpstream(events int, flushEach bool) http.Handler {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`
	var stream bytes.Buffer
	for i := 1; i < events; i++ {
		fmt.Fprintf(&stream, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":%d}}\n\n", i, i)
	}
	fmt.Fprintf(&stream, "id: %d\ndata: %s\n\n", events, answer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if events == 0 {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, answer)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if !flushEach {
			_, _ = w.Write(stream.Bytes())
			return
		}
		rest := stream.Bytes()
		for len(rest) > 0 {
			n := bytes.Index(rest, []byte("\n\n")) + 2
			_, _ = w.Write(rest[:n])
			w.(http.Flusher).Flush()
			rest = rest[n:]
		}
	})
}

// BenchmarkProxy compares requests through the proxy (with the transcript
// streamed to a discarding recorder, as --report does, and an empty or a
// never-firing fault plan) with the same requests sent to the server
// directly, and, for scale, through a TCP forwarder (the extra hop alone),
// a minimal net/http proxy (the floor of any proxy that reads HTTP with
// net/http) and the standard library's reverse proxy: requests per second
// and p50/p99 latency.
func BenchmarkProxy(b *testing.B) {
	never, err := faults.Parse("drop:on=c2s:request:never/this")
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name      string
		events    int
		flushEach bool
	}{{"json", 0, false}, {"sse-1000", 1000, true}, {"sse-1000-burst", 1000, false}} {
		upstream := httptest.NewServer(benchUpstream(shape.events, shape.flushEach))
		for _, via := range []string{"direct", "tcpsplice", "minimal", "reverseproxy", "proxy", "proxy+plan"} {
			b.Run(shape.name+"/"+via, func(b *testing.B) {
				target := benchTarget(b, via, upstream.URL, never)
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					resp, err := http.Post(target, "application/json", strings.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if n == 0 {
						b.Fatal("empty answer")
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
		upstream.Close()
	}
}

// benchTarget is the URL a benchmark's client posts to, to reach the
// upstream at upstreamURL the way via says: directly, or through a TCP
// forwarder, a minimal net/http proxy, the standard library's reverse
// proxy, or mcpchaos's proxy with an empty plan or one (never) that never
// fires. What it starts stops with the benchmark.
func benchTarget(b *testing.B, via, upstreamURL string, never *faults.Fault) string {
	target := upstreamURL + "/mcp"
	switch via {
	case "tcpsplice":
		// A TCP forwarder that copies bytes and parses nothing:
		// the cost of the extra hop alone, the floor of any
		// proxy on this machine.
		u, _ := url.Parse(upstreamURL)
		target = spliceTo(b, u.Host) + "/mcp"
	case "minimal":
		// The least a net/http proxy does: read the body, send
		// it on with an http.Client, copy the answer back. What
		// it costs over tcpsplice is net/http's own, on both
		// sides of the hop; no proxy built on it can do better.
		h, client := minimalProxy(upstreamURL + "/mcp")
		front := httptest.NewServer(h)
		b.Cleanup(func() { front.Close() })
		b.Cleanup(func() { client.CloseIdleConnections() })
		target = front.URL + "/mcp"
	case "reverseproxy":
		// The standard library's reverse proxy: the floor a
		// proxy that looks at nothing pays for the extra hop.
		u, _ := url.Parse(upstreamURL)
		front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(u) }, FlushInterval: -1, ErrorLog: log.New(io.Discard, "", 0)})
		b.Cleanup(func() { front.Close() })
		target = front.URL + "/mcp"
	case "proxy", "proxy+plan":
		u, _ := url.Parse(target)
		var fs []*faults.Fault
		if via == "proxy+plan" {
			fs = append(fs, never)
		}
		p, err := httpchaos.New(httpchaos.Config{Upstream: u, Plan: faults.NewPlan(1, fs), Recorder: chaos.NewJSONLRecorder(io.Discard)})
		if err != nil {
			b.Fatal(err)
		}
		front := httptest.NewServer(p)
		b.Cleanup(func() { front.Close() })
		b.Cleanup(func() { p.Close("") })
		target = front.URL + "/mcp"
	}
	return target
}

// minimalProxy relays each POST to target and its answer back, flushing
// as the answer comes, with nothing looked at or recorded.
func minimalProxy(target string) (http.Handler, *http.Client) {
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 64}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(flushWriter{w}, resp.Body)
	}), client
}

// flushWriter flushes each write, so that a stream is relayed as it comes.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	f.w.(http.Flusher).Flush()
	return n, err
}

// spliceTo listens on a loopback port and copies every connection to and
// from addr; it returns the URL to reach it and stops with the benchmark.
func spliceTo(b *testing.B, addr string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var conns sync.WaitGroup
	b.Cleanup(func() {
		ln.Close()
		// The client's idle keep-alive connections hold the copies open.
		http.DefaultClient.CloseIdleConnections()
		conns.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			conns.Add(2)
			go func() { defer conns.Done(); _, _ = io.Copy(up, c); up.Close() }()
			go func() { defer conns.Done(); _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return "http://" + ln.Addr().String()
}

// BenchmarkProxyConcurrent is BenchmarkProxy's JSON row under load: eight
// clients at once for each processor, so that the machine's processors, not
// the round trips of one client, bound the rate. The proxy then costs what
// its CPU time per request costs, as it would in front of a busy server.
func BenchmarkProxyConcurrent(b *testing.B) {
	never, err := faults.Parse("drop:on=c2s:request:never/this")
	if err != nil {
		b.Fatal(err)
	}
	upstream := httptest.NewServer(benchUpstream(0, false))
	defer upstream.Close()
	for _, via := range []string{"direct", "tcpsplice", "minimal", "reverseproxy", "proxy", "proxy+plan"} {
		b.Run("json/"+via, func(b *testing.B) {
			target := benchTarget(b, via, upstream.URL, never)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer client.CloseIdleConnections()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Post(target, "application/json", strings.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if n == 0 {
						b.Error("empty answer")
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
