package explore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
	"github.com/mcpchaos/mcpchaos/suite"
)

// examplesDir holds the planted-bug example servers, built once.
var examplesDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpchaos-explore-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", dir+"/", "github.com/mcpchaos/mcpchaos/examples/servers/...")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the example servers:", err)
		os.Exit(1)
	}
	examplesDir = dir
	// No goroutine of a search, or of the runs it made, outlives it.
	leakcheck.Main(m, 10*time.Second, "mcpchaos/mcpchaos/explore.", "mcpchaos/mcpchaos/suite.", "mcpchaos/mcpchaos/chaos.")
}

// The planted servers whose bug no scenario of the default matrix reaches
// (and null-params, which only the hostile-input preset reaches)
// (suite's TestPlantedBugsBeyondTheDefaultMatrix and
// TestExtraServerPresetsFindTheirPlantedBugs show the matrix misses them):
// the systematic pass finds each, shrinks it to one fault, and finds nothing
// on the fixed twin.
func TestExploreFindsWhatTheMatrixMisses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the systematic pass against eight servers")
	}
	for _, tc := range []struct {
		example string
		// want is the family of the one fault the crash or hang shrinks to.
		want, signature string
	}{
		{"initialized-twice", "duplicate", "crash/crash-signature go:panic"},
		{"double-answer", "duplicate", "crash/crash-signature go:panic"},
		{"line-scanner", "", "crash/crash-exit exit:1"},
		{"id-keyed", "id-collision", ""},
		// The hostile-input scenario finds it too; the search finds it
		// at any moment a plan reaches, by a mutation.
		{"null-params", "mutate", "crash/crash-signature go:panic"},
	} {
		for _, fixed := range []bool{false, true} {
			name := tc.example
			command := []string{filepath.Join(examplesDir, tc.example)}
			if fixed {
				name += "/fixed"
				command = append(command, "--fixed")
			}
			t.Run(name, func(t *testing.T) {
				res := exploreSystematic(t, command)
				if fixed {
					if len(res.Groups) > 0 {
						t.Fatalf("the fixed twin: found %v, want nothing", signatures(res.Groups))
					}
					return
				}
				g := groupOf(res, tc.signature, tc.want)
				if g == nil {
					for _, g := range res.Groups {
						t.Logf("%s: first %v, minimal %v", g.Signature, Specs(g.First), Specs(g.Minimal))
					}
					t.Fatalf("found %v, want a finding from %q", signatures(res.Groups), tc.want)
				}
				if len(g.Minimal) != 1 || g.Reproduced == 0 {
					t.Errorf("%s: smallest plan %v reproduced %d of %d; want one fault that reproduces", g.Signature, Specs(g.Minimal), g.Reproduced, g.Tries)
				}
				if res.Skipped == 0 {
					t.Errorf("dynamic reduction skipped no point")
				}
			})
		}
	}
}

// exploreSystematic runs the systematic pass alone against command.
func exploreSystematic(t *testing.T, command []string) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	trials, err := suite.NewTrials(ctx, suite.Options{Command: command, Seed: 1, Deadline: 2 * time.Second, Grace: 2 * time.Second})
	if err != nil {
		t.Fatalf("NewTrials: %v", err)
	}
	msgs := trials.Messages()
	points := Enumerate(msgs, Target{Stateful: slices.ContainsFunc(msgs, func(m suite.Message) bool { return m.Method == "initialize" })})
	classes := map[string]bool{}
	for _, p := range points {
		classes[p.key()] = true
	}
	res, err := Explore(ctx, Options{Runner: trials, Points: points, Seed: 1, Budget: 3 * time.Minute,
		MaxRuns: len(classes), Parallel: 4, Repeats: 2})
	if err != nil {
		t.Fatalf("Explore: %v", err)
	}
	return res
}

// groupOf is the group whose signature is signature (any, when empty)
// found first by a plan of family (any, when empty).
func groupOf(res *Result, signature, family string) *Group {
	for _, g := range res.Groups {
		if (signature == "" || g.Signature == signature) && (family == "" || g.First[0].Family == family) {
			return g
		}
	}
	return nil
}
