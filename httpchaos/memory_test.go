package httpchaos_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
)

// relayLargeStream sends total bytes of progress events through a proxy
// (transcript streamed to a discarding recorder) and returns the peak heap
// in use while they went, above the heap before: the proxy frames and
// flushes event by event, so the peak must not grow with the stream.
func relayLargeStream(tb testing.TB, total int) (peak uint64) {
	tb.Helper()
	pad := strings.Repeat("x", 4000)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i, sent := 1, 0; sent < total; i++ {
			n, err := fmt.Fprintf(w, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":%d,\"message\":%q}}\n\n", i, i, pad)
			if err != nil {
				return
			}
			sent += n
		}
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	p, err := httpchaos.New(httpchaos.Config{Upstream: u, Plan: faults.NewPlan(1, nil), Recorder: chaos.NewJSONLRecorder(io.Discard)})
	if err != nil {
		tb.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	defer p.Close("")

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var top atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > top.Load() {
				top.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	resp, err := http.Post(front.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long"}}`))
	if err != nil {
		tb.Fatal(err)
	}
	got, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	close(done)
	<-sampled
	if err != nil || got < int64(total) {
		tb.Fatalf("relayed %d bytes of %d (%v)", got, total, err)
	}
	if top.Load() < before.HeapInuse {
		return 0
	}
	return top.Load() - before.HeapInuse
}

func TestLargeStreamMemoryStaysFlat(t *testing.T) {
	const total = 32 << 20
	peak := relayLargeStream(t, total)
	t.Logf("peak heap above the start: %.1f MiB", float64(peak)/(1<<20))
	if peak > 16<<20 {
		t.Errorf("relaying a %d MiB stream raised the heap by %.1f MiB: the stream is being held, not relayed event by event", total>>20, float64(peak)/(1<<20))
	}
}

// BenchmarkLargeStream reports the peak heap while a 100 MB stream goes
// through the proxy.
func BenchmarkLargeStream(b *testing.B) {
	const total = 100 << 20
	var peak uint64
	for range b.N {
		peak = max(peak, relayLargeStream(b, total))
	}
	b.SetBytes(total)
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
