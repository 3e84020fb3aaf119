// Package release builds what a release of mcpchaos ships, reproducibly:
// the binaries for every platform, their archives, the npm packages (a
// launcher plus one package per platform, the pattern esbuild and Biome use)
// and the Python wheels (one per platform, the binary as the wheel's script,
// the pattern ruff and uv use), and a SHA256SUMS file over all of them.
//
// Same source, same bytes: binaries are built with -trimpath and no build
// id, every archive entry carries the commit's time and fixed owners and
// modes, entries are sorted, and gzip headers carry no name or time.
// scripts/package runs it; docs/install.md says what each artifact holds.
package release
