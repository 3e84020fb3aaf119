package release

import (
	"fmt"
	"slices"
	"strings"
)

// Target is one platform a release ships a binary for.
type Target struct {
	GOOS, GOARCH string
}

// Targets are the platforms of a release: the three desktop and server
// systems on both CPU families people run them on.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

func (t Target) String() string { return t.GOOS + "/" + t.GOARCH }

// Exe is the binary's file name on the target.
func (t Target) Exe() string {
	if t.GOOS == "windows" {
		return "mcpchaos.exe"
	}
	return "mcpchaos"
}

// NodeOS and NodeCPU are the target as Node names it (process.platform,
// process.arch), which npm's "os" and "cpu" fields match.
func (t Target) NodeOS() string {
	if t.GOOS == "windows" {
		return "win32"
	}
	return t.GOOS
}

func (t Target) NodeCPU() string {
	if t.GOARCH == "amd64" {
		return "x64"
	}
	return t.GOARCH
}

// NPMName is the platform package the launcher's optional dependencies name.
func (t Target) NPMName() string { return "@mcpchaos/" + t.NodeOS() + "-" + t.NodeCPU() }

// WheelTags are the platform tags of the target's wheel. The binary is
// static (CGO_ENABLED=0), so one wheel serves glibc and musl Linux alike;
// manylinux2014 is the oldest tag pip on aarch64 knows. macOS 11 is the
// first with arm64, and Go 1.26 needs macOS 12 or newer anyway.
func (t Target) WheelTags() []string {
	switch t.String() {
	case "linux/amd64":
		return []string{"manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"}
	case "linux/arm64":
		return []string{"manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"}
	case "darwin/amd64":
		return []string{"macosx_12_0_x86_64"}
	case "darwin/arm64":
		return []string{"macosx_12_0_arm64"}
	case "windows/amd64":
		return []string{"win_amd64"}
	case "windows/arm64":
		return []string{"win_arm64"}
	}
	panic(fmt.Sprintf("release: no wheel tag for %s", t))
}

// ParseTargets reads a comma-separated list of GOOS/GOARCH; every one must be
// a release target.
func ParseTargets(list string) ([]Target, error) {
	var out []Target
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(Targets, func(t Target) bool { return t.String() == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown target %q: the release targets are %v", name, Targets)
		}
		out = append(out, Targets[i])
	}
	return out, nil
}
