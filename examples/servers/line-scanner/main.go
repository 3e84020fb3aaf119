// Command line-scanner is an MCP server whose read loop ends, and the
// process with it (exit status 1), on the first line it cannot take: a line
// longer than 64 KiB, or a line that is not JSON.
//
// Bug class 6 (one malformed line ends the session; a line over 64 KiB
// breaks a fixed-size scanner). It mirrors the many hand-written Go stdio
// servers and clients that read with bufio.NewScanner(os.Stdin) at its
// default limit (bufio.MaxScanTokenSize, 64 KiB: a tool call carrying a file
// or a long prompt stops Scan with "token too long") and treat a message that
// does not decode as fatal (log.Fatal), where JSON-RPC asks for a parse error
// answered with id null. Either way the calls in flight are never answered.
//
// Exposed by mcpchaos's oversize-call scenario (a tool call grown to 1 MiB,
// still valid JSON-RPC) and malformed-line (a line that is not JSON sent
// instead of a tool call): the server exits 1 with calls unanswered. A plain
// session sends short, well-formed lines, so nothing fails.
//
// The fixed twin (--fixed) reads lines of any length with a bufio.Reader and
// answers a line that is not JSON with a parse error (id null, -32700), then
// reads on.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"log"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "line-scanner", Version: "1.0.0",
		Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
	}
	if *fixed {
		// FIX: no limit on a line's length, and (OnBadLine left nil) a
		// parse error for a line that is not JSON.
		srv.ReadLines = readAnyLength
	} else {
		srv.ReadLines = scanDefault
		// BUG: a message that does not decode ends the process.
		srv.OnBadLine = func(_ []byte, err error) { log.Fatalf("decoding a message from stdin: %v", err) }
	}

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// scanDefault reads with a bufio.Scanner as it comes.
func scanDefault(in io.Reader, line func([]byte)) error {
	sc := bufio.NewScanner(in) // BUG: no sc.Buffer, so no line over 64 KiB
	for sc.Scan() {
		line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		log.Fatalf("reading stdin: %v", err) // "bufio.Scanner: token too long"
	}
	return nil
}

// readAnyLength reads a line at a time, however long.
func readAnyLength(in io.Reader, line func([]byte)) error {
	r := bufio.NewReader(in)
	for {
		l, err := r.ReadBytes('\n')
		if len(l) > 0 {
			// Without its end, as a Scanner gives it.
			line(bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r")))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
