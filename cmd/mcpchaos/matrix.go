package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// matrixFlags are the flags test and test-client share: which scenarios,
// the seed, the time limits, and where the results go.
type matrixFlags struct {
	scenarios     []string
	faults        []string
	seed          uint64
	deadline      time.Duration
	grace         time.Duration
	reports       reportOutputs
	transcriptDir string
	parallel      int
	strict        bool
	saveCase      string
	baselinePath  string
	writeBaseline string
	baseline      *reports.Baseline
	shard         string
	shardOf       *reports.Shard
}

func (m *matrixFlags) register(fs *pflag.FlagSet, deadline time.Duration, deadlineDoc, graceDoc string) {
	fs.StringArrayVar(&m.scenarios, "scenario", nil, "run only this scenario: a built-in `NAME` (see mcpchaos scenarios), every scenario of a scenario FILE, or FILE#NAME (repeatable)")
	fs.StringArrayVar(&m.faults, "fault", nil, "also run a scenario of this fault `SPEC`, NAME[:KEY=VALUE,...] (repeatable: one scenario of all of them; without --scenario, instead of the default matrix; see mcpchaos faults)")
	fs.Uint64Var(&m.seed, "seed", 0, "seed for every random decision (default: random, printed)")
	fs.DurationVar(&m.deadline, "deadline", deadline, deadlineDoc)
	fs.DurationVar(&m.grace, "grace", suite.DefaultGrace, graceDoc)
	m.reports.register(fs, "write the mcpchaos.report/v1 JSON report to `FILE`")
	fs.StringVar(&m.transcriptDir, "transcript-dir", "", "write one transcript per scenario into `DIR`")
	fs.IntVar(&m.parallel, "parallel", 0, "runs of the matrix to go at once, the baseline among them (default: as many as the machine's cores and memory take; 1 runs the baseline alone first, then each scenario alone)")
	fs.BoolVar(&m.strict, "strict", false, "exit 1 on warnings too")
	fs.StringVar(&m.saveCase, "save-case", "", "write each failing scenario run into `DIR` as a regression case file")
	fs.StringVar(&m.baselinePath, "baseline", "", "the known findings in `FILE` (written by --write-baseline) do not fail the run; a new one does, and so does an entry that no longer fails")
	fs.StringVar(&m.shard, "shard", "", "run only slice `K/N` of the matrix (scenarios dealt round-robin; needs --seed, the same for every shard); mcpchaos report merge joins the shards' reports")
	fs.StringVar(&m.writeBaseline, "write-baseline", "", "write the run's failing findings to `FILE` as a baseline (notes of --baseline entries kept)")
}

// finish prints the summary, writes the report, says where --save-case put
// the failing runs, and returns the exit status the report calls for.
func (m *matrixFlags) finish(report *reports.Report, command string, stdout, stderr io.Writer) int {
	if m.shardOf != nil {
		s := *m.shardOf
		s.Run = reports.ShardRun(m.seed, report.Target, s.Matrix, s.Total)
		report.Shard = &s
	}
	if m.baseline != nil {
		m.baseline.Apply(report, m.baselinePath)
	}
	code := finishReport(report, &m.reports, m.strict, stdout, stderr)
	if m.writeBaseline != "" {
		n, err := m.saveBaseline(report, stdout)
		if err != nil {
			return usageError(stderr, "%s: %v", command, err)
		}
		if m.writeBaseline != "-" { // on stdout, the baseline is the last thing said
			fmt.Fprintf(stdout, "baseline of %d known finding(s) written to %s; pass it with --baseline %s\n", n, m.writeBaseline, suite.ShellQuote([]string{m.writeBaseline}))
		}
	}
	if m.saveCase != "" {
		announceCases(stdout, report, m.saveCase, command)
	}
	return code
}

// resolve checks the values, picks the scenarios (the default matrix of
// command, or the built-in scenarios and scenario files --scenario names)
// and draws the seed when none was given; the error is a usage error.
func (m *matrixFlags) resolve(fs *pflag.FlagSet, command string, matrix []faults.Scenario) ([]faults.Scenario, error) {
	if m.deadline <= 0 || m.grace <= 0 {
		return nil, errors.New("--deadline and --grace must be positive")
	}
	if m.parallel < 0 || (m.parallel == 0 && fs.Changed("parallel")) {
		return nil, errors.New("--parallel must be positive (leave it out to let the machine decide)")
	}
	if err := m.reports.parse(true); err != nil {
		return nil, err
	}
	if m.baselinePath != "" {
		b, err := reports.ReadBaselineFile(m.baselinePath)
		if err != nil {
			return nil, fmt.Errorf("--baseline: %v", err)
		}
		m.baseline = b
	}
	selected := matrix
	if len(m.faults) > 0 {
		selected = nil
	}
	if len(m.scenarios) > 0 {
		var err error
		// baseline is selectable too: it is what the repro line of a
		// baseline finding names, and it runs the baseline alone.
		presets := append(faults.PresetsFor(command), faults.Baseline)
		if selected, err = faults.ResolveScenarios(m.scenarios, presets); err != nil {
			return nil, err
		}
	}
	if len(m.faults) > 0 {
		sc, err := faults.FaultFlagsScenario(m.faults)
		if err != nil {
			return nil, err
		}
		selected = append(selected, sc)
	}
	if m.shard != "" {
		return m.slice(fs, selected)
	}
	if !fs.Changed("seed") {
		m.seed = rand.Uint64()
	}
	return selected, nil
}

// runFailed reports why a matrix could not run; a target that fails its
// set-up shows the last lines of its own stderr, which usually say why.
func runFailed(stderr io.Writer, command, whose string, err error) int {
	if errors.Is(err, chaos.ErrStdioUnsupported) {
		// A case recorded over stdio, replayed on Windows.
		io.WriteString(stderr, stdioRefusal("mcpchaos "+command+" over stdio"))
		return exitUsage
	}
	var setup *suite.SetupError
	if errors.As(err, &setup) && len(setup.Stderr) > 0 {
		if setup.Whose != "" {
			whose = setup.Whose
		}
		fmt.Fprintf(stderr, "mcpchaos: %s: %v; the %s's stderr:\n", command, err, whose)
		for _, l := range lastLines(setup.Stderr, 20) {
			fmt.Fprintf(stderr, "  %s\n", l)
		}
		return exitUsage
	}
	return usageError(stderr, "%s: %v", command, err)
}

// selectorArgs are the flags that pick one scenario again in a repro line:
// --scenario SELECTOR, or the --fault flags for the scenario they made.
func (m *matrixFlags) selectorArgs(scenario string) []string {
	if scenario != faults.FaultFlagsName {
		return []string{"--scenario", scenario}
	}
	var out []string
	for _, spec := range m.faults {
		out = append(out, "--fault", spec)
	}
	return out
}

// saveBaseline writes --write-baseline: the run's failing findings, with
// the notes the --baseline entries of the same findings had ("-" is
// stdout). It returns how many findings it holds.
func (m *matrixFlags) saveBaseline(report *reports.Report, stdout io.Writer) (int, error) {
	b := reports.BaselineOf(report)
	if m.baseline != nil {
		notes := map[reports.Fingerprint]string{}
		for _, e := range m.baseline.Findings {
			notes[e.Fingerprint] = e.Note
		}
		for i := range b.Findings {
			b.Findings[i].Note = notes[b.Findings[i].Fingerprint]
		}
	}
	return len(b.Findings), writeTo(m.writeBaseline, stdout, b.Write)
}

// slice keeps the scenarios of --shard K/N.
func (m *matrixFlags) slice(fs *pflag.FlagSet, matrix []faults.Scenario) ([]faults.Scenario, error) {
	var k, n int
	if _, err := fmt.Sscanf(m.shard, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != m.shard {
		return nil, fmt.Errorf("--shard %q: write K/N with 1 <= K <= N, as in --shard 2/4", m.shard)
	}
	if !fs.Changed("seed") {
		return nil, fmt.Errorf("--shard %s needs --seed: every shard of a run must use the same seed (as in --seed %d on each)", m.shard, rand.Uint32())
	}
	s := &reports.Shard{Index: k, Total: n}
	var out []faults.Scenario
	for i, sc := range matrix {
		s.Matrix = append(s.Matrix, sc.Name)
		if reports.InShard(i, k, n) {
			out = append(out, sc)
		}
	}
	m.shardOf = s
	return out, nil
}
