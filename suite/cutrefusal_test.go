package suite

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// A server of the stateful revision refuses the probe's server/discover
// with an HTTP error and a JSON-RPC error of id null in the body (the
// TypeScript SDK's 400 "No valid session ID provided"; cancel-panic's 404).
// eof cutting the client's connection once that answer came must still
// record its status: without it, the body's id-null error read as an
// answer to nothing (unknown-response-id, found by mcpchaos explore on
// typescript-sdk jsonResponseStreamableHttp, Brave and Notion).
func TestEOFAfterARefusalKeepsItsStatus(t *testing.T) {
	scenario := faults.Scenario{Name: "eof-discover", Faults: []string{"eof:on=c2s:request:server/discover,nth=1"}}
	report, result, events := runHTTPScenario(t, func(addr string) []string {
		return []string{filepath.Join(examplesDir, "cancel-panic"), "--fixed", "--addr", addr}
	}, scenario, 2*time.Second)
	if result.Outcome != reports.OutcomePass || len(report.Findings) > 0 {
		t.Errorf("outcome %s, findings %v; want a pass\n%s", result.Outcome, summarize(report.Findings), reportText(report))
	}
	var cut, status, body int64
	for _, e := range events {
		switch {
		case e.Type == wire.EventHTTP && e.Fault == "eof#1" && strings.HasPrefix(e.Detail, "connection cut") && cut == 0:
			cut = e.Seq
		case e.Type == wire.EventHTTP && e.Exchange == 1 && e.Status >= 400 && status == 0:
			status = e.Seq
		case e.Type == wire.EventReceived && e.Exchange == 1 && e.Kind == "error" && body == 0:
			body = e.Seq
		}
	}
	if got := []int64{cut, status, body}; slices.Contains(got, 0) || body < status {
		t.Errorf("seqs of the cut, the refusal's status and its body: %v; want all three, the status before the body", got)
	}
}
