package wire

import "bytes"

// IDSpan returns where the value of the frame's top-level "id" member is in
// raw: raw[start:end] is the JSON text Classify reads as the id (the last
// "id" member, as Classify reads it). ok is false for a frame that is not one
// well-formed JSON object with an id.
func IDSpan(raw []byte) (start, end int, ok bool) {
	lead := len(raw) - len(bytes.TrimLeft(raw, jsonSpace))
	b := bytes.Trim(raw, jsonSpace)
	if len(b) == 0 || b[0] != '{' {
		return 0, 0, false
	}
	var id span
	n, err := scanObject(b, 0, 0, func(_, key []byte, v span) {
		if string(key) == "id" {
			id = v
		}
	})
	if err != nil || n != len(b) || !id.ok() {
		return 0, 0, false
	}
	return lead + id.start, lead + id.end, true
}

// ReplaceID returns a copy of raw whose top-level id is the JSON text id,
// every other byte (line ending included) as it was. ok is false when raw has
// no id to replace.
func ReplaceID(raw []byte, id string) (out []byte, ok bool) {
	start, end, ok := IDSpan(raw)
	if !ok {
		return nil, false
	}
	out = make([]byte, 0, len(raw)-(end-start)+len(id))
	out = append(out, raw[:start]...)
	out = append(out, id...)
	return append(out, raw[end:]...), true
}
