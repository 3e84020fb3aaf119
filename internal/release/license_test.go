package release

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var mtime = time.Unix(1795810548, 0)

// writeDist lays out a release in a temporary directory, with SHA256SUMS, the
// way Build does, from artifacts already made.
func writeDist(t *testing.T, arts map[string][]byte) string {
	t.Helper()
	dist := t.TempDir()
	var names []string
	for name := range arts {
		names = append(names, name)
	}
	slices.Sort(names)
	var sums strings.Builder
	for _, name := range names {
		p := filepath.Join(dist, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, arts[name], 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(arts[name]), name)
	}
	if err := os.WriteFile(filepath.Join(dist, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dist
}

func mustArchive(t *testing.T, write func([]File, time.Time) ([]byte, error), files ...File) []byte {
	t.Helper()
	b, err := write(files, mtime)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func npmTarball(t *testing.T, pkgJSON string, license []byte) []byte {
	files := []File{{Name: "package/package.json", Mode: 0o644, Data: []byte(pkgJSON)}}
	if license != nil {
		files = append(files, File{Name: "package/LICENSE", Mode: 0o644, Data: license})
	}
	return mustArchive(t, TarGz, files...)
}

// A release passes only when every artifact carries the licence text and,
// where it has metadata, the licence's name; each one that does not is
// named, with what it lacks.
func TestCheckLicenses(t *testing.T) {
	license := []byte("MIT License\n\nCopyright (c) 2026 the mcpchaos authors\n")
	wheel := func(l []byte) []byte {
		t.Helper()
		b, err := Wheel{Version: "1.2.3", Target: Target{"linux", "amd64"}, Binary: []byte("bin"), License: l,
			Readme: "# mcpchaos\n\nLicense-Expression: MIT\n"}.Build(mtime)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := map[string][]byte{
		"mcpchaos_1.2.3_linux_amd64.tar.gz": mustArchive(t, TarGz,
			File{Name: "mcpchaos_1.2.3_linux_amd64/mcpchaos", Mode: 0o755, Data: []byte("bin")},
			File{Name: "mcpchaos_1.2.3_linux_amd64/LICENSE", Mode: 0o644, Data: license}),
		"mcpchaos_1.2.3_windows_amd64.zip": mustArchive(t, Zip,
			File{Name: "mcpchaos_1.2.3_windows_amd64/mcpchaos.exe", Mode: 0o755, Data: []byte("bin")},
			File{Name: "mcpchaos_1.2.3_windows_amd64/LICENSE", Mode: 0o644, Data: license}),
		"npm/mcpchaos-1.2.3.tgz":               npmTarball(t, `{"name": "mcpchaos", "license": "MIT"}`, license),
		"python/mcpchaos-1.2.3-py3-none-x.whl": wheel(license),
	}
	checked, err := CheckLicenses(writeDist(t, good), license)
	if err != nil {
		t.Fatalf("a release that carries the licence everywhere: %v", err)
	}
	if len(checked) != len(good) {
		t.Errorf("checked %d artifacts, want %d: %v", len(checked), len(good), checked)
	}

	for _, tc := range []struct {
		name     string
		artifact string
		data     []byte
		want     string
	}{
		{"archive without it", "mcpchaos_1.2.3_linux_amd64.tar.gz", mustArchive(t, TarGz,
			File{Name: "mcpchaos_1.2.3_linux_amd64/mcpchaos", Mode: 0o755, Data: []byte("bin")}),
			"mcpchaos_1.2.3_linux_amd64.tar.gz: no mcpchaos_1.2.3_linux_amd64/LICENSE in it"},
		{"zip with another text", "mcpchaos_1.2.3_windows_amd64.zip", mustArchive(t, Zip,
			File{Name: "mcpchaos_1.2.3_windows_amd64/LICENSE", Mode: 0o644, Data: []byte("All rights reserved\n")}),
			"mcpchaos_1.2.3_windows_amd64.zip: its mcpchaos_1.2.3_windows_amd64/LICENSE is not the repository's LICENSE"},
		{"npm package without the field", "npm/mcpchaos-1.2.3.tgz", npmTarball(t, `{"name": "mcpchaos"}`, license),
			`npm/mcpchaos-1.2.3.tgz: package.json says license "", want "MIT"`},
		{"npm package without the file", "npm/mcpchaos-1.2.3.tgz", npmTarball(t, `{"license": "MIT"}`, nil),
			"npm/mcpchaos-1.2.3.tgz: no package/LICENSE in it"},
		{"wheel without the file", "python/mcpchaos-1.2.3-py3-none-x.whl", mustArchive(t, Zip,
			File{Name: "mcpchaos-1.2.3.dist-info/METADATA", Data: []byte("Name: mcpchaos\nLicense-Expression: MIT\nLicense-File: LICENSE\n\n")}),
			"python/mcpchaos-1.2.3-py3-none-x.whl: no .dist-info/licenses/LICENSE in it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arts := map[string][]byte{}
			for k, v := range good {
				arts[k] = v
			}
			arts[tc.artifact] = tc.data
			checked, err := CheckLicenses(writeDist(t, arts), license)
			if err == nil {
				t.Fatalf("passed, want %q", tc.want)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if len(checked) != len(good)-1 {
				t.Errorf("checked %d artifacts, want the %d others", len(checked), len(good)-1)
			}
		})
	}
}

// A wheel whose METADATA names the licence only in its description (a README
// quoting the field) does not declare it.
func TestMetadataHeaderIgnoresTheDescription(t *testing.T) {
	meta := []byte("Metadata-Version: 2.4\nName: mcpchaos\n\n# mcpchaos\nLicense-Expression: MIT\n")
	if err := checkArtifactLicense("x.whl", mustArchive(t, Zip,
		File{Name: "m.dist-info/METADATA", Data: meta},
		File{Name: "m.dist-info/licenses/LICENSE", Data: []byte("l")}), []byte("l")); err == nil ||
		!strings.Contains(err.Error(), "METADATA lacks") {
		t.Errorf("err = %v, want METADATA lacks the field", err)
	}
}
