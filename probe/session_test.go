package probe

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadLine(t *testing.T) {
	tests := []struct {
		name, input string
		want        []string // frames, "<skip>" for a skipped one
	}{
		{"lines", "a\nbb\n", []string{"a", "bb"}},
		{"CRLF", "a\r\nb\r\n", []string{"a", "b"}},
		{"last line without newline", "a\nb", []string{"a", "b"}},
		{"empty line", "\na\n", []string{"", "a"}},
		{"at the limit", "12345678\nx\n", []string{"12345678", "x"}},
		{"over the limit is skipped whole", "123456789\nx\n", []string{"<skip>", "x"}},
		{"far over the limit", strings.Repeat("y", 100) + "\nx\n", []string{"<skip>", "x"}},
		{"over the limit at EOF", strings.Repeat("y", 100), []string{"<skip>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The smallest buffer bufio allows, so long frames take many reads.
			br := bufio.NewReaderSize(strings.NewReader(tt.input), 16)
			var got []string
			for {
				line, skipped, err := readLine(br, 8)
				switch {
				case skipped:
					got = append(got, "<skip>")
				case line != nil:
					got = append(got, string(line))
				}
				if err != nil {
					break
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
}

// A tool's error text is cut to size on a rune boundary: cut inside a
// character, the note carried a byte that is not UTF-8 into the report.
func TestToolErrorIsCutOnARuneBoundary(t *testing.T) {
	text := strings.Repeat("é", 80) // 160 bytes; byte 117 is inside the 59th é
	result, err := json.Marshal(map[string]any{"isError": true, "content": []map[string]string{{"type": "text", "text": text}}})
	if err != nil {
		t.Fatal(err)
	}
	got, failed := toolError(result)
	if !failed {
		t.Fatal("toolError did not see the isError")
	}
	if want := strings.Repeat("é", 58) + "..."; got != want {
		t.Errorf("toolError = %q; want %q", got, want)
	}
}

// The first calls go in one write even when callTools queues the rest of
// them after the writer's window and marks its batch done before the
// writer looks: they went out one by one, and eof-inflight, waiting for
// three calls in flight, could miss its moment.
func TestGatherTakesTheBatchQueuedAfterItsWindow(t *testing.T) {
	s := &session{queue: make(chan outgoing, 8)}
	batched := make(chan struct{})
	s.batch.Store(&batched)
	s.afterWindow = func() {
		s.queue <- outgoing{line: []byte("2\n")}
		s.queue <- outgoing{line: []byte("3\n")}
		s.batch.Store(nil)
		close(batched)
	}
	var got []string
	for _, o := range s.gather(outgoing{line: []byte("1\n")}) {
		got = append(got, string(o.line))
	}
	if diff := cmp.Diff([]string{"1\n", "2\n", "3\n"}, got); diff != "" {
		t.Errorf("one write (-want +got):\n%s", diff)
	}
}
