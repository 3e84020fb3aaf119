package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the linker in release builds (scripts/package). Empty otherwise.
var (
	version string
	commit  string
)

// devVersion is what a build says when nothing tells it better: a plain
// `go build` or `go run` from a checkout.
const devVersion = "0.1.0-dev"

// Info describes one build of mcpchaos.
type Info struct {
	// Version is the release version without a leading "v" (0.2.0,
	// 0.2.0-rc.1), or 0.1.0-dev for a development build.
	Version string
	// Commit is the git commit the binary was built from, when known.
	Commit string
	// Modified is true when the checkout had uncommitted changes.
	Modified bool
	// Go is the toolchain's version (go1.26.8); Platform is GOOS/GOARCH.
	Go       string
	Platform string
}

// Read reports the running binary's build.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(version, commit, bi)
}

// fromBuild prefers what the linker stamped, then what the toolchain
// recorded: the module version of `go install ...@vX` and the vcs settings of
// a build in a git checkout.
func fromBuild(stampedVersion, stampedCommit string, bi *debug.BuildInfo) Info {
	info := Info{Version: stampedVersion, Commit: stampedCommit, Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if bi.GoVersion != "" {
			info.Go = bi.GoVersion
		}
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.modified":
				info.Modified = stampedCommit == "" && s.Value == "true"
			}
		}
	}
	info.Version = strings.TrimPrefix(info.Version, "v")
	if info.Version == "" {
		info.Version = devVersion
	}
	return info
}

// Version is Read().Version.
func Version() string { return Read().Version }

// String is what `mcpchaos version` prints: the version on the first line,
// so that scripts (and the npm and Python launchers) can check it, then the
// commit and the toolchain.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpchaos %s\n", i.Version)
	c := i.Commit
	if c == "" {
		c = "unknown"
	}
	if i.Modified {
		c += " (modified)"
	}
	fmt.Fprintf(&b, "commit %s\n", c)
	fmt.Fprintf(&b, "%s %s\n", i.Go, i.Platform)
	return b.String()
}
