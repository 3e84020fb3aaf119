// Package rawclient is the small MCP streamable HTTP client the planted-bug
// example clients share: one POST per message, the answer read as a JSON
// body or an event stream, the session id kept from initialize. It has no
// bug of its own; each example puts one in how it uses it.
package rawclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// Protocol is the revision the examples speak: the stateful one, whose
// sessions can expire.
const Protocol = "2025-11-25"

// Client talks to one MCP endpoint.
type Client struct {
	URL     string
	Session string
	http    *http.Client
}

// FromEnv is a client for $MCPCHAOS_SERVER_URL, or the URL given.
func FromEnv(args []string) (*Client, error) {
	url := os.Getenv("MCPCHAOS_SERVER_URL")
	if len(args) > 0 {
		url = args[0]
	}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("give the server's MCP endpoint as an argument or in MCPCHAOS_SERVER_URL, as in http://127.0.0.1:3000/mcp (got %q)", url)
	}
	return &Client{URL: url, http: &http.Client{Timeout: time.Minute}}, nil
}

// Answer is what the server sent back for one POST.
type Answer struct {
	Status   int
	Messages []json.RawMessage
	// Err is set when the body ended in an error (a cut connection).
	Err error
}

// Post sends msg and reads the whole answer.
func (c *Client) Post(ctx context.Context, msg string) (Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(msg))
	if err != nil {
		return Answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", Protocol)
	if c.Session != "" {
		req.Header.Set("Mcp-Session-Id", c.Session)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.Session = id
	}
	a := Answer{Status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return a, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var data bytes.Buffer
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data:"):
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			case line == "" && data.Len() > 0:
				a.Messages = append(a.Messages, json.RawMessage(bytes.Clone(data.Bytes())))
				data.Reset()
			}
		}
		a.Err = sc.Err()
		return a, nil
	}
	body, err := io.ReadAll(resp.Body)
	a.Err = err
	if len(bytes.TrimSpace(body)) > 0 {
		a.Messages = append(a.Messages, json.RawMessage(body))
	}
	return a, nil
}

// Initialize opens a session: initialize, then notifications/initialized.
func (c *Client) Initialize(ctx context.Context) error {
	c.Session = ""
	a, err := c.Post(ctx, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+Protocol+`","capabilities":{},"clientInfo":{"name":"mcpchaos-example","version":"1"}}}`)
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK || IDOf(a.Messages, "0") == nil {
		return fmt.Errorf("initialize answered HTTP %d", a.Status)
	}
	_, err = c.Post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return err
}

// Close ends the session with DELETE.
func (c *Client) Close() {
	if c.Session == "" {
		return
	}
	req, _ := http.NewRequest(http.MethodDelete, c.URL, nil)
	req.Header.Set("Mcp-Session-Id", c.Session)
	req.Header.Set("MCP-Protocol-Version", Protocol)
	if resp, err := c.http.Do(req); err == nil {
		resp.Body.Close()
	}
}

// Call is the tools/call request for tool with args, as id.
func Call(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"progressToken":"t%d"}}}`, id, tool, args, id)
}

// IDOf is the message among msgs that answers id, nil if none does.
func IDOf(msgs []json.RawMessage, id string) json.RawMessage {
	for _, m := range msgs {
		var v struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &v) == nil && v.Method == "" && string(v.ID) == id {
			return m
		}
	}
	return nil
}

// Start is how each example begins: [--fixed] [URL] from args, and a
// session opened. It exits 2 on a usage error, 1 when no session opens.
func Start(name string, args []string) (c *Client, fixed bool) {
	if len(args) > 0 && args[0] == "--fixed" {
		fixed, args = true, args[1:]
	}
	c, err := FromEnv(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	if err := c.Initialize(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	return c, fixed
}
