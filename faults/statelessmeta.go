package faults

import (
	"bytes"
	"encoding/json"

	"github.com/mcpchaos/mcpchaos/wire"
)

// In the stateless 2026-07-28 revision every message the client sends
// carries its protocol version, client info and capabilities under
// params._meta, and servers refuse one without (-32602). A message a fault
// injects toward the server must carry them too, or the server refuses
// the injection rather than meet the moment the fault was for: it gets the
// _meta of the client's latest request, as the client would send it.

// clientMeta returns the _meta object of a stateless client request.
func clientMeta(m *wire.Message) json.RawMessage {
	if m.Kind != wire.Request || m.Era != wire.Stateless {
		return nil
	}
	var v struct {
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(m.Raw, &v) != nil || !bytes.HasPrefix(bytes.TrimSpace(v.Params.Meta), []byte("{")) {
		return nil
	}
	return v.Params.Meta
}

// withMeta returns the frame raw with meta's members added to its
// params._meta where it lacks them; raw unchanged if it is no object.
func withMeta(raw []byte, meta json.RawMessage) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil || msg == nil {
		return raw
	}
	var base map[string]json.RawMessage
	if json.Unmarshal(meta, &base) != nil {
		return raw
	}
	params := map[string]json.RawMessage{}
	if p, ok := msg["params"]; ok && json.Unmarshal(p, &params) != nil {
		return raw
	}
	own := map[string]json.RawMessage{}
	if m, ok := params["_meta"]; ok && json.Unmarshal(m, &own) != nil {
		return raw
	}
	for k, v := range base {
		if _, ok := own[k]; !ok {
			own[k] = v
		}
	}
	var err error
	if params["_meta"], err = json.Marshal(own); err != nil {
		return raw
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return raw
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return raw
	}
	return append(out, '\n')
}

// metaInjections gives the injections toward the server the client's
// stateless _meta.
func metaInjections(injs []Injection, meta json.RawMessage) {
	for i := range injs {
		if injs[i].Dir == wire.ToServer {
			injs[i].Raw = withMeta(injs[i].Raw, meta)
		}
	}
}
