// Package buildinfo says which mcpchaos this is: the version, the commit it
// was built from and the Go toolchain that built it, for `mcpchaos version`
// and for the tool block of every report, so that a finding can be traced to
// the build that made it.
//
// A release stamps the version and commit with the linker
// (-X github.com/mcpchaos/mcpchaos/internal/buildinfo.version=...; see
// scripts/package). `go install github.com/mcpchaos/mcpchaos/cmd/mcpchaos@v1.2.3`
// stamps nothing, but the Go toolchain records the module version, and a build
// in a git checkout records the commit; both are read back here.
package buildinfo
