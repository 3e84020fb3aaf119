package faults

import (
	"fmt"
	"time"
)

// stderr-flood is a server that logs a lot at once. A client that pipes its
// server's stderr and never reads it lets the pipe fill; the server's next log
// write blocks, and a server blocked in a log write stops answering. The
// flood is written where the client reads the server's stderr (the stderr of
// mcpchaos wrap), so it is the client's reading that is tested.
var stderrFloodFamily = &Family{
	Name:  "stderr-flood",
	Doc:   "write a burst of log lines to the server's stderr as the client sees it (mcpchaos wrap's stderr); a client that never reads it blocks the writer, and with block=true the server's output is held meanwhile, as a server blocked on a log write stops answering",
	Phase: Before,
	Params: []Param{
		{Name: "bytes", Type: TypeSize, Default: "1MiB", Doc: "how many bytes of log text to write (256KiB, 1MiB; at most 1GiB)"},
		{Name: "line", Type: TypeInt, Default: "200", Doc: "length of each log line in bytes, newline included (2 to 65536)"},
		{Name: "block", Type: TypeBool, Default: "true", Doc: "hold the server's output (s2c) until the flood is written or gives up"},
		{Name: "timeout", Type: TypeDuration, Default: "10s", Doc: "give up the flood when it has not been written within this long (the reader stalled)"},
	},
	New: func(v Values) (Action, error) {
		f := stderrFlood{bytes: int(v.Size("bytes")), line: v.Int("line"), block: v.Bool("block"), timeout: v.Duration("timeout")}
		switch {
		case f.bytes < 1 || f.bytes > 1<<30:
			return nil, fmt.Errorf("bytes: must be between 1 and %d, got %d", 1<<30, f.bytes)
		case f.line < 2 || f.line > 64<<10:
			return nil, fmt.Errorf("line: must be between 2 and %d, got %d", 64<<10, f.line)
		case f.timeout <= 0:
			return nil, fmt.Errorf("timeout: must be longer than 0s: a flood needs a deadline")
		}
		return f, nil
	},
	Example: "stderr-flood:on=c2s:request:tools/call,bytes=256KiB",
}

type stderrFlood struct {
	bytes, line int
	block       bool
	timeout     time.Duration
}

func (f stderrFlood) Fire(*FireContext) Effect {
	detail := fmt.Sprintf("write %d bytes of log lines to the server's stderr", f.bytes)
	if f.block {
		detail += ", holding the server's output until written"
	}
	return Effect{StderrFlood: &StderrFlood{Bytes: f.bytes, Line: f.line, Block: f.block, Timeout: f.timeout}, Detail: detail}
}

// StderrFlood is log text for the server's stderr as the client reads it.
type StderrFlood struct {
	// Bytes in all, in lines of Line bytes (the last may be shorter).
	Bytes, Line int
	// Block holds the server's output (s2c) until the flood is written or
	// gives up.
	Block bool
	// Timeout is how long the flood may take before it gives up.
	Timeout time.Duration
}

// Text returns the n-th line of the flood (from 0), Line bytes long with its
// newline, or shorter for the last; it is the same for the same n, so
// transcripts and replays agree.
func (f *StderrFlood) Text(n int) []byte {
	size := min(f.Line, f.Bytes-n*f.Line)
	if size <= 0 {
		return nil
	}
	b := make([]byte, size)
	prefix := fmt.Sprintf("mcpchaos stderr-flood line %d ", n+1)
	for i := range b {
		switch {
		case i < len(prefix):
			b[i] = prefix[i]
		default:
			b[i] = 'x'
		}
	}
	b[size-1] = '\n'
	return b
}

// Lines is how many lines the flood writes.
func (f *StderrFlood) Lines() int { return (f.Bytes + f.Line - 1) / f.Line }
