package reports

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	goldenfile "github.com/mcpchaos/mcpchaos/internal/golden"
)

const (
	verdictsDoc = "../docs/verdicts.md"
	rulesBegin  = "<!-- rules:begin"
	rulesEnd    = "<!-- rules:end -->"
)

// docs/verdicts.md holds the rules table users read; it must be the table
// the judge uses. go test ./reports -update rewrites it.
func TestVerdictsDocHasTheRulesTable(t *testing.T) {
	b, err := os.ReadFile(verdictsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, rulesBegin), strings.Index(doc, rulesEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", verdictsDoc, rulesBegin, rulesEnd)
	}
	i += strings.Index(doc[i:], "\n") + 1
	got := doc[i:j]
	if goldenfile.Updating() {
		if err := os.WriteFile(verdictsDoc, []byte(doc[:i]+RulesTable()+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(RulesTable(), got); diff != "" {
		t.Errorf("%s's rules table is not reports.Rules (-want +got; go test ./reports -update rewrites it):\n%s", verdictsDoc, diff)
	}
}

// Every rule is of a kind the report knows, with a severity, and every kind
// of the verdict table has at least one rule.
func TestRulesCoverTheKinds(t *testing.T) {
	kinds := map[string]bool{}
	for _, r := range Rules {
		if _, ok := kindOrder[r.Kind]; !ok && r.Kind != KindExpectation {
			t.Errorf("rule %s: kind %q is not a finding kind", r.ID, r.Kind)
		}
		if r.Severity != SeverityError && r.Severity != SeverityWarning {
			t.Errorf("rule %s: severity %q", r.ID, r.Severity)
		}
		if r.Says == "" || r.Source == "" {
			t.Errorf("rule %s: says what and where must both be written", r.ID)
		}
		kinds[r.Kind] = true
	}
	for k := range kindOrder {
		if !kinds[k] {
			t.Errorf("kind %s has no rule", k)
		}
	}
}
