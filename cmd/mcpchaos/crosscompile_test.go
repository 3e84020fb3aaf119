package main

import (
	"os"
	"os/exec"
	"testing"
)

// Releases build mcpchaos for linux, darwin and windows, on amd64 and arm64
// (docs/platforms.md). A file that needs unix and lacks its build tag, or
// its Windows twin, breaks the Windows build alone: cross-compiling here
// catches it on any machine.
func TestCrossCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the binary; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	for _, target := range []struct{ goos, goarch string }{
		{"windows", "amd64"},
		{"darwin", "arm64"},
	} {
		t.Run(target.goos+"-"+target.goarch, func(t *testing.T) {
			cmd := exec.Command(goTool, "build", "-o", os.DevNull, ".")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+target.goos, "GOARCH="+target.goarch)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s GOARCH=%s go build ./cmd/mcpchaos: %v\n%s", target.goos, target.goarch, err, out)
			}
		})
	}
}
