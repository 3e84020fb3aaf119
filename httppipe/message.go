package httppipe

import (
	"bytes"
	"encoding/json"

	"github.com/mcpchaos/mcpchaos/internal/mcpheader"
)

// envelope is what the Pipe reads of a JSON-RPC message: enough to route
// it, never enough to judge it (that is the probe's job).
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// hasID says the message names an id: a request, or an answer.
func (e envelope) hasID() bool {
	return len(e.ID) > 0 && string(e.ID) != "null"
}

// isAnswer says the message is a response or an error response.
func (e envelope) isAnswer() bool {
	return e.Method == "" && (e.Result != nil || e.Error != nil)
}

// envelopes reads a message, or each message of a batch; what is not a
// JSON-RPC object is left out.
func envelopes(msg []byte) []envelope {
	msg = bytes.TrimSpace(msg)
	var raws []json.RawMessage
	if len(msg) > 0 && msg[0] == '[' {
		if json.Unmarshal(msg, &raws) != nil {
			return nil
		}
	} else {
		raws = []json.RawMessage{msg}
	}
	var out []envelope
	for _, raw := range raws {
		var e envelope
		if json.Unmarshal(raw, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// request is one request the client sent: the JSON text of its id, and
// its method.
type request struct{ id, method string }

// outgoing is what the Pipe needs to know of a message it sends.
type outgoing struct {
	requests []request
	// initialize marks the initialize request, whose refusal may mean the
	// legacy transport.
	initialize bool
	// initialized is notifications/initialized: the session is up, and
	// the GET stream may open.
	initialized bool
	// version is the protocol version a request of the stateless era names
	// in its _meta; it is that request's MCP-Protocol-Version.
	version string
}

func parseOutgoing(body []byte) outgoing {
	var m outgoing
	for _, e := range envelopes(body) {
		if e.Method == "" {
			continue
		}
		if e.hasID() {
			m.requests = append(m.requests, request{string(e.ID), e.Method})
			m.initialize = m.initialize || e.Method == "initialize"
		}
		m.initialized = m.initialized || e.Method == "notifications/initialized"
		if m.version == "" {
			m.version = mcpheader.MetaVersion(e.Params)
		}
	}
	return m
}

// ids are the JSON texts of the ids of m's requests.
func (m outgoing) ids() []string {
	ids := make([]string, len(m.requests))
	for i, r := range m.requests {
		ids[i] = r.id
	}
	return ids
}

// initializeVersion is the protocol version an initialize result settles.
func initializeVersion(result json.RawMessage) string {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(result, &r)
	return r.ProtocolVersion
}
