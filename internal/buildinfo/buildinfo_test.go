package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuild(t *testing.T) {
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"}}
	tests := []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            Info
	}{
		{"go run in a checkout", "", "", checkout,
			Info{Version: "0.1.0-dev", Commit: "abc123", Modified: true, Go: "go1.26.8"}},
		{"go install @version", "", "", installed,
			Info{Version: "0.3.1", Go: "go1.26.8"}},
		{"release build: the stamp wins", "v0.4.0", "def456", checkout,
			Info{Version: "0.4.0", Commit: "def456", Go: "go1.26.8"}},
		{"no build info at all", "", "", nil,
			Info{Version: "0.1.0-dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuild(tt.version, tt.commit, tt.bi)
			got.Platform = ""
			if tt.bi == nil {
				got.Go = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fromBuild (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStringPutsTheVersionFirst(t *testing.T) {
	got := Info{Version: "0.4.0", Commit: "def456", Go: "go1.26.8", Platform: "linux/amd64"}.String()
	want := "mcpchaos 0.4.0\ncommit def456\ngo1.26.8 linux/amd64\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
}
