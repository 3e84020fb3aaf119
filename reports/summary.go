package reports

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpchaos/mcpchaos/internal/words"
)

// WriteSummary writes the short summary a person reads on stdout: one line
// per scenario, then each finding with its evidence and the command that
// replays it, then the totals. The JSON report has the rest.
func WriteSummary(w io.Writer, r *Report) {
	var b strings.Builder
	width := 0
	rows := tableRows(r)
	names := make([]string, len(rows))
	for i, s := range rows {
		names[i] = s.label(cmp.Or(s.Name, "(unnamed)"))
		width = max(width, len(names[i]))
	}
	for i, s := range rows {
		line := fmt.Sprintf("%-5s  %-*s  %6s", outcomeWord(s.Outcome), width, names[i], words.Duration(s.DurationMS*1000))
		if s.Findings > 0 {
			line += fmt.Sprintf("  %d %s", s.Findings, words.Plural(s.Findings, "finding", "findings"))
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		// Why a scenario could not fail, always; what a fault explains,
		// under a failing scenario, where it helps to read the findings.
		// The baseline's notes say what the workload could not do well
		// (tools that failed on the generated arguments): always shown.
		notes := s.Indeterminate
		if s.Outcome == OutcomeFail || s.baseline {
			notes = append(slices.Clone(notes), s.Notes...)
		}
		for k, n := range notes {
			if k == 3 {
				fmt.Fprintf(&b, "       … %d more notes in the report\n", len(notes)-3)
				break
			}
			fmt.Fprintf(&b, "       - %s\n", words.Terminal(n))
		}
	}
	for _, f := range r.Findings {
		b.WriteString("\n")
		writeFinding(&b, &f)
	}
	if r.Explore != nil {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		io.WriteString(tw, r.Explore.coverageTable(func(cells ...string) string { return strings.Join(cells, "\t") + "\n" }))
		tw.Flush()
		for _, l := range r.Explore.lines() {
			b.WriteString(words.Terminal(l) + "\n")
		}
	}
	for _, fp := range r.StaleBaseline {
		fmt.Fprintf(&b, "\nstale baseline entry: %s\n", staleWords(fp, r.BaselineFile))
	}
	b.WriteString("\n" + totals(r) + "\n")
	if r.Baseline != nil && r.Baseline.Outcome == OutcomeFail {
		b.WriteString("the target fails without faults: the baseline's findings are listed once, and each scenario reports only what differs from them\n")
	}
	if r.Error != "" {
		b.WriteString("error: " + words.Terminal(r.Error) + "\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// knownWords marks a finding that fails nothing: one the --baseline
// lists, or one its scenario file expects.
func (f *Finding) knownWords() string {
	switch {
	case f.Baselined:
		return " (known: in the baseline)"
	case f.Expected:
		return " (expected)"
	}
	return ""
}

// what is the request's method, and the tool a tools/call called.
func (r *Request) what() string {
	if r.Tool != "" {
		return orDash(r.Method) + " " + r.Tool
	}
	return orDash(r.Method)
}

func writeFinding(b *strings.Builder, f *Finding) {
	head := f.Kind + "  " + f.Severity + f.knownWords()
	if f.Signature != "" {
		head += "  " + f.Signature
	}
	if f.Scenario != "" {
		head += "  [" + f.Scenario + "]"
	}
	// A finding quotes its peers (a tool's error, a traceback, a frame):
	// nothing they sent may reach the terminal as anything but text.
	b.WriteString(words.Terminal(head) + "\n")
	b.WriteString("  " + words.Terminal(f.Message) + "\n")
	if f.Request != nil {
		fmt.Fprintf(b, "  request: %s (id %s)\n", words.Terminal(f.Request.what()), words.Terminal(f.Request.ID))
	}
	if r, ok := LookupRule(f.Rule); ok {
		fmt.Fprintf(b, "  rule: %s (%s)\n", r.ID, r.Source)
	}
	// The first and the last evidence: what was asked (or printed) and how
	// it ended; the middle is in the JSON report.
	show := f.Evidence
	if len(show) > 2 {
		show = []Evidence{show[0], show[len(show)-1]}
	}
	for _, ev := range show {
		fmt.Fprintf(b, "  evidence: %s, %s", ev.Where(), ev.Type)
		if ev.Dir != "" {
			b.WriteString(" " + ev.Dir)
		}
		b.WriteString(" at " + words.Duration(ev.TUS) + "\n")
		for _, l := range excerptLines(ev.Excerpt, signatureWord(f.Signature)) {
			b.WriteString("    | " + words.Terminal(l) + "\n")
		}
	}
	if f.Repro != "" {
		b.WriteString("  repro: " + f.Repro + "\n")
	}
}

// excerptLines is what the summary shows of an excerpt: a frame on one
// line, and the lines of a stderr excerpt that end where the finding's
// exception is named (the last line mentioning focus; the end of the excerpt
// when focus is "" or absent). One stderr can hold several crashes, as an
// exception group does, and each finding must show its own.
func excerptLines(x, focus string) []string {
	const maxLines, maxWidth = 6, 160
	lines := strings.Split(x, "\n")
	end := len(lines)
	if focus != "" {
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.Contains(lines[i], focus) {
				end = i + 1
				break
			}
		}
	}
	if below := len(lines) - end; below > 0 {
		lines = append(lines[:end:end], fmt.Sprintf("… (%d %s below)", below, words.Plural(below, "line", "lines")))
	}
	if len(lines) > maxLines {
		lines = append([]string{fmt.Sprintf("… (%d lines above)", len(lines)-maxLines+1)}, lines[len(lines)-maxLines+1:]...)
	}
	for i, l := range lines {
		if len(l) > maxWidth {
			lines[i] = words.Cut(l, maxWidth)
		}
	}
	return lines
}

// signatureWord is the part of a crash signature that its stderr names:
// "RuntimeError" for "python:RuntimeError:dictionary changed size", "panic: "
// for "go:panic". Signatures that name no stderr text (exit:N, signal:X)
// give "".
func signatureWord(sig string) string {
	lang, rest, ok := strings.Cut(sig, ":")
	if !ok || lang == "exit" || lang == "signal" {
		return ""
	}
	word, _, _ := strings.Cut(rest, ":")
	if sig == "go:panic" {
		// "panic: msg" names it; "panic(...)" and "runtime/panic.go" are
		// frames of the stack below, most of all in a recovered panic's.
		return word + ": "
	}
	return word
}

func totals(r *Report) string {
	var pass, fail, indet, errs, warns int
	for _, s := range r.Scenarios {
		switch s.Outcome {
		case OutcomePass:
			pass++
		case OutcomeFail:
			fail++
		case OutcomeIndeterminate:
			indet++
		}
	}
	for _, f := range r.Findings {
		if f.Severity == SeverityWarning {
			warns++
		} else {
			errs++
		}
	}
	ran := fmt.Sprintf("%d %s: %d passed, %d failed, %d indeterminate",
		len(r.Scenarios), words.Plural(len(r.Scenarios), "scenario", "scenarios"), pass, fail, indet)
	if len(r.Scenarios) == 0 && r.Baseline != nil {
		// --scenario baseline: "0 scenarios: 0 passed" read as if
		// nothing had run.
		ran = "the baseline alone, no fault scenario: " + orDash(r.Baseline.Outcome)
	}
	n := len(r.Findings)
	return fmt.Sprintf("%s; %d %s (%d %s, %d %s); outcome %s",
		ran, n, words.Plural(n, "finding", "findings"), errs, words.Plural(errs, "error", "errors"), warns, words.Plural(warns, "warning", "warnings"),
		orDash(r.Outcome))
}

func outcomeWord(o string) string {
	switch o {
	case OutcomePass:
		return "PASS"
	case OutcomeFail:
		return "FAIL"
	case OutcomeIndeterminate:
		return "INDET"
	case OutcomeError:
		return "ERROR"
	}
	return "?"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
