//go:build unix

package chaos

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The relay is measured against a direct pipe to the same child (the test
// binary as cat), so both sides pay for the child and the pipes and the
// difference is the relay: two more pipe hops, framing, classification and
// (optionally) the transcript.

type benchPath struct {
	name  string
	start func(b *testing.B) (w io.WriteCloser, r io.Reader, stop func())
}

var benchPaths = []benchPath{
	{"direct", startDirect},
	{"relay", func(b *testing.B) (io.WriteCloser, io.Reader, func()) { return startBenchRelay(b, nil) }},
	// A scenario's cost: every message is weighed against a plan of faults
	// that match it and draw, or almost match it, but never act.
	{"relay+plan", func(b *testing.B) (io.WriteCloser, io.Reader, func()) {
		return startBenchRelay(b, nil, benchPlanSpecs...)
	}},
	{"relay+transcript", func(b *testing.B) (io.WriteCloser, io.Reader, func()) {
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { devnull.Close() })
		return startBenchRelay(b, NewJSONLRecorder(devnull))
	}},
}

func mustParseAll(b *testing.B, specs []string) []*faults.Fault {
	var out []*faults.Fault
	for _, spec := range specs {
		f, err := faults.Parse(spec)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func startDirect(b *testing.B) (io.WriteCloser, io.Reader, func()) {
	cmd := exec.Command(helperCommand(b, "cat")[0])
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return in, out, func() {
		in.Close()
		cmd.Wait()
	}
}

// benchPlanSpecs is a scenario's worth of faults that look at every message
// (patterns, counters, seeded draws) and never change the traffic.
var benchPlanSpecs = []string{
	"delay:p=0,times=0",
	"drop:on=s2c:response:tools/call,p=0,times=0",
	"duplicate:on=s2c:response:*,p=0,times=0",
	"stall:on=c2s:request:tools/call",
	"burst:on=s2c:notification:notifications/progress,after=c2s:request:initialize",
	"eof:on=c2s:request:tools/call,inflight=3",
}

func startBenchRelay(b *testing.B, rec Recorder, specs ...string) (io.WriteCloser, io.Reader, func()) {
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		cfg := Config{Command: helperCommand(b, "cat"), Grace: 5 * time.Second}
		if len(specs) > 0 {
			cfg.Plan = faults.NewPlan(1, mustParseAll(b, specs))
		}
		if rec != nil {
			cfg.Recorder = rec
		}
		if _, err := Run(context.Background(), cfg, inR, outW); err != nil {
			b.Error(err)
		}
	}()
	return inW, outR, func() {
		inW.Close()
		io.Copy(io.Discard, outR)
		<-done
		outR.Close()
	}
}

func benchMessage(size int) []byte {
	const head, tail = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`, `"}]}}` + "\n"
	return []byte(head + strings.Repeat("a", max(0, size-len(head)-len(tail))) + tail)
}

var benchSizes = []struct {
	name string
	size int
}{{"200B", 200}, {"64KiB", 64 << 10}}

// BenchmarkThroughput streams messages one way through the path and back
// out of the child: MB/s is the figure to compare, B/msg the relay's memory.
func BenchmarkThroughput(b *testing.B) {
	for _, sz := range benchSizes {
		for _, p := range benchPaths {
			b.Run(p.name+"/"+sz.name, func(b *testing.B) {
				msg := benchMessage(sz.size)
				w, r, stop := p.start(b)
				defer stop()
				br := bufio.NewReaderSize(r, 256<<10)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.SetBytes(int64(len(msg)))
				b.ResetTimer()
				go func() {
					for i := 0; i < b.N; i++ {
						if _, err := w.Write(msg); err != nil {
							return
						}
					}
				}()
				for i := 0; i < b.N; i++ {
					if _, err := br.ReadSlice('\n'); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N), "B/msg")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

// BenchmarkLatency sends one message at a time and waits for it to come
// back: the p50 and p99 round trips, whose difference between paths is the
// latency the relay adds (two relay passes per round trip).
func BenchmarkLatency(b *testing.B) {
	for _, sz := range benchSizes {
		for _, p := range benchPaths {
			b.Run(p.name+"/"+sz.name, func(b *testing.B) {
				msg := benchMessage(sz.size)
				w, r, stop := p.start(b)
				defer stop()
				br := bufio.NewReaderSize(r, 256<<10)
				rtts := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					if _, err := w.Write(msg); err != nil {
						b.Fatal(err)
					}
					if _, err := br.ReadSlice('\n'); err != nil {
						b.Fatal(err)
					}
					rtts = append(rtts, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(rtts)
				b.ReportMetric(float64(rtts[len(rtts)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(rtts[len(rtts)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

// BenchmarkRecord is the transcript's cost for one relayed message, a
// received event with the frame and its forwarded event, recorded as the
// relay does (one pair) on one goroutine and on two at once (the two
// directions of a session).
func BenchmarkRecord(b *testing.B) {
	raw := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 120) + `"}}}` + "\n")
	// What the relay records with no plan: the frame, unread.
	record := func(r *JSONLRecorder) { r.RecordForwarded(wire.ToServer, raw, 1, r.Now()) }
	b.Run("serial", func(b *testing.B) {
		r := NewJSONLRecorder(io.Discard)
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			record(r)
		}
	})
	b.Run("two-directions", func(b *testing.B) {
		r := NewJSONLRecorder(io.Discard)
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		b.SetParallelism(1)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				record(r)
			}
		})
	})
}
