package faults

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// oversize replaces a message with a copy grown to a given size that is still
// valid JSON-RPC and valid MCP: the growth is a padding string under _meta,
// which every receiver must accept and ignore. What breaks is a reader with
// a line or buffer limit (a 64 KiB scanner token, a 1 MiB frame cap).
var oversizeFamily = &Family{
	Name:  "oversize",
	Doc:   "replace the triggering message with a valid copy grown to at least a size, padded under _meta",
	Phase: Before,
	Local: true,
	Params: []Param{
		{Name: "size", Type: TypeSize, Default: "1MiB", Doc: "size of the grown frame in bytes, newline included (64KiB, 1MiB, 16MiB; at most 64MiB)"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		o := oversize{size: v.Size("size")}
		if o.size < 1 || o.size > maxOversize {
			return nil, fmt.Errorf("size: must be between 1 byte and 64MiB")
		}
		return o, nil
	},
	Example: "oversize:on=c2s:request:tools/call,size=16MiB",
}

const maxOversize = 64 << 20

// PaddingKey is the _meta key oversize pads under; the io.mcpchaos/ prefix
// keeps it clear of keys MCP reserves.
const PaddingKey = "io.mcpchaos/padding"

type oversize struct{ size int64 }

func (o oversize) Fire(c *FireContext) Effect {
	m := c.Message
	var member string
	switch m.Kind {
	case wire.Request, wire.Notification:
		member = "params"
	case wire.Response:
		member = "result"
	default:
		return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: a %s has no params or result to pad", m.Kind)}
	}
	body, end := splitEnding(m.Raw)
	if len(end) == 0 {
		end = []byte("\n")
	}
	if int64(len(body)+len(end)) >= o.size {
		return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: the message is %d bytes already, not smaller than %d", len(body)+len(end), o.size)}
	}
	grown, err := pad(body, member, o.size-int64(len(end)))
	if err != nil {
		return Effect{Skipped: true, Detail: "skipped: " + err.Error()}
	}
	return Effect{
		Replace: append(grown, end...),
		Detail:  fmt.Sprintf("replace the message with a copy grown from %d to %d bytes by padding %s._meta[%q]", len(body)+len(end), len(grown)+len(end), member, PaddingKey),
	}
}

// pad returns body with a padding string under member._meta, sized so that
// the result is exactly want bytes long. Every other member keeps its value
// byte for byte; members of the objects it opens come out in key order.
func pad(body []byte, member string, want int64) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("the message is not a JSON object: %v", err)
	}
	inner := map[string]json.RawMessage{}
	if raw, ok := top[member]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &inner); err != nil {
			return nil, fmt.Errorf("%s is not a JSON object", member)
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := inner["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("%s._meta is not a JSON object", member)
		}
	}
	// The padding is spliced into the encoded message in place of a marker
	// the message does not contain: encoding megabytes of it through three
	// nested objects would cost seconds.
	marker := "mcpchaos-padding-marker"
	for i := 0; bytes.Contains(body, []byte(marker)); i++ {
		marker = fmt.Sprintf("mcpchaos-padding-marker-%d", i)
	}
	meta[PaddingKey] = json.RawMessage(`"` + marker + `"`)
	var err error
	if inner["_meta"], err = marshalRaw(meta); err != nil {
		return nil, err
	}
	if top[member], err = marshalRaw(inner); err != nil {
		return nil, err
	}
	bare, err := marshalRaw(top)
	if err != nil {
		return nil, err
	}
	at := bytes.Index(bare, []byte(marker))
	if at < 0 || bytes.Count(bare, []byte(marker)) != 1 {
		return nil, fmt.Errorf("the padding marker is not where it was put") // cannot happen; never pad blindly
	}
	n := max(0, want-int64(len(bare)-len(marker)))
	out := make([]byte, 0, int64(len(bare)-len(marker))+n)
	out = append(out, bare[:at]...)
	out = append(out, bytes.Repeat([]byte("x"), int(n))...)
	return append(out, bare[at+len(marker):]...), nil
}

// marshalRaw encodes v without HTML escaping, so that raw members keep their
// bytes, and without the encoder's trailing newline.
func marshalRaw(v map[string]json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
