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
