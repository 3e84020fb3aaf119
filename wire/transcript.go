package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// ReadTranscript decodes a JSONL transcript, calling fn for each event in
// order. It stops at the first malformed line with an error naming it, or
// when fn returns an error.
func ReadTranscript(r io.Reader, fn func(Event) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var e Event
			if jerr := json.Unmarshal(b, &e); jerr != nil {
				return fmt.Errorf("transcript line %d: %v", line, jerr)
			}
			if e.Type == "" {
				return fmt.Errorf("transcript line %d: no event type (is this an mcpchaos transcript?)", line)
			}
			if e.Type == EventSession && e.Format > TranscriptFormat {
				return fmt.Errorf("transcript line %d: written by %s in transcript format %d, which this mcpchaos (format %d) cannot read whole: judge it with that version of mcpchaos or a newer one",
					line, orUnknown(e.Tool), e.Format, TranscriptFormat)
			}
			if ferr := fn(e); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func orUnknown(tool string) string {
	if tool == "" {
		return "an unknown tool"
	}
	return tool
}
