package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/wire"
)

// probeCallsIn are the distinct tool calls of a transcript's workload, as
// NAME=ARGUMENTS, in the order first made. The calls the probe makes to see
// them refused come after the workload, the unlisted tool first, and only
// when the session outlived it: under eof-inflight, three fast echo calls
// may all be answered before the third is sent on a loaded machine, and
// then the fault never strikes. They are not the workload, so they end it.
func probeCallsIn(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []string
	seen := map[string]bool{}
	err = wire.ReadTranscript(f, func(e wire.Event) error {
		if e.Type != wire.EventReceived || e.Dir != wire.ToServer.String() || e.Method != "tools/call" {
			return nil
		}
		var req struct {
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(e.Raw), &req); err != nil {
			return err
		}
		if strings.HasPrefix(req.Params.Name, "mcpchaos-no-such-tool") {
			return errWorkloadDone
		}
		var args bytes.Buffer
		if err := json.Compact(&args, req.Params.Arguments); err != nil {
			return err
		}
		if c := req.Params.Name + "=" + args.String(); !seen[c] {
			seen[c] = true
			calls = append(calls, c)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errWorkloadDone) {
		t.Fatalf("%s: %v", path, err)
	}
	return calls
}

var errWorkloadDone = errors.New("the workload's calls are over")

// Cases of one server with different probe workloads run apart, each with
// its own recorded calls and skipped tools; cases with the same workload
// share a run. A workload in the options replaces the recorded one.
func TestReplayCasesGroupsByWorkload(t *testing.T) {
	dir := t.TempDir()
	crash := []string{filepath.Join(examplesDir, "crash")}
	sc := faults.Scenario{Name: "eof-inflight", Faults: []string{"eof:on=c2s:request:tools/call,inflight=3"},
		Workload: faults.Workload{Calls: 3, Concurrency: 3}, Deadline: 2 * time.Second}
	slow := []faults.ToolCall{{Tool: "slow", Arguments: `{"ms":240}`}}
	echo := []faults.ToolCall{{Tool: "echo", Arguments: `{"text":"b"}`}, {Tool: "slow", Arguments: `{"ms":60}`}}
	for name, c := range map[string]faults.Case{
		"a":  {Calls: slow},
		"b":  {Calls: echo, SkipTools: []string{"slow"}},
		"c":  {Calls: slow},
		"d":  {SkipTools: []string{"slow"}},
		"e":  {},
		"e2": {},
	} {
		c.Scenario, c.Seed, c.Command, c.Findings = sc, 1, crash, []string{"crash"}
		data, err := faults.MarshalCase(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	transcripts := t.TempDir()
	replay, err := ReplayCases(ctx, Options{Seed: 1, Deadline: 2 * time.Second, Grace: time.Second, TranscriptDir: transcripts}, dir)
	if err != nil {
		t.Fatal(err)
	}
	wantWorkloads := []Workload{{Calls: slow}, {Calls: echo, SkipTools: []string{"slow"}}, {SkipTools: []string{"slow"}}, {}}
	if diff := cmp.Diff(wantWorkloads, replay.Workloads); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if len(replay.Reports) != len(wantWorkloads) || len(replay.Cases) != 6 {
		t.Fatalf("%d reports and %d cases, want %d reports and 6 cases", len(replay.Reports), len(replay.Cases), len(wantWorkloads))
	}
	for i, r := range replay.Reports {
		var names []string
		for _, s := range r.Scenarios {
			names = append(names, s.Name)
		}
		want := [][]string{{"a", "c"}, {"b"}, {"d"}, {"e", "e2"}}[i]
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("run %d scenarios (-want +got):\n%s", i, diff)
		}
	}
	for name, want := range map[string][]string{
		"a": {`slow={"ms":240}`},
		"c": {`slow={"ms":240}`},
		"b": {`echo={"text":"b"}`},
		"d": {`echo={}`},
		"e": {`echo={}`, `slow={}`},
	} {
		if diff := cmp.Diff(want, probeCallsIn(t, filepath.Join(transcripts, name+".jsonl"))); diff != "" {
			t.Errorf("case %s: calls (-want +got):\n%s", name, diff)
		}
	}

	// Calls in the options replace every case's recorded calls; each case
	// keeps its recorded skipped tools.
	transcripts = t.TempDir()
	replay, err = ReplayCases(ctx, Options{Seed: 1, Deadline: 2 * time.Second, Grace: time.Second, TranscriptDir: transcripts,
		Probe: probe.Config{Calls: []probe.Call{{Tool: "slow", Args: json.RawMessage(`{"ms":120}`)}, {Tool: "echo"}}}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	given := []faults.ToolCall{{Tool: "slow", Arguments: `{"ms":120}`}, {Tool: "echo", Arguments: `{}`}}
	if diff := cmp.Diff([]Workload{{Calls: given}, {Calls: given, SkipTools: []string{"slow"}}}, replay.Workloads); diff != "" {
		t.Errorf("runs with calls given (-want +got):\n%s", diff)
	}
	for name, want := range map[string][]string{"a": {`slow={"ms":120}`, `echo={}`}, "b": {`echo={}`}} {
		if diff := cmp.Diff(want, probeCallsIn(t, filepath.Join(transcripts, name+".jsonl"))); diff != "" {
			t.Errorf("case %s with calls given: calls (-want +got):\n%s", name, diff)
		}
	}
}
