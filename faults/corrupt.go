package faults

import (
	"bytes"
	"fmt"
	"regexp"
)

// corrupt replaces one message with a malformed variant, to see whether the
// receiver reports it and carries on or dies with its reader.
var corruptFamily = &Family{
	Name:  "corrupt",
	Doc:   "replace the triggering message with a malformed one: cut JSON, a truncated frame, a wrong jsonrpc version, a line split in two, or a non-JSON line",
	Phase: Before,
	Local: true,
	Params: []Param{
		{Name: "mode", Type: TypeChoice, Default: "json", Choices: []string{"json", "truncate", "version", "newline", "text"},
			Doc: "json cuts the JSON in half (line ending kept), truncate sends the first half without its line ending (the receiver reads it glued to the next frame), version sets jsonrpc to \"1.0\", newline splits the line in the middle, text sends a non-JSON line"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		return corrupt{mode: v.String("mode")}, nil
	},
	Example: "corrupt:on=s2c:response:tools/call,mode=text",
}

type corrupt struct{ mode string }

// corruptText is the line mode=text sends.
const corruptText = "mcpchaos: not json"

var jsonrpcVersion = regexp.MustCompile(`"jsonrpc"\s*:\s*"2\.0"`)

func (k corrupt) Fire(c *FireContext) Effect {
	raw := c.Message.Raw
	body, end := splitEnding(raw)
	var out []byte
	var detail string
	switch k.mode {
	case "json":
		out = concatBytes(body[:len(body)/2], end)
		detail = fmt.Sprintf("replace the message with its first %d of %d bytes (cut JSON)", len(body)/2, len(body))
	case "truncate":
		out = bytes.Clone(body[:len(body)/2])
		detail = fmt.Sprintf("replace the message with its first %d of %d bytes and no line ending (a truncated frame: the next one is glued to it)", len(body)/2, len(body))
	case "version":
		loc := jsonrpcVersion.FindIndex(body)
		if loc == nil {
			return Effect{Skipped: true, Detail: `skipped: the message has no "jsonrpc":"2.0" member to change`}
		}
		out = concatBytes(body[:loc[0]], []byte(`"jsonrpc":"1.0"`), body[loc[1]:], end)
		detail = `replace the message with a copy whose jsonrpc is "1.0"`
	case "newline":
		out = concatBytes(body[:len(body)/2], []byte("\n"), body[len(body)/2:], end)
		detail = fmt.Sprintf("replace the message with a copy split by a newline after byte %d", len(body)/2)
	default: // text
		out = []byte(corruptText + "\n")
		detail = "replace the message with the non-JSON line " + corruptText
	}
	return Effect{Replace: out, Detail: detail}
}

// splitEnding separates a frame from its line ending (\n or \r\n, or none at
// the end of a stream).
func splitEnding(raw []byte) (body, end []byte) {
	switch {
	case bytes.HasSuffix(raw, []byte("\r\n")):
		return raw[:len(raw)-2], raw[len(raw)-2:]
	case bytes.HasSuffix(raw, []byte("\n")):
		return raw[:len(raw)-1], raw[len(raw)-1:]
	}
	return raw, nil
}

func concatBytes(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}
