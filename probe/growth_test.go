package probe

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/wire"
)

func TestNearMissExpansion(t *testing.T) {
	for _, tc := range []struct{ tpl, want string }{
		{"users://{id}", "users://a,a,a/"},
		{"users://x{/id*}", "users://x/a,a,a/"},
		{"file:///{path}.txt", "file:///a,a,a.txt/"},
		{"search://q{?tags*}", "search://q?tags=a,a,a/"},
		{"a://{x}/{y}", "a://a,a,a/a,a,a/"},
	} {
		if got := nearMissExpansion(tc.tpl, 3); got != tc.want {
			t.Errorf("nearMissExpansion(%q, 3) = %q, want %q", tc.tpl, got, tc.want)
		}
	}
}

// The bundled everything server gets both series, every step answered (it
// matches its templates in linear time), each request marked with its
// series, step and size, the sizes growing.
func TestGrowthSeries(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w := serveEverything(t)
	out, _, err := run(t, Config{Hostile: HostileSample, Deadline: 5 * time.Second, Seed: 1}, r, w)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, req := range out.Requests {
		if !req.Growth {
			continue
		}
		if !req.Answered {
			t.Errorf("%s (id %s) was not answered: %s", req.Hostile, req.ID, req.Error)
		}
		got = append(got, req.Method)
	}
	var want []string
	for range templateItems {
		want = append(want, "resources/read")
	}
	for range stringSizes {
		want = append(want, "tools/call")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("growth steps sent (-want +got):\n%s", diff)
	}
}

// Each step carries its marker; the sizes grow.
func TestGrowthMarkers(t *testing.T) {
	s := &session{cfg: Config{Hostile: HostileSample}}
	tools := []listedTool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}}
	series := s.growthWork(tools, &surface{templates: []string{"static://x", "users://{id}"}})
	if len(series) != 2 {
		t.Fatalf("%d series, want 2 (a template's and a tool's)", len(series))
	}
	for _, g := range series {
		last := 0
		for i, st := range g.steps {
			var p struct {
				Meta map[string]struct {
					Series     string
					Step, Size int
				} `json:"_meta"`
			}
			if err := json.Unmarshal(st.req.params, &p); err != nil {
				t.Fatal(err)
			}
			m := p.Meta[wire.MetaGrowth]
			if m.Series != g.name || m.Step != i || m.Size != st.size || st.size <= last {
				t.Errorf("%s step %d: marker %+v, size %d after %d", g.name, i, m, st.size, last)
			}
			last = st.size
		}
	}
}
