// Command mkrelease builds a release of mcpchaos into dist/: run it through
// scripts/package from the repository's root. docs/install.md says what each
// artifact holds and how a release is cut.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/release"
	"github.com/spf13/pflag"
)

const usage = `Usage: scripts/package [flags]

Builds mcpchaos for every release platform, reproducibly, into dist/:
archives (.tar.gz, .zip for Windows), npm packages (npm/*.tgz, as npm pack
writes them), Python wheels (python/*.whl) and SHA256SUMS over all of them.

`

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("package", pflag.ContinueOnError)
	out := fs.String("out", "dist", "write the artifacts into `DIR` (emptied first if an earlier run wrote it)")
	version := fs.String("version", "", "the release `VERSION`, X.Y.Z or X.Y.Z-{alpha,beta,rc,dev}.N (default: the v-tag on HEAD without its v, else 0.1.0-dev.N with N the commit count)")
	targets := fs.String("targets", "", "build only these `GOOS/GOARCH`, comma-separated (default: all six)")
	skipNPM := fs.Bool("skip-npm", false, "do not build the npm packages (they need npm)")
	skipWheels := fs.Bool("skip-wheels", false, "do not build the Python wheels")
	checkLicenses := fs.String("check-licenses", "", "build nothing: check that every artifact of the release in `DIR` carries the repository's LICENSE (and, in its metadata, the licence's name), and exit 1 naming each one that does not")
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage+fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	if *checkLicenses != "" {
		return checkReleaseLicenses(*checkLicenses)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cfg := release.Config{Root: ".", Out: *out, Targets: release.Targets, Go: "go", Wheels: !*skipWheels, Log: os.Stdout}
	if _, err := os.Stat("cmd/mcpchaos"); err != nil {
		return fail("run scripts/package from the repository's root (no cmd/mcpchaos here)")
	}
	if *targets != "" {
		t, err := release.ParseTargets(*targets)
		if err != nil {
			return fail(err.Error())
		}
		cfg.Targets = t
	}
	if !*skipNPM {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return fail("npm is not on PATH: install Node.js to build the npm packages, or pass --skip-npm")
		}
		cfg.NPM = npm
	}

	var err error
	if cfg.Commit, err = git("rev-parse", "HEAD"); err != nil {
		return fail("cannot tell the commit (scripts/package builds from a git checkout): " + err.Error())
	}
	ct, err := git("log", "-1", "--format=%ct")
	if err != nil {
		return fail(err.Error())
	}
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return fail("the commit's time: " + err.Error())
	}
	cfg.Time = time.Unix(secs, 0).UTC()
	cfg.Version = *version
	if cfg.Version == "" {
		cfg.Version = defaultVersion()
	}
	if dirty, _ := git("status", "--porcelain", "--untracked-files=no"); dirty != "" {
		fmt.Fprintf(os.Stderr, "package: warning: the checkout has uncommitted changes; the binaries say commit %.12s but hold those changes too\n", cfg.Commit)
	}

	fmt.Printf("mcpchaos %s (commit %.12s) into %s\n", cfg.Version, cfg.Commit, cfg.Out)
	start := time.Now()
	arts, err := release.Build(ctx, cfg)
	if err != nil {
		return fail(err.Error())
	}
	for _, a := range arts {
		fmt.Printf("  %-84s %6.1f MB\n", a.Path, float64(a.Size)/1e6)
	}
	fmt.Printf("%d artifacts and SHA256SUMS in %s, in %.0fs\n", len(arts), cfg.Out, time.Since(start).Seconds())
	return 0
}

func checkReleaseLicenses(dist string) int {
	license, err := os.ReadFile(release.LicenseFile)
	if err != nil {
		return fail("run scripts/package from the repository's root: " + err.Error())
	}
	checked, err := release.CheckLicenses(dist, license)
	if err != nil {
		fmt.Fprintf(os.Stderr, "package: artifacts without the licence (%s):\n%v\n", release.License, err)
		return 1
	}
	fmt.Printf("%d artifacts in %s carry the %s licence (%s, and the licence in their metadata where they have any)\n",
		len(checked), dist, release.License, release.LicenseFile)
	return 0
}

// defaultVersion is the release tag on HEAD, or a development version that
// grows with every commit, so that npm and pip order builds correctly.
func defaultVersion() string {
	if tag, err := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*"); err == nil {
		return strings.TrimPrefix(tag, "v")
	}
	n, err := git("rev-list", "--count", "HEAD")
	if err != nil {
		n = "0"
	}
	return "0.1.0-dev." + n
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func fail(msg string) int {
	fmt.Fprintln(os.Stderr, "package: "+msg)
	return 2
}
