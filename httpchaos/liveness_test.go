package httpchaos_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// A liveness probe goes to the server on an exchange of its own, with the
// client's session, in the era the client speaks; its answer is recorded
// and dropped, and the judge reads the server as alive.
func TestProbeAsksTheServerInTheClientsEra(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			r := startRig(t, 1)
			c := r.dial(t, era.protocol)
			if _, err := call(c, testTimeout, "echo", map[string]any{"text": "hi"}, nil); err != nil {
				t.Fatal(err)
			}
			r.proxy.Probe("a test asks")
			c.Close()
			v := r.end(t)
			if len(v.Findings) != 0 {
				t.Errorf("findings: %+v", v.Findings)
			}
			method := "ping"
			if era.protocol == "" {
				method = "server/discover"
			}
			var got []string
			for _, e := range r.rec.Events() {
				switch {
				case e.Type == wire.EventProbe:
					got = append(got, "probe "+e.Method+" "+e.Detail)
				case e.Type == wire.EventReceived && e.Dir == "s2c" && e.ID != "" && e.ID[0] == '"':
					got = append(got, "answer "+e.Kind)
				case e.Type == wire.EventDropped && e.Dir == "s2c":
					got = append(got, "dropped: "+e.Detail)
				}
			}
			want := []string{"probe " + method + " a test asks", "answer response", "dropped: the answer to a liveness probe of mcpchaos"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("probe events (-want +got):\n%s", diff)
			}
		})
	}
}
