package suite

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// id-collision over streamable HTTP, as mcpchaos test --url runs it with
// the probe in its default era (server/discover first): the request whose
// id it borrows is a tool call the server holds, never the probe's
// server/discover, which a server of the stateful revision refuses (404
// from cancel-panic, which knows no session) and so never holds. Either
// the collision lands (the lender is still unanswered when the borrower
// goes on, and its answer comes after), or the scenario says the fault did
// not land and is indeterminate: never a pass on a collision that did not
// happen.
func TestIDCollisionOverHTTPBorrowsAHeldCall(t *testing.T) {
	scenario := faults.Scenario{Name: "id-collision", Faults: []string{"id-collision:on=c2s:request:tools/call"}}
	for _, tc := range []struct {
		name  string
		serve func(addr string) []string
	}{
		{"bundled server", func(addr string) []string { return []string{mcpchaosBin, "serve", "--http", addr} }},
		{"stateful server refusing server/discover", func(addr string) []string {
			return []string{filepath.Join(examplesDir, "cancel-panic"), "--fixed", "--addr", addr}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report, result, events := runHTTPScenario(t, tc.serve, scenario, 5*time.Second)
			// A firing that did not land gives its fault back (faults.Plan
			// miss), so a later tool call may get the collision and land:
			// the scenario passes then. Only when every firing missed must
			// it be indeterminate.
			type firing struct {
				decision       wire.Event
				lender         sentRequest
				forwarded      int64 // seq the borrower went on at
				lenderAnswered int64 // seq the lender's answer came at
				missed         string
			}
			// The requests by the id the server has them under (a
			// borrower's is its lender's), and the answers by id and
			// exchange, each in order.
			sent := map[string]sentRequest{}
			received := map[int64]wire.Event{}
			answers := map[string][]int64{}
			var firings []*firing
			byBorrower := map[int64]*firing{}
			for _, e := range events {
				switch {
				case e.Type == wire.EventFault && strings.HasPrefix(e.Detail, wire.NotLanded):
					if f := byBorrower[e.Of]; f != nil {
						f.missed = e.Detail
					} else {
						t.Errorf("a miss (%s) of no firing on record: borrower seq %d", e.Detail, e.Of)
					}
				case e.Type == wire.EventFault && !strings.HasPrefix(e.Detail, "skipped") && e.Spec != "":
					f := &firing{decision: e, lender: sent[e.ID]}
					firings = append(firings, f)
					byBorrower[e.Of] = f
				case e.Type == wire.EventReceived && e.Dir == "c2s" && e.Kind == "request":
					received[e.Seq] = e
					if _, borrower := byBorrower[e.Seq]; !borrower {
						sent[e.ID] = sentRequest{method: e.Method, exchange: e.Exchange, since: e.Seq}
					}
				case e.Type == wire.EventForwarded && e.Dir == "c2s":
					r, ok := received[e.Of]
					if !ok {
						break
					}
					if e.ID != "" && e.ID != r.ID { // rewritten by a fault
						delete(sent, r.ID)
						sent[e.ID] = sentRequest{method: r.Method, exchange: r.Exchange, since: e.Seq}
					}
					if f := byBorrower[e.Of]; f != nil && f.forwarded == 0 {
						f.forwarded = e.Seq
					}
				case e.Type == wire.EventReceived && e.Dir == "s2c" && e.ID != "":
					key := fmt.Sprintf("%s@%d", e.ID, e.Exchange)
					answers[key] = append(answers[key], e.Seq)
				}
			}
			for _, f := range firings {
				for _, seq := range answers[fmt.Sprintf("%s@%d", f.decision.ID, f.lender.exchange)] {
					if seq > f.lender.since {
						f.lenderAnswered = seq
						break
					}
				}
			}
			if len(firings) == 0 {
				t.Fatalf("id-collision never fired; outcome %s %q", result.Outcome, result.Indeterminate)
			}
			var landed []*firing
			var missed []string
			for _, f := range firings {
				if f.lender.method != "tools/call" {
					t.Errorf("the collision borrowed id %s, of %q; want a tool call in flight (%s)", f.decision.ID, f.lender.method, f.decision.Detail)
				}
				if f.missed != "" {
					missed = append(missed, f.missed)
				} else {
					landed = append(landed, f)
				}
			}
			if len(landed) == 0 {
				if result.Outcome != reports.OutcomeIndeterminate || !strings.Contains(strings.Join(result.Indeterminate, "\n"), "the fault fired but did not land") {
					t.Errorf("no firing landed (%q), yet the outcome is %s, indeterminate %q", missed, result.Outcome, result.Indeterminate)
				}
				return
			}
			if result.Outcome != reports.OutcomePass {
				t.Errorf("outcome %s, indeterminate %q; want pass\n%s", result.Outcome, result.Indeterminate, reportText(report))
			}
			for _, f := range landed {
				if f.forwarded == 0 || f.lenderAnswered < f.forwarded {
					t.Errorf("the borrower went on at seq %d and the lender (id %s) was answered at seq %d: the collision cannot have landed, and the transcript does not say so; its events under that id:\n%s", f.forwarded, f.decision.ID, f.lenderAnswered, eventsOfID(events, f.decision.ID))
				}
			}
		})
	}
}

// sentRequest is a request the server holds, or will, under an id: the
// plan takes a request for one in flight from its receipt, and a request a
// fault rewrote from its going on under its new id.
type sentRequest struct {
	method   string
	exchange int64
	since    int64 // the seq it holds that id from
}

// closed-session (either twin) hands each answer to the POST waiting for
// it by request id: two calls under one id leave one POST waiting forever.
// id-collision over HTTP finds it (a hang); it passed when the collision
// borrowed the id of the server/discover the server had refused.
func TestIDCollisionOverHTTPFindsPOSTsKeyedByID(t *testing.T) {
	scenario := faults.Scenario{Name: "id-collision", Faults: []string{"id-collision:on=c2s:request:tools/call"}}
	report, _, _ := runHTTPScenario(t, func(addr string) []string {
		return []string{filepath.Join(examplesDir, "closed-session"), "--fixed", "--addr", addr}
	}, scenario, 2*time.Second)
	if got, want := summarize(report.Findings), []found{{"id-collision", reports.KindHang, ""}}; !slices.Equal(got, want) {
		t.Errorf("findings %v; want %v\n%s", got, want, reportText(report))
	}
}

// runHTTPScenario runs scenario, and the baseline, with the probe against
// the HTTP server serve(addr) starts at /mcp, and returns the report, the
// scenario's result and its transcript.
func runHTTPScenario(t *testing.T, serve func(addr string) []string, scenario faults.Scenario, deadline time.Duration) (*reports.Report, *reports.ScenarioResult, []wire.Event) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u, _ := url.Parse("http://" + addr + "/mcp")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{Command: serve(addr), URL: u, Scenarios: []faults.Scenario{scenario},
		Seed: 1, Deadline: deadline, Grace: 2 * time.Second, Parallel: 1, TranscriptDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var result *reports.ScenarioResult
	for i := range report.Scenarios {
		if report.Scenarios[i].Name == scenario.Name {
			result = &report.Scenarios[i]
		}
	}
	if result == nil {
		t.Fatalf("no result for %s:\n%s", scenario.Name, reportText(report))
	}
	events, err := readTranscriptFile(filepath.Join(dir, scenario.Name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return report, result, events
}

// eventsOfID lists the events that carry id, or point at one that does,
// for a failure to show.
func eventsOfID(events []wire.Event, id string) string {
	var b strings.Builder
	bySeq := map[int64]wire.Event{}
	for _, e := range events {
		bySeq[e.Seq] = e
		if e.ID == id || bySeq[e.Of].ID == id {
			fmt.Fprintf(&b, "  seq %d %s %s %s %s exchange %d of %d id %s %s\n", e.Seq, e.Type, e.Dir, e.Kind, e.Method, e.Exchange, e.Of, e.ID, e.Detail)
		}
	}
	return b.String()
}
