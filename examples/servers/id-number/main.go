// Command id-number is an MCP server that answers a request whose id is a
// string of digits with that id as a number: "7" is answered as 7.
//
// Bug class 8 (request ids mishandled, answers that match no request). It
// mirrors the hand-written servers and SDK glue that read the id with int()
// or Number() to key their tables by it, and write the answer from that key:
// JSON-RPC says a response's id is the request's id, of the same type, and a
// client matching answers by id ("7" is not 7) never sees this one. Clients
// that number their requests 1, 2, 3 never notice; a client that sends
// string ids does.
//
// Exposed by mcpchaos's id-type fault (a tools/call is sent on with its
// number id as a string): the answer comes back with a number, matches
// nothing the server was asked, and the call stays unanswered (the judge
// reports an unknown-response and a hang). A plain session uses numbers.
//
// The fixed twin (--fixed) writes the id back as it came.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"strconv"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "id-number", Version: "1.0.0",
		Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
	}
	if !*fixed {
		srv.WriteLine = writeNumberID // BUG
	}
	// FIX: no WriteLine hook; the answer carries the request's id as it came.

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// writeNumberID writes an answer whose id is a string of digits with the id
// as the number it spells, as a server that keyed the request by int(id)
// would.
func writeNumberID(out io.Writer, line []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) == nil && m.Method == "" && len(m.ID) > 0 && m.ID[0] == '"' {
		var s string
		if json.Unmarshal(m.ID, &s) == nil {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				// rawmcp writes "id" right after "jsonrpc": the first match is it.
				line = bytes.Replace(line, append([]byte(`"id":`), m.ID...), []byte(`"id":`+strconv.FormatInt(n, 10)), 1)
			}
		}
	}
	_, err := out.Write(line)
	return err
}
