package httppipe

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// deliver hands msg to the reader as one line, and returns the ids of the
// requests it answers. What is not JSON is dropped: a line the probe
// cannot parse would say nothing the transcript does not. The line is
// written in one call, so lines from different goroutines never
// interleave; it waits for the reader, or for Reader.Close.
func (p *Pipe) deliver(msg []byte) []string {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || !json.Valid(msg) {
		return nil
	}
	line := make([]byte, 0, len(msg)+1)
	if bytes.ContainsAny(msg, "\r\n") {
		b := bytes.NewBuffer(line)
		_ = json.Compact(b, msg) // valid, so it cannot fail
		line = b.Bytes()
	} else {
		line = append(line, msg...)
	}
	ids := p.settle(line)
	_, _ = p.pw.Write(append(line, '\n'))
	return ids
}

// settle strikes the requests msg answers off the pending ones, and learns
// the protocol version from the answer to initialize: the requests the
// client sends once it has read that answer must carry it.
func (p *Pipe) settle(msg []byte) []string {
	var ids []string
	for _, e := range envelopes(msg) {
		if !e.isAnswer() || !e.hasID() {
			continue
		}
		id := string(e.ID)
		ids = append(ids, id)
		p.mu.Lock()
		if p.pending[id] == "initialize" {
			if v := initializeVersion(e.Result); v != "" {
				p.version = v
			}
		}
		delete(p.pending, id)
		p.mu.Unlock()
	}
	if len(ids) > 0 {
		p.endLegacyIfIdle()
	}
	return ids
}

// deliverBody delivers a JSON body, one line per message of a batch, and
// returns the ids answered.
func (p *Pipe) deliverBody(body []byte) []string {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) == nil {
			var ids []string
			for _, msg := range batch {
				ids = append(ids, p.deliver(msg)...)
			}
			return ids
		}
	}
	return p.deliver(body)
}

// rpcError is the JSON-RPC error the Pipe answers a request with when HTTP
// failed it: internal error, as the server never got to say otherwise.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// synthesize answers each of ids, except those in answered, with an error
// saying why no answer can come.
func (p *Pipe) synthesize(ids, answered []string, why string) {
	for _, id := range ids {
		if slices.Contains(answered, id) {
			continue
		}
		e := rpcError{JSONRPC: "2.0", ID: json.RawMessage(id)}
		e.Error.Code, e.Error.Message = -32603, why
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // an HTML error page is quoted as it is
		if enc.Encode(e) == nil {
			p.deliver(b.Bytes())
		}
	}
}

// excerptLen is how much of an error body a synthesized error quotes.
const excerptLen = 200

// excerpt is the start of a body, on one line, for an error message.
func excerpt(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) > excerptLen {
		body = body[:excerptLen]
	}
	return strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\uFFFD")), " ")
}
