package wire

// IDSpan returns where the value of the frame's top-level "id" member is in
// raw: raw[start:end] is the JSON text Classify reads as the id (the last
// "id" member, as Classify reads it). ok is false for a frame that is not one
// well-formed JSON object with an id.
func IDSpan(raw []byte) (start, end int, ok bool) { return MemberSpan(raw, "id") }

// MemberSpan returns where the value at path (member names, from the top
// level down through objects) is in raw, as IDSpan does for "id": for
// example "params", "requestId" for the request a cancellation names. Where
// a name occurs twice in one object the last one counts.
func MemberSpan(raw []byte, path ...string) (start, end int, ok bool) {
	lead := skipSpace(raw, 0)
	b := trimSpace(raw)
	if len(b) == 0 || b[0] != '{' || len(path) == 0 {
		return 0, 0, false
	}
	// The whole frame must be one object, before anything in it is trusted.
	sc := scanner{b: b}
	if n, err := sc.object(0, 0, inOther); err != nil || n != len(b) {
		return 0, 0, false
	}
	at := span{0, len(b)}
	for depth, name := range path {
		if b[at.start] != '{' {
			return 0, 0, false
		}
		sc.find, sc.found = name, span{}
		if _, err := sc.object(at.start, depth, inFind); err != nil || !sc.found.ok() {
			return 0, 0, false
		}
		at = sc.found
	}
	return lead + at.start, lead + at.end, true
}

// ReplaceID returns a copy of raw whose top-level id is the JSON text id,
// every other byte (line ending included) as it was. ok is false when raw has
// no id to replace.
func ReplaceID(raw []byte, id string) (out []byte, ok bool) {
	return ReplaceMember(raw, id, "id")
}

// ReplaceMember returns a copy of raw whose value at path (see MemberSpan) is
// the JSON text value, every other byte as it was. ok is false when raw has
// no value there.
func ReplaceMember(raw []byte, value string, path ...string) (out []byte, ok bool) {
	start, end, ok := MemberSpan(raw, path...)
	if !ok {
		return nil, false
	}
	out = make([]byte, 0, len(raw)-(end-start)+len(value))
	out = append(out, raw[:start]...)
	out = append(out, value...)
	return append(out, raw[end:]...), true
}
