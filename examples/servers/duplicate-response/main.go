// Command duplicate-response is an MCP server that answers one request twice
// when its client is slow to read.
//
// Bug class 7 (two answers for one request id). Each write races a 300ms
// timer; when the timer wins the server "retries" by writing the message
// again. But the first write was not lost, only blocked on a full pipe, and it
// completes as soon as the client reads again: both copies arrive. It mirrors
// the at-least-once retries of transports that cannot tell a slow write from
// a failed one, and the cancellation-races-response bugs of the SDKs, which
// end the same way: one id, two responses.
//
// Exposed by mcpchaos's stall-s2c scenario (the server's stdout is not read for
// 2s once a tools/call is in flight) when the server writes more than the pipe
// holds meanwhile: the dump tool's answer is 1 MiB, larger than any Linux
// pipe. A plain session reads promptly and no write takes 300ms.
//
// The fixed twin (--fixed) writes once: a write that blocks just blocks, and
// finishes when the client reads again.
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "duplicate-response", Version: "1.0.0",
		Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow(), dump()},
	}
	if !*fixed {
		srv.WriteLine = writeWithRetry // BUG
	}
	// FIX: no WriteLine hook; each line is written once, however long it takes.

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// writeWithRetry gives a write 300ms, then writes the line again.
func writeWithRetry(out io.Writer, line []byte) error {
	done := make(chan error, 1)
	go func() {
		_, err := out.Write(line)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(300 * time.Millisecond):
		log.Printf("write of %d bytes timed out after 300ms; retrying", len(line))
		// BUG: the first write is still under way, so both copies arrive.
		_, err := out.Write(line)
		return err
	}
}

// dump answers kb KiB of text (1024 by default): a log dump, a file, a
// screenshot, anything a tool returns that is bigger than a pipe.
func dump() rawmcp.Tool {
	return rawmcp.Tool{
		Name:        "dump",
		Description: "Answers kb KiB of text (default 1024).",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"kb": map[string]any{"type": "integer", "default": 1024}},
		},
		Run: func(_ context.Context, c *rawmcp.Call) (string, error) {
			args := struct {
				KB int `json:"kb"`
			}{KB: 1024}
			if err := c.Decode(&args); err != nil {
				return "", err
			}
			return strings.Repeat("0123456789abcdef", args.KB*64), nil
		},
	}
}
