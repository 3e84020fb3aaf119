package suite

import (
	"github.com/mcpchaos/mcpchaos/internal/buildinfo"
	"github.com/mcpchaos/mcpchaos/reports"
)

// ReportTool is the tool block of a report made by this build: the version
// the command line was given, and the commit and toolchain that built it.
func ReportTool(version string) reports.Tool {
	bi := buildinfo.Read()
	return reports.Tool{Name: "mcpchaos", Version: version, Commit: bi.Commit, Go: bi.Go}
}
