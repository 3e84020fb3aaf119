package release

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Config says what to build and where.
type Config struct {
	Root    string    // the repository's root
	Out     string    // where the artifacts go (dist/)
	Version string    // the release version, as CheckVersion accepts it
	Commit  string    // the commit the binaries say they were built from
	Time    time.Time // every archive entry's time: the commit's, so that it is the same in every build
	Targets []Target
	Go      string // the go command
	NPM     string // the npm command; empty skips the npm packages
	Wheels  bool   // build the Python wheels
	Log     io.Writer
}

// Artifact is one file a release ships.
type Artifact struct {
	Path string // relative to Config.Out, slash-separated
	Size int64
	Sum  [32]byte
}

const modulePath = "github.com/mcpchaos/mcpchaos"

// The longest a child of the build may take: go build of one target, and
// npm pack of one package (which only reads files; it never needs the
// registry).
const (
	buildTimeout = 15 * time.Minute
	packTimeout  = 2 * time.Minute
)

// Build writes every artifact of a release into cfg.Out, then SHA256SUMS.
// cfg.Out must be empty, absent, or an earlier output of Build (it holds a
// SHA256SUMS): anything else might be someone's files, and Build replaces
// what it finds.
func Build(ctx context.Context, cfg Config) ([]Artifact, error) {
	if err := CheckVersion(cfg.Version); err != nil {
		return nil, err
	}
	pyVersion, _ := PythonVersion(cfg.Version)
	if err := prepareOut(cfg.Out); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp("", "mcpchaos-package-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)

	readme, err := os.ReadFile(filepath.Join(cfg.Root, "README.md"))
	if err != nil {
		return nil, err
	}
	license, err := os.ReadFile(filepath.Join(cfg.Root, LicenseFile))
	if err != nil {
		return nil, fmt.Errorf("every artifact carries the licence, and the repository's root has none: %w", err)
	}
	var pyPackage []File
	var pyReadme []byte
	if cfg.Wheels {
		if pyPackage, err = readTree(filepath.Join(cfg.Root, "packaging/python/mcpchaos")); err != nil {
			return nil, fmt.Errorf("the Python package: %w", err)
		}
		pyPackage = wheelPackage(pyPackage)
		if pyReadme, err = os.ReadFile(filepath.Join(cfg.Root, "packaging/python/README.md")); err != nil {
			return nil, err
		}
	}
	if cfg.NPM != "" {
		if err := stageLauncher(cfg, license, filepath.Join(stage, "npm", "mcpchaos")); err != nil {
			return nil, err
		}
	}

	var arts []Artifact
	write := func(rel string, data []byte) error {
		p := filepath.Join(cfg.Out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		arts = append(arts, Artifact{Path: rel, Size: int64(len(data)), Sum: sha256.Sum256(data)})
		return nil
	}

	for _, t := range cfg.Targets {
		start := time.Now()
		bin, err := buildBinary(ctx, cfg, t, filepath.Join(stage, "bin", t.GOOS+"-"+t.GOARCH))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Log, "built %-14s %5.1f MB in %.1fs\n", t, float64(len(bin))/1e6, time.Since(start).Seconds())

		base := fmt.Sprintf("mcpchaos_%s_%s_%s", cfg.Version, t.GOOS, t.GOARCH)
		files := []File{
			{Name: base + "/" + t.Exe(), Mode: 0o755, Data: bin},
			{Name: base + "/README.md", Mode: 0o644, Data: readme},
			{Name: base + "/" + LicenseFile, Mode: 0o644, Data: license},
		}
		var archive []byte
		name := base + ".tar.gz"
		if t.GOOS == "windows" {
			name = base + ".zip"
			archive, err = Zip(files, cfg.Time)
		} else {
			archive, err = TarGz(files, cfg.Time)
		}
		if err != nil {
			return nil, err
		}
		if err := write(name, archive); err != nil {
			return nil, err
		}

		if cfg.Wheels {
			w := Wheel{Version: pyVersion, Target: t, Binary: bin, Package: pyPackage, Readme: string(pyReadme), License: license}
			whl, err := w.Build(cfg.Time)
			if err != nil {
				return nil, err
			}
			if err := write("python/"+w.FileName(), whl); err != nil {
				return nil, err
			}
		}

		if cfg.NPM != "" {
			dir := filepath.Join(stage, "npm", t.NodeOS()+"-"+t.NodeCPU())
			if err := stagePlatform(t, cfg.Version, bin, license, dir); err != nil {
				return nil, err
			}
			if err := packInto(ctx, cfg, dir, write); err != nil {
				return nil, err
			}
		}
	}
	if cfg.NPM != "" {
		if err := packInto(ctx, cfg, filepath.Join(stage, "npm", "mcpchaos"), write); err != nil {
			return nil, err
		}
	}

	slices.SortFunc(arts, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	var sums strings.Builder
	for _, a := range arts {
		fmt.Fprintf(&sums, "%x  %s\n", a.Sum, a.Path)
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return arts, nil
}

// prepareOut empties an earlier output, or makes a new directory.
func prepareOut(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(out, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, "SHA256SUMS")); err != nil {
		return fmt.Errorf("%s holds files scripts/package did not write (no SHA256SUMS in it): move them away, or pick another output directory", out)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// buildBinary cross-compiles cmd/mcpchaos for t. -trimpath and an empty
// build id take the machine's paths and the build's hash out of the binary,
// -buildvcs=false leaves the checkout's state (a stray file would change
// vcs.modified) to the stamped commit, and CGO_ENABLED=0 makes it static,
// so the same source gives the same bytes anywhere.
func buildBinary(ctx context.Context, cfg Config, t Target, dir string) ([]byte, error) {
	// A cold build of one target takes about a minute on two cores.
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	out := filepath.Join(dir, t.Exe())
	ldflags := fmt.Sprintf("-s -w -buildid= -X %[1]s/internal/buildinfo.version=%[2]s -X %[1]s/internal/buildinfo.commit=%[3]s",
		modulePath, cfg.Version, cfg.Commit)
	cmd := exec.CommandContext(ctx, cfg.Go, "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/mcpchaos")
	cmd.Dir = cfg.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("go build for %s took more than %v: stopped", t, buildTimeout)
		}
		return nil, fmt.Errorf("go build for %s: %v\n%s", t, err, msg)
	}
	return os.ReadFile(out)
}

// stageLauncher copies packaging/npm/mcpchaos into dir with the release
// version stamped into its package.json, and the repository's licence beside
// it. npm pack then takes what the package's "files" list names, and the
// LICENSE file whatever that list says.
func stageLauncher(cfg Config, license []byte, dir string) error {
	src := filepath.Join(cfg.Root, "packaging/npm/mcpchaos")
	files, err := readTree(src)
	if err != nil {
		return fmt.Errorf("the npm launcher: %w", err)
	}
	found := false
	for i, f := range files {
		if f.Name == "package.json" {
			found = true
			if files[i].Data, err = launcherPackageJSON(f.Data, cfg.Version, cfg.Targets); err != nil {
				return err
			}
		}
	}
	if !found {
		return fmt.Errorf("%s has no package.json", src)
	}
	files = append(files, File{Name: LicenseFile, Mode: 0o644, Data: license})
	return writeTree(dir, files)
}

// stagePlatform lays out the package of one target's binary.
func stagePlatform(t Target, version string, bin, license []byte, dir string) error {
	pkg, err := platformPackageJSON(t, version)
	if err != nil {
		return err
	}
	readme := fmt.Sprintf("# %s\n\nThe `mcpchaos` binary for %s. Do not install this package directly: install\n"+
		"[`mcpchaos`](https://www.npmjs.com/package/mcpchaos), which picks the package for your platform.\n", t.NPMName(), t)
	return writeTree(dir, []File{
		{Name: "package.json", Mode: 0o644, Data: pkg},
		{Name: "README.md", Mode: 0o644, Data: []byte(readme)},
		{Name: LicenseFile, Mode: 0o644, Data: license},
		{Name: "bin/" + t.Exe(), Mode: 0o755, Data: bin},
	})
}

func packInto(ctx context.Context, cfg Config, dir string, write func(string, []byte) error) error {
	tmp := filepath.Join(dir, "..", ".packed")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	name, err := npmPack(ctx, cfg.NPM, dir, tmp)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(tmp, name))
	if err != nil {
		return err
	}
	return write("npm/"+name, data)
}

// readTree reads every regular file below dir (node_modules left out),
// keeping whether it is executable.
func readTree(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		mode := int64(0o644)
		if info.Mode()&0o111 != 0 {
			mode = 0o755
		}
		files = append(files, File{Name: filepath.ToSlash(rel), Mode: mode, Data: data})
		return nil
	})
	return files, err
}

func writeTree(dir string, files []File) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, fs.FileMode(f.Mode)); err != nil {
			return err
		}
		// WriteFile's mode is cut by the umask; npm pack reads the bits.
		if err := os.Chmod(p, fs.FileMode(f.Mode)); err != nil {
			return err
		}
	}
	return nil
}
