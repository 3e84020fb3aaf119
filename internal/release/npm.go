package release

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// npmPlaceholder is the version packaging/npm/mcpchaos/package.json carries
// in the source tree, for itself and for each platform package it depends
// on; a release replaces every one of them.
const npmPlaceholder = `"0.0.0"`

// launcherPackageJSON stamps the release version into the launcher's
// package.json and checks the result: the version, and one optional
// dependency per target at that version, so that a launcher can never ship
// pointing at binaries of another release.
func launcherPackageJSON(src []byte, version string, targets []Target) ([]byte, error) {
	out := bytes.ReplaceAll(src, []byte(npmPlaceholder), []byte(`"`+version+`"`))
	var pkg struct {
		Name                 string            `json:"name"`
		Version              string            `json:"version"`
		License              string            `json:"license"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
	}
	if err := json.Unmarshal(out, &pkg); err != nil {
		return nil, fmt.Errorf("packaging/npm/mcpchaos/package.json: %w", err)
	}
	if pkg.Name != "mcpchaos" || pkg.Version != version {
		return nil, fmt.Errorf("packaging/npm/mcpchaos/package.json: name %q version %q after stamping, want mcpchaos %s (the version in the source tree must be %s)",
			pkg.Name, pkg.Version, version, npmPlaceholder)
	}
	if pkg.License != License {
		return nil, fmt.Errorf("packaging/npm/mcpchaos/package.json: license is %q, want %q (the repository's LICENSE)", pkg.License, License)
	}
	for _, t := range Targets {
		if got := pkg.OptionalDependencies[t.NPMName()]; got != version {
			return nil, fmt.Errorf("packaging/npm/mcpchaos/package.json: optionalDependencies[%q] is %q after stamping, want %s", t.NPMName(), got, version)
		}
	}
	return out, nil
}

// platformPackageJSON is the package.json of the package that carries one
// target's binary. npm installs only the one whose os and cpu match the
// machine; preferUnplugged keeps Yarn PnP from zipping the binary away.
func platformPackageJSON(t Target, version string) ([]byte, error) {
	pkg := map[string]any{
		"name":            t.NPMName(),
		"version":         version,
		"description":     fmt.Sprintf("The mcpchaos binary for %s (%s); install mcpchaos, which depends on it.", t, t.NodeOS()+"-"+t.NodeCPU()),
		"repository":      map[string]string{"type": "git", "url": "git+https://github.com/mcpchaos/mcpchaos.git"},
		"homepage":        "https://github.com/mcpchaos/mcpchaos",
		"license":         License,
		"os":              []string{t.NodeOS()},
		"cpu":             []string{t.NodeCPU()},
		"files":           []string{"bin/"},
		"preferUnplugged": true,
	}
	b, err := json.MarshalIndent(pkg, "", "  ")
	return append(b, '\n'), err
}

// npmPack runs `npm pack` in dir and moves the tarball it writes into
// outDir, returning its name. npm gives every entry the same fixed time and
// sorts nothing we care about, so the tarball depends only on the files.
func npmPack(ctx context.Context, npm, dir, outDir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, packTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "pack", "--json", "--pack-destination", outDir)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return "", fmt.Errorf("npm pack in %s: cannot read its --json output (%v): %s", dir, err, out)
	}
	return filepath.Base(packed[0].Filename), nil
}
