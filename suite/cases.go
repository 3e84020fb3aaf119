package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// SaveCase writes one failing scenario run into dir as a regression case
// file and returns its path. c says what ran: the scenario (its effective
// deadline included), the seed, the target (command; for a client program,
// also the server behind it; the URL over HTTP), the probe's explicit calls
// and skipped tools, and the fault decisions of its transcript; SaveCase
// adds the kinds of the error findings.
func SaveCase(dir string, c faults.Case, findings []reports.Finding) (string, error) {
	sc := c.Scenario
	c.Scenario = faults.Scenario{Name: sc.Name, Doc: sc.Doc, Faults: sc.Faults, Era: sc.Era, Workload: sc.Workload, Deadline: sc.Deadline, Expect: sc.Expect}
	c.Findings = errorKinds(findings)
	data, err := faults.MarshalCase(c)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, sc.Name+"-seed"+strconv.FormatUint(c.Seed, 10)+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("cannot write the case file: %w", err)
	}
	return path, nil
}

// caseURL is how a case records an HTTP server's URL: without a password,
// which whoever replays it gives again with --url.
func caseURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Redacted()
}

// ToolCalls are probe calls as a case records them; a call without
// arguments had {}.
func ToolCalls(calls []probe.Call) []faults.ToolCall {
	var out []faults.ToolCall
	for _, c := range calls {
		args := string(c.Args)
		if c.Args == nil {
			args = "{}"
		}
		out = append(out, faults.ToolCall{Tool: c.Tool, Arguments: args})
	}
	return out
}

// ProbeCalls are a case's recorded calls as the probe makes them; nil (no
// calls recorded) stays nil: every listed tool.
func ProbeCalls(calls []faults.ToolCall) []probe.Call {
	var out []probe.Call
	for _, c := range calls {
		out = append(out, probe.Call{Tool: c.Tool, Args: json.RawMessage(c.Arguments)})
	}
	return out
}

// Decisions are the fault firings of a transcript, each with the message it
// fired on.
func Decisions(events []wire.Event) []faults.Decision {
	var d decisionLog
	for i := range events {
		d.add(&events[i])
	}
	return d.out
}

// CaseResult is one case replayed.
type CaseResult struct {
	File string
	Case faults.Case
	// Now are the kinds of the replay's error findings.
	Now []string
	// Decisions are the fault firings of the replay.
	Decisions []faults.Decision
	// Status is CaseSame, CaseDifferent or CasePasses.
	Status string
}

// Case statuses.
const (
	CaseSame      = "same"      // it still fails, with the same finding kinds
	CaseDifferent = "different" // it still fails, with other kinds
	CasePasses    = "passes"    // no error finding any more
)

// StillFails reports whether the replay found errors.
func (r CaseResult) StillFails() bool { return r.Status != CasePasses }

// SameDecisions reports whether the replay's faults fired as the recorded
// ones did; when they did not, the replay did not recreate the moment and a
// different outcome says little.
func (r CaseResult) SameDecisions() bool {
	return slices.EqualFunc(r.Case.Decisions, r.Decisions, faults.Decision.Same)
}

// Line is the one-line verdict on the case.
func (r CaseResult) Line() string {
	was := kindsText(r.Case.Findings)
	var s string
	switch r.Status {
	case CaseSame:
		s = fmt.Sprintf("STILL FAILS  %s: the same way (%s)", r.File, was)
	case CaseDifferent:
		s = fmt.Sprintf("FAILS        %s: differently (was %s, now %s)", r.File, was, kindsText(r.Now))
	default:
		s = fmt.Sprintf("PASSES       %s: no longer fails (was %s)", r.File, was)
	}
	if !r.SameDecisions() {
		s += fmt.Sprintf("; the faults fired differently (%d decisions recorded, %d now), so the moment may not have been recreated", len(r.Case.Decisions), len(r.Decisions))
	}
	return s
}

func kindsText(k []string) string {
	if len(k) == 0 {
		return "no findings"
	}
	return strings.Join(k, ", ")
}

// Replay is the outcome of replaying a directory of cases.
type Replay struct {
	Cases []CaseResult
	// Reports has one report per run: per target command the cases ran
	// against and probe workload they ran with.
	Reports []*reports.Report
	// Workloads are, one per report, the probe workload of its run; the zero
	// value is every listed tool with arguments from its schema (and is all
	// a run of test-client cases has).
	Workloads []Workload
}

// Workload is the probe workload of a replay run: explicit calls (nil:
// every listed tool) and skipped tools.
type Workload struct {
	Calls     []faults.ToolCall
	SkipTools []string
}

// IsZero reports whether the workload is the default one.
func (w Workload) IsZero() bool { return w.Calls == nil && w.SkipTools == nil }

// ExitCode is 0 when every case passes now, 1 when any still fails. A
// target that cannot start or initialize is an error of ReplayCases; one
// with baseline findings still has its cases judged against that baseline.
func (r *Replay) ExitCode() int {
	for _, c := range r.Cases {
		if c.StillFails() {
			return 1
		}
	}
	return 0
}

// ReadCases reads every case file of dir (*.yaml and *.yml). Anything else
// in dir, a case file that does not parse and an empty dir are errors: a
// case that is silently skipped is a regression silently let through.
func ReadCases(dir string) (files []string, cases []faults.Case, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the case directory: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() || !(strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			return nil, nil, fmt.Errorf("%s: not a case file; a case directory holds only the .yaml case files mcpchaos test --save-case writes", path)
		}
		c, err := faults.ReadCaseFile(path)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, path)
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, nil, fmt.Errorf("%s holds no case files; save some with mcpchaos test --save-case %s", dir, dir)
	}
	return files, cases, nil
}

// ReplayCases replays every case of dir against a server. Each runs
// against o.Command when it is set, otherwise against the command the case
// recorded; over HTTP when the case recorded a URL or o.URL is set (o.URL
// replaces the recorded one); and with the probe workload the case recorded
// (its calls and skipped tools) unless o.Probe.Calls or o.Probe.SkipTools
// is set, which then replaces the recorded one of the two. Cases of one
// target and one workload share one run (and its no-fault baseline): the
// probe's workload is set per run, so cases of different workloads run
// apart. Each case is a scenario named after its file, pinned to its
// recorded seed.
func ReplayCases(ctx context.Context, o Options, dir string) (*Replay, error) {
	return replayCases(dir, false, func(c faults.Case) (caseGroup, error) {
		g := caseGroup{target: [][]string{cmdOr(o.Command, c.Command)}, calls: c.Calls, skips: c.SkipTools}
		if o.Probe.Calls != nil {
			g.calls = ToolCalls(o.Probe.Calls)
		}
		if o.Probe.SkipTools != nil {
			g.skips = o.Probe.SkipTools
		}
		var err error
		g.url, err = urlOr(o.URL, c.URL)
		return g, err
	}, func(g caseGroup, scs []faults.Scenario, observe func(string, []faults.Decision)) (*reports.Report, error) {
		run := o
		run.Command, run.URL, run.Scenarios, run.observe = g.target[0], g.url, scs, observe
		if o.URL == nil && g.url != nil {
			// A case of a server on a port of each run's: the URL it
			// recorded holds PortPlaceholder (port 0 here).
			run.PortPerRun = g.url.Port() == "0"
		}
		run.Probe.Calls, run.Probe.SkipTools = ProbeCalls(g.calls), g.skips
		return Run(ctx, run)
	})
}

// ReplayClientCases replays every case of dir saved by test-client: each
// runs the client program o.Client (or the one the case recorded) against
// the server o.Server (or the one the case recorded), over HTTP when the
// case recorded a URL or o.ServerURL is set.
func ReplayClientCases(ctx context.Context, o ClientOptions, dir string) (*Replay, error) {
	return replayCases(dir, true, func(c faults.Case) (caseGroup, error) {
		g := caseGroup{target: [][]string{cmdOr(o.Client, c.Command), cmdOr(o.Server, c.Server)}}
		var err error
		g.url, err = urlOr(o.ServerURL, c.URL)
		return g, err
	}, func(g caseGroup, scs []faults.Scenario, observe func(string, []faults.Decision)) (*reports.Report, error) {
		run := o
		run.Client, run.Server, run.ServerURL, run.Scenarios, run.observe = g.target[0], g.target[1], g.url, scs, observe
		if o.ServerURL == nil && g.url != nil {
			run.PortPerRun = g.url.Port() == "0" // as in ReplayCases
		}
		return RunClient(ctx, run)
	})
}

// urlOr is the HTTP server a case replays against: the one given, else the
// one it recorded (nil over stdio).
func urlOr(given *url.URL, recorded string) (*url.URL, error) {
	if given != nil || recorded == "" {
		return given, nil
	}
	u, _, err := ParseURLTemplate(recorded)
	if err != nil {
		return nil, err
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return nil, fmt.Errorf("the case recorded %s without its password; give the URL with --url or --server-url", recorded)
	}
	return u, nil
}

func cmdOr(given, recorded []string) []string {
	if len(given) > 0 {
		return given
	}
	return recorded
}

// caseGroup is the cases that share one run: the same target commands and
// the same probe workload.
type caseGroup struct {
	target [][]string
	url    *url.URL // the HTTP server; nil over stdio
	calls  []faults.ToolCall
	skips  []string
	idx    []int
}

func (g *caseGroup) same(o caseGroup) bool {
	return slices.EqualFunc(g.target, o.target, func(a, b []string) bool { return slices.Equal(a, b) }) &&
		caseURL(g.url) == caseURL(o.url) &&
		slices.Equal(g.calls, o.calls) && slices.Equal(g.skips, o.skips)
}

// replayCases reads dir's cases, groups them by target and workload (what
// key returns), runs each group once and compares each case's replay with
// its record. client says which command saved the cases: a case of the
// other is an error, as it cannot be replayed here.
func replayCases(dir string, client bool, key func(faults.Case) (caseGroup, error),
	run func(g caseGroup, scs []faults.Scenario, observe func(string, []faults.Decision)) (*reports.Report, error)) (*Replay, error) {
	files, cases, err := ReadCases(dir)
	if err != nil {
		return nil, err
	}
	var groups []*caseGroup
	for i, c := range cases {
		if client != c.Client {
			if client {
				return nil, fmt.Errorf("%s: a case of mcpchaos test; replay it with mcpchaos test --cases", files[i])
			}
			return nil, fmt.Errorf("%s: a case of mcpchaos test-client; replay it with mcpchaos test-client --cases", files[i])
		}
		k, err := key(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", files[i], err)
		}
		gi := slices.IndexFunc(groups, func(g *caseGroup) bool { return g.same(k) })
		if gi < 0 {
			groups = append(groups, &k)
			gi = len(groups) - 1
		}
		groups[gi].idx = append(groups[gi].idx, i)
	}

	replay := &Replay{}
	for _, g := range groups {
		var scs []faults.Scenario
		byName := map[string]int{}
		for _, i := range g.idx {
			sc := cases[i].Scenario
			sc.Name = caseName(files[i])
			sc.Ref = files[i]
			seed := cases[i].Seed
			sc.Seed = &seed
			byName[sc.Name] = i
			scs = append(scs, sc)
		}
		decisions := map[string][]faults.Decision{}
		var mu sync.Mutex // scenarios run in parallel
		observe := func(name string, ds []faults.Decision) {
			mu.Lock()
			decisions[name] = ds
			mu.Unlock()
		}
		report, err := run(*g, scs, observe)
		if err != nil {
			return nil, err
		}
		replay.Reports = append(replay.Reports, report)
		replay.Workloads = append(replay.Workloads, Workload{Calls: g.calls, SkipTools: g.skips})
		for _, res := range report.Scenarios {
			i, ok := byName[res.Name]
			if !ok {
				continue
			}
			var fs []reports.Finding
			for _, f := range report.Findings {
				if f.Scenario == res.Name {
					fs = append(fs, f)
				}
			}
			cr := CaseResult{File: files[i], Case: cases[i], Now: errorKinds(fs), Decisions: decisions[res.Name]}
			switch {
			case len(cr.Now) == 0:
				cr.Status = CasePasses
			case slices.Equal(cr.Now, cases[i].Findings):
				cr.Status = CaseSame
			default:
				cr.Status = CaseDifferent
			}
			replay.Cases = append(replay.Cases, cr)
		}
	}
	return replay, nil
}

// caseName names a case's scenario after its file: unique in its
// directory, and what the user sees in the listing.
func caseName(path string) string {
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	if name == faults.Baseline.Name {
		name = "case-" + name
	}
	return name
}
