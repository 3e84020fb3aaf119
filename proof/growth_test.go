package proof

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// CVE-2026-0621 on the real TypeScript SDK: a stdio server written as the
// SDK's README shows one, with a resource template whose path variable takes
// a list (users://list{/ids*}). Before 1.25.2 the SDK matched it with a
// pattern that backtracks, and the baseline's growth series (near misses
// with 4, 8, 12... ids) shows the answer time doubling with each id:
// cost-grows-with-input. 1.32.2, past the fix, answers every step at once.
func TestCostGrowsOnTheTypeScriptSDK(t *testing.T) {
	corpus := corpusDir(t)
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "proof", "corpus", "ts_template_server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		want    []string
	}{
		{"1.16.0", []string{reports.RuleCostGrowsWithInput}},
		{"1.32.2", nil},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			// The server imports the SDK from node_modules beside it.
			dst := filepath.Join(corpus, "ts-client-"+tc.version, "ts_template_server.mjs")
			if err := os.WriteFile(dst, src, 0o644); err != nil {
				t.Fatalf("%v: run ./scripts/install-corpus", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			report, err := suite.Run(ctx, suite.Options{Command: []string{"node", dst}, Seed: 1, Deadline: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range report.Findings {
				got = append(got, f.Rule)
			}
			if !slices.Equal(got, tc.want) {
				var b strings.Builder
				reports.WriteSummary(&b, report)
				t.Errorf("baseline findings %q, want %q\n%s", got, tc.want, b.String())
			}
		})
	}
}
