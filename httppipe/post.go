package httppipe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
)

// maxErrorBody is how much of a refusal is read, for its JSON-RPC error or
// its text.
const maxErrorBody = 64 << 10

// send POSTs one message and hands what answers it to the reader.
func (p *Pipe) send(body []byte, m outgoing) {
	target, err := p.target()
	if err != nil {
		p.synthesize(m.ids(), nil, err.Error())
		return
	}
	resp, err := p.postTo(target, body, m)
	if err != nil {
		if p.ctx.Err() == nil { // else the client gave up, not the server
			p.synthesize(m.ids(), nil, "HTTP request failed: "+err.Error())
		}
		return
	}
	defer drainClose(resp.Body)
	p.noteSession(resp)
	if m.initialize && refusesPOST(resp.StatusCode) {
		if l := p.startFallback(); l != nil {
			p.fallBack(l, resp, body, m)
			return
		}
	}
	p.answer(resp, m)
}

func (p *Pipe) postTo(target *url.URL, body []byte, m outgoing) (*http.Response, error) {
	req, err := http.NewRequestWithContext(p.ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = p.header("application/json, text/event-stream", m.version)
	req.Header.Set("Content-Type", "application/json")
	p.mirror(req.Header, body)
	return p.client.Do(req)
}

// fallBack follows a refused initialize to the legacy transport (MCP
// 2025-11-25, Transports, Backwards Compatibility) and sends it again
// there; when the legacy transport is not there either, the refusal is
// the answer.
func (p *Pipe) fallBack(l *legacy, refusal *http.Response, body []byte, m outgoing) {
	text, _ := io.ReadAll(io.LimitReader(refusal.Body, maxErrorBody))
	if _, err := l.endpointURL(p.ctx); err == nil {
		p.send(body, m)
		return
	}
	p.abandonLegacy(l)
	p.failed(statusText(refusal), text, m)
}

// answer hands the reader what a POST's response says: nothing (202), a
// JSON body, an event stream, or, for an error status, the error.
func (p *Pipe) answer(resp *http.Response, m outgoing) {
	status := statusText(resp)
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		text, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		p.failed(status, text, m)
		return
	case resp.StatusCode == http.StatusAccepted, resp.StatusCode == http.StatusNoContent:
	case mediaType(resp) == "text/event-stream":
		p.readPostStream(resp.Body, m)
	default:
		p.readJSON(status, resp.Body, m)
	}
	if m.initialized {
		p.openGet()
	}
}

// readJSON delivers a JSON body. A body that says nothing readable leaves
// its requests with no answer to come: they get an error.
func (p *Pipe) readJSON(status string, r io.Reader, m outgoing) {
	body, err := io.ReadAll(io.LimitReader(r, maxMessage+1))
	switch {
	case err != nil:
		p.synthesize(m.ids(), nil, status+": reading the body failed: "+err.Error())
	case len(body) > maxMessage:
		p.synthesize(m.ids(), nil, fmt.Sprintf("%s: the body is larger than %d bytes", status, maxMessage))
	case len(bytes.TrimSpace(body)) == 0:
		p.synthesize(m.ids(), nil, status+": the body is empty")
	case !json.Valid(body):
		p.synthesize(m.ids(), nil, status+": the body is not JSON: "+excerpt(body))
	default:
		p.deliverBody(body)
	}
}

// failed handles a refusal: a JSON-RPC answer in its body is the server's
// own word; the requests it leaves unanswered get an error quoting the
// status and the start of the body.
func (p *Pipe) failed(status string, body []byte, m outgoing) {
	var answered []string
	if carriesAnswer(body) {
		answered = p.deliverBody(body)
	}
	why := status
	if text := excerpt(body); text != "" {
		why += ": " + text
	}
	p.synthesize(m.ids(), answered, why)
}

func carriesAnswer(body []byte) bool {
	for _, e := range envelopes(body) {
		if e.isAnswer() {
			return true
		}
	}
	return false
}

// refusesPOST says a status is how a server of the legacy transport
// answers a POST to its stream's URL.
func refusesPOST(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed
}

func statusText(resp *http.Response) string {
	if resp.Status == "" {
		return fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return "HTTP " + resp.Status
}

// mediaType is a response's media type, without parameters.
func mediaType(resp *http.Response) string {
	m, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return m
}

// drainClose reads a little of what is left, so that the connection can
// serve again, and closes the body.
func drainClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
	body.Close()
}
