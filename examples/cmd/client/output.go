package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxShownText is the longest result text printed verbatim.
const maxShownText = 200

// printer writes the client's output lines. Notifications arrive on the
// transport's reader goroutine while results come from the calling one, so
// writes are serialized to keep lines whole.
type printer struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool

	// seen gets a value, without blocking, for every notification, so that
	// settle can tell when they stop.
	seen chan struct{}
}

func newPrinter(w io.Writer) *printer {
	return &printer{w: w, seen: make(chan struct{}, 1)}
}

func (p *printer) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func (p *printer) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// notification runs on the transport's reader goroutine, so it must not block.
func (p *printer) notification(n mcp.JSONRPCNotification) {
	if len(n.Params.Meta) == 0 {
		// mcp-go fills in an empty _meta when decoding; it was not on the wire.
		n.Params.Meta = nil
	}
	params, err := json.Marshal(n.Params) // map keys come out sorted
	if err != nil {
		params = []byte(strconv.Quote(err.Error()))
	}
	p.line("notification %s %s", n.Method, params)
	select {
	case p.seen <- struct{}{}:
	default:
	}
}

func (p *printer) result(name string, res *mcp.CallToolResult) {
	var parts []string
	for _, content := range res.Content {
		if text, ok := mcp.AsTextContent(content); ok {
			parts = append(parts, text.Text)
			continue
		}
		parts = append(parts, fmt.Sprintf("[%T]", content))
	}
	text := strings.Join(parts, "\n")
	shown := strconv.Quote(text)
	if len(text) > maxShownText {
		shown = fmt.Sprintf("<%d bytes>", len(text))
	}
	status := ""
	if res.IsError {
		status = "error "
	}
	p.line("result %s %s%s", name, status, shown)
}
