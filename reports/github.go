package reports

import (
	"fmt"
	"io"
	"strings"
)

// WriteGitHub writes the findings as GitHub Actions workflow commands: an
// ::error for each error finding, a ::warning for each warning (and for
// each expected finding, which does not fail the run), and a ::notice with
// the totals, so that a run's findings show as annotations on the job. A
// run that ended in error is one ::error.
func WriteGitHub(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		level := "error"
		if !f.Fails() {
			level = "warning"
		}
		title := "mcpchaos " + f.Kind
		if f.Signature != "" {
			title += " " + f.Signature
		}
		if f.Scenario != "" {
			title += " in " + f.Scenario
		}
		msg := f.Message
		if f.Repro != "" {
			msg += "\nreplay it: " + f.Repro
		}
		fmt.Fprintf(&b, "::%s title=%s::%s\n", level, githubProperty(title), githubData(msg))
	}
	for _, fp := range r.StaleBaseline {
		fmt.Fprintf(&b, "::error title=mcpchaos stale baseline entry::%s\n", githubData(staleWords(fp, r.BaselineFile)))
	}
	if r.Outcome == OutcomeError {
		fmt.Fprintf(&b, "::error title=mcpchaos could not test the target::%s\n", githubData(orDash(r.Error)))
	}
	fmt.Fprintf(&b, "::notice title=mcpchaos::%s\n", githubData(totals(r)))
	_, err := io.WriteString(w, b.String())
	return err
}

// githubData escapes a workflow command's message, as the Actions toolkit
// does (% CR LF).
func githubData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// githubProperty escapes a workflow command's property value: the message
// escapes and the separators of properties (: ,).
func githubProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// staleWords says what to do about a stale baseline entry.
func staleWords(fp Fingerprint, file string) string {
	return fp.String() + " no longer fails; remove it from " + orDash(file)
}
