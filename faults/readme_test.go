package faults

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// docs/faults.md is the fault reference users read (the README links to
// it): every fault family must have a row there with its registry example,
// and every trigger key a row with an example, so a new fault or key cannot
// land undocumented.
func TestFaultDocsDocumentEveryFaultAndTrigger(t *testing.T) {
	raw, err := os.ReadFile("../docs/faults.md")
	if err != nil {
		t.Fatal(err)
	}
	// The fault table and the trigger table: the page has no other table.
	section := string(raw)
	rows := map[string]string{} // first cell -> whole row
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		rows[cell] = line
	}
	for _, f := range Families() {
		row, ok := rows["`"+f.Name+"`"]
		switch {
		case !ok:
			t.Errorf("docs/faults.md has no row for fault %s in its fault table", f.Name)
		case !strings.Contains(row, "`"+f.Example+"`"):
			t.Errorf("docs/faults.md's row for fault %s does not show its example `%s`", f.Name, f.Example)
		}
	}
	for _, p := range TriggerParams() {
		var row string
		for cell, r := range rows {
			if strings.HasPrefix(cell, "`"+p.Name+"=") {
				row = r
			}
		}
		if row == "" {
			t.Errorf("docs/faults.md has no row for trigger key %s= in its trigger table", p.Name)
			continue
		}
		// The last cell is the example.
		cells := strings.Split(strings.Trim(row, "| "), " | ")
		if ex := cells[len(cells)-1]; !strings.HasPrefix(ex, "`") || len(ex) < 3 {
			t.Errorf("docs/faults.md's row for trigger key %s= has no example, got %q", p.Name, ex)
		}
	}
}

// docs/http.md is where the HTTP matrices and faults are documented: each
// scenario of both default matrices has a row with its fault spec, and each
// HTTP-only fault a row in "Faults on HTTP", so that neither can land
// undocumented. docs/scenarios.md reviews every scenario of them.
func TestHTTPDocsListTheMatricesAndFaults(t *testing.T) {
	raw, err := os.ReadFile("../docs/http.md")
	if err != nil {
		t.Fatal(err)
	}
	review, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "| `") {
			cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			if _, seen := rows[cell]; !seen {
				rows[cell] = line
			}
		}
	}
	for _, sc := range append(HTTPServerScenarios(), httpClientOnlyScenarios()...) {
		row, ok := rows["`"+sc.Name+"`"]
		switch {
		case !ok:
			t.Errorf("docs/http.md has no row for scenario %s", sc.Name)
		case len(sc.Faults) == 0 && !strings.Contains(row, fmt.Sprintf("sessions: %d", sc.Sessions())):
			t.Errorf("docs/http.md's row for scenario %s does not say it runs %d sessions", sc.Name, sc.Sessions())
		case len(sc.Faults) > 0 && !strings.Contains(row, "`"+sc.Faults[0]+"`"):
			t.Errorf("docs/http.md's row for scenario %s does not show its fault `%s`", sc.Name, sc.Faults[0])
		}
		if !strings.Contains(string(review), "| `"+sc.Name+"` |") {
			t.Errorf("docs/scenarios.md does not review scenario %s", sc.Name)
		}
	}
	for _, f := range Families() {
		if _, ok := rows["`"+f.Name+"` (HTTP only)"]; f.HTTPOnly && !ok {
			t.Errorf("docs/http.md's Faults on HTTP has no row for %s", f.Name)
		}
	}
}
