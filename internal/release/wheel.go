package release

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"path"
	"strings"
	"time"
)

// Wheel describes one platform wheel of the Python package.
type Wheel struct {
	Version string // PEP 440, normalized
	Target  Target
	Binary  []byte
	// Package is the pure-Python package mcpchaos/ (paths below it, such as
	// "__init__.py"), copied verbatim but for _version.py, which the wheel
	// writes with its own version.
	Package []File
	// Readme is the long description PyPI shows (Markdown).
	Readme string
	// License is the text of the repository's LICENSE, shipped in the
	// metadata's licenses/ folder as PEP 639 places it.
	License []byte
}

// FileName is the wheel's name as PEP 427 spells it, with a compressed tag
// set when the binary serves several platform tags.
func (w Wheel) FileName() string {
	return fmt.Sprintf("mcpchaos-%s-py3-none-%s.whl", w.Version, strings.Join(w.Target.WheelTags(), "."))
}

// Build writes the wheel: the package, the binary as the wheel's script
// (pip installs {name}.data/scripts/ into the environment's bin or Scripts
// directory, so `mcpchaos` is on PATH with no Python shim in between, as
// ruff and uv do it), the pytest plugin's entry point, and the RECORD of
// every file's hash that pip checks.
func (w Wheel) Build(mtime time.Time) ([]byte, error) {
	if len(w.License) == 0 {
		return nil, fmt.Errorf("the wheel for %s has no licence text to carry", w.Target)
	}
	distInfo := "mcpchaos-" + w.Version + ".dist-info/"
	var files []File
	for _, f := range w.Package {
		if f.Name == "_version.py" {
			continue
		}
		files = append(files, File{Name: "mcpchaos/" + f.Name, Mode: 0o644, Data: f.Data})
	}
	files = append(files,
		File{Name: "mcpchaos/_version.py", Mode: 0o644, Data: []byte(fmt.Sprintf(
			"# Written by scripts/package: the version of this wheel and of the binary it carries.\n__version__ = %q\n", w.Version))},
		File{Name: "mcpchaos-" + w.Version + ".data/scripts/" + w.Target.Exe(), Mode: 0o755, Data: w.Binary},
		File{Name: distInfo + "METADATA", Mode: 0o644, Data: []byte(w.metadata())},
		File{Name: distInfo + "licenses/" + LicenseFile, Mode: 0o644, Data: w.License},
		File{Name: distInfo + "WHEEL", Mode: 0o644, Data: []byte(w.wheelFile())},
		File{Name: distInfo + "entry_points.txt", Mode: 0o644, Data: []byte(
			"[pytest11]\nmcpchaos = mcpchaos.pytest_plugin\n")},
	)
	var record strings.Builder
	for _, f := range sortedFiles(files) {
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.Name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.Data))
	}
	fmt.Fprintf(&record, "%sRECORD,,\n", distInfo)
	files = append(files, File{Name: distInfo + "RECORD", Mode: 0o644, Data: []byte(record.String())})
	return Zip(files, mtime)
}

func (w Wheel) wheelFile() string {
	var b strings.Builder
	b.WriteString("Wheel-Version: 1.0\nGenerator: mcpchaos scripts/package\nRoot-Is-Purelib: false\n")
	for _, tag := range w.Target.WheelTags() {
		fmt.Fprintf(&b, "Tag: py3-none-%s\n", tag)
	}
	return b.String()
}

func (w Wheel) metadata() string {
	var b strings.Builder
	// License-Expression and License-File need metadata 2.4 (PEP 639).
	b.WriteString("Metadata-Version: 2.4\nName: mcpchaos\n")
	fmt.Fprintf(&b, "Version: %s\n", w.Version)
	fmt.Fprintf(&b, "License-Expression: %s\nLicense-File: %s\n", License, LicenseFile)
	b.WriteString("Summary: A chaos man-in-the-middle for MCP servers and clients, and a pytest plugin that runs it\n")
	b.WriteString("Project-URL: Homepage, https://github.com/mcpchaos/mcpchaos\n")
	b.WriteString("Project-URL: Documentation, https://github.com/mcpchaos/mcpchaos/tree/main/docs\n")
	b.WriteString("Keywords: mcp,model-context-protocol,chaos,fault-injection,testing,pytest\n")
	for _, c := range []string{
		"Development Status :: 4 - Beta",
		"Framework :: Pytest",
		"Intended Audience :: Developers",
		"Programming Language :: Python :: 3",
		"Topic :: Software Development :: Testing",
	} {
		fmt.Fprintf(&b, "Classifier: %s\n", c)
	}
	b.WriteString("Requires-Python: >=3.9\nDescription-Content-Type: text/markdown\n\n")
	b.WriteString(w.Readme)
	return b.String()
}

// wheelPackage keeps of the files of the pure-Python package what a wheel
// ships: everything but bytecode caches.
func wheelPackage(files []File) []File {
	var out []File
	for _, f := range files {
		if strings.Contains(f.Name, "__pycache__/") || path.Ext(f.Name) == ".pyc" {
			continue
		}
		out = append(out, f)
	}
	return out
}
