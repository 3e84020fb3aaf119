package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/shell"
	"github.com/mcpchaos/mcpchaos/internal/words"
)

// MarkdownLimit bounds the Markdown rendering: a CI job summary refuses
// more than 1 MiB (GitHub's step summary limit), so the findings past it
// are counted, not shown, and the JSON report holds them.
const MarkdownLimit = 1 << 20

// WriteMarkdown writes the report as Markdown for a CI job summary or a
// pull-request comment: the outcome, the scenario table, then each finding
// with its rule, its evidence and the command that replays it. However
// large the run, it stays under MarkdownLimit.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## mcpchaos: %s\n\n", markdownOutcome(r.Outcome))
	fmt.Fprintf(&b, "%s\n\n", totals(r))
	fmt.Fprintf(&b, "- target: %s\n", markdownCode(targetWords(r.Target)))
	fmt.Fprintf(&b, "- seed: %d\n", r.Seed)
	if r.Tool.Version != "" {
		fmt.Fprintf(&b, "- %s %s\n", orDash(r.Tool.Name), r.Tool.Version)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "- **error**: %s\n", markdownText(r.Error))
	}
	b.WriteString("\n| scenario | outcome | findings | duration | notes |\n|---|---|---|---|---|\n")
	for _, s := range tableRows(r) {
		name := s.label(markdownText(orDash(s.Name)))
		var notes []string
		for _, n := range append(append([]string(nil), s.Indeterminate...), s.Notes...) {
			notes = append(notes, markdownText(words.Cut(n, 300)))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", name, markdownOutcome(s.Outcome), s.Findings, words.Duration(s.DurationMS*1000), strings.Join(notes, "<br>"))
	}
	if x := r.Explore; x != nil {
		b.WriteString("\n### What explore covered\n\n")
		for _, l := range x.lines() {
			fmt.Fprintf(&b, "- %s\n", markdownText(l))
		}
		b.WriteString("\n")
		first := true
		b.WriteString(x.coverageTable(func(cells ...string) string {
			for i := range cells {
				cells[i] = markdownText(cells[i])
			}
			line := "| " + strings.Join(cells, " | ") + " |\n"
			if first {
				first = false
				line += strings.Repeat("|---", len(cells)) + "|\n"
			}
			return line
		}))
	}
	if len(r.StaleBaseline) > 0 {
		fmt.Fprintf(&b, "\n### Stale baseline entries\n\nThese no longer fail: remove them from %s.\n\n", markdownCode(orDash(r.BaselineFile)))
		for _, fp := range r.StaleBaseline {
			fmt.Fprintf(&b, "- %s\n", markdownText(fp.String()))
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n### Findings\n")
	}
	// What comes after the findings must still fit: the closing line.
	budget := MarkdownLimit - 512
	for i, f := range r.Findings {
		var fb strings.Builder
		writeMarkdownFinding(&fb, i+1, &f)
		if b.Len()+fb.Len() > budget {
			fmt.Fprintf(&b, "\n… %d more %s, left out to keep this summary under 1 MiB: the JSON report has every one.\n",
				len(r.Findings)-i, words.Plural(len(r.Findings)-i, "finding", "findings"))
			break
		}
		b.WriteString(fb.String())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMarkdownFinding(b *strings.Builder, n int, f *Finding) {
	head := fmt.Sprintf("\n#### %d. `%s` %s", n, f.Kind, f.Severity) + f.knownWords()
	if f.Signature != "" {
		head += " " + markdownCode(f.Signature)
	}
	if f.Scenario != "" {
		head += " in " + markdownCode(f.Scenario)
	}
	b.WriteString(head + "\n\n" + markdownText(f.Message) + "\n\n")
	if f.Request != nil {
		fmt.Fprintf(b, "- request: %s (id %s)\n", markdownCode(f.Request.what()), markdownCode(f.Request.ID))
	}
	if r, ok := LookupRule(f.Rule); ok {
		fmt.Fprintf(b, "- rule: `%s` (%s)\n", r.ID, markdownText(r.Source))
	}
	if len(f.Evidence) > 0 {
		b.WriteString("\n<details><summary>evidence</summary>\n\n")
		var ev strings.Builder
		for _, e := range f.Evidence {
			fmt.Fprintf(&ev, "%s, %s", e.Where(), e.Type)
			if e.Dir != "" {
				ev.WriteString(" " + e.Dir)
			}
			ev.WriteString(" at " + words.Duration(e.TUS) + "\n")
			for _, l := range excerptLines(e.Excerpt, signatureWord(f.Signature)) {
				ev.WriteString("  | " + l + "\n")
			}
		}
		b.WriteString(markdownBlock(ev.String(), "") + "\n</details>\n")
	}
	if f.Repro != "" {
		b.WriteString("\nreplay it:\n\n" + markdownBlock(f.Repro+"\n", "sh"))
	}
}

// targetWords names a report's target: its command, and its URL over HTTP;
// a client under test, and the server it ran against.
func targetWords(t Target) string {
	s := shell.Quote(t.Command)
	if t.Role == RoleClient {
		s = "client " + orDash(s)
		switch {
		case t.URL != "" && len(t.Server) > 0:
			return s + " against " + t.URL + ", served by " + shell.Quote(t.Server)
		case t.URL != "":
			return s + " against " + t.URL
		case len(t.Server) > 0:
			return s + " against server " + shell.Quote(t.Server)
		}
		return s
	}
	switch {
	case t.URL != "" && s != "":
		return t.URL + ", served by " + s
	case t.URL != "":
		return t.URL
	}
	return orDash(s)
}

func markdownOutcome(o string) string {
	switch o {
	case OutcomePass:
		return "✅ pass"
	case OutcomeFail:
		return "❌ fail"
	case OutcomeIndeterminate:
		return "⚠️ indeterminate"
	case OutcomeError:
		return "💥 error"
	}
	return orDash(o)
}

// markdownCode is s as inline code, with a fence longer than any run of
// backticks in it.
func markdownCode(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// markdownBlock is s as a fenced code block, fenced with more backticks
// than any run in s, so that no peer's bytes can close it.
func markdownBlock(s, lang string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + lang + "\n" + s + fence + "\n"
}

// markdownText escapes what Markdown would read as markup or HTML in
// running text: a message quotes peers' bytes.
func markdownText(s string) string {
	var b strings.Builder
	if strings.HasPrefix(s, "#") {
		// A heading only at the start of a line.
		b.WriteByte('\\')
	}
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~':
			b.WriteByte('\\')
		case '\n':
			b.WriteString(" ")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
