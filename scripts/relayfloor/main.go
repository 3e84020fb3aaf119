// Command relayfloor is what scripts/bench-relay sets mcpchaos's plan row
// against: the least a stdio relay that looks at every message does. It
// starts a command, reads its own standard input 64 KiB at a time, finds
// the end of each message (a line), and writes each read on to the
// command's standard input in one write; the command's output goes
// straight to relayfloor's, as mcpchaos splices the direction a plan does
// not watch. With --classify it also classifies each message with
// wire.Classify, as a plan must to count it, and nothing else: no plan, no
// record, no second goroutine.
//
//	relayfloor [--classify] -- COMMAND [ARG...]
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/wire"
)

func main() {
	classify := pflag.Bool("classify", false, "classify each message (wire.Classify)")
	pflag.Parse()
	if pflag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: relayfloor [--classify] -- COMMAND [ARG...]")
		os.Exit(2)
	}
	requests, err := relay(*classify, pflag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "relayfloor:", err)
		os.Exit(1)
	}
	if *classify && requests == 0 {
		// Keeps the classification from being optimised away, and tells
		// a wrong input from a fast run.
		fmt.Fprintln(os.Stderr, "relayfloor: no request among the messages")
		os.Exit(1)
	}
}

// relay runs argv with the relay in front of its standard input and
// returns how many requests it classified.
func relay(classify bool, argv []string) (requests int, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	buf := make([]byte, 64<<10)
	kept := 0 // the start of buf holds an unfinished message
	for {
		n, rerr := os.Stdin.Read(buf[kept:])
		b := buf[:kept+n]
		end := 0
		for end < len(b) {
			i := bytes.IndexByte(b[end:], '\n')
			if i < 0 {
				break
			}
			if classify && wire.Classify(b[end:end+i+1]).Kind == wire.Request {
				requests++
			}
			end += i + 1
		}
		if end == 0 && len(b) == len(buf) {
			end = len(b) // a message longer than the buffer goes on in pieces
		}
		if _, err := in.Write(b[:end]); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return requests, fmt.Errorf("writing to %s: %w", argv[0], err)
		}
		kept = copy(buf, b[end:])
		if rerr != nil {
			if kept > 0 {
				_, _ = in.Write(buf[:kept])
			}
			_ = in.Close()
			werr := cmd.Wait()
			if !errors.Is(rerr, io.EOF) {
				return requests, rerr
			}
			return requests, werr
		}
	}
}
