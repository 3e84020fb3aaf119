package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPythonVersion(t *testing.T) {
	for in, want := range map[string]string{
		"1.2.3":         "1.2.3",
		"0.1.0-dev.42":  "0.1.0.dev42",
		"1.0.0-rc.2":    "1.0.0rc2",
		"1.0.0-beta.1":  "1.0.0b1",
		"1.0.0-alpha.0": "1.0.0a0",
	} {
		got, err := PythonVersion(in)
		if err != nil || got != want {
			t.Errorf("PythonVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"v1.2.3", "1.2", "1.2.3-foo.1", "01.2.3", "1.2.3-rc1", ""} {
		if err := CheckVersion(bad); err == nil {
			t.Errorf("CheckVersion(%q) accepted it", bad)
		}
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets("linux/amd64,windows/arm64")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Target{{"linux", "amd64"}, {"windows", "arm64"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseTargets("linux/386"); err == nil || !strings.Contains(err.Error(), "linux/amd64") {
		t.Errorf("linux/386: err = %v, want one that lists the release targets", err)
	}
}

var someFiles = []File{
	{Name: "d/mcpchaos", Mode: 0o755, Data: []byte("\x7fELF binary")},
	{Name: "d/README.md", Mode: 0o644, Data: []byte("# read me\n")},
}

// An archive is the same bytes whatever order its files come in and
// whenever it is made, and holds what it was given with its modes.
func TestArchivesAreReproducible(t *testing.T) {
	mtime := time.Unix(1795810548, 0)
	reversed := []File{someFiles[1], someFiles[0]}
	for _, format := range []struct {
		name  string
		write func([]File, time.Time) ([]byte, error)
		read  func(*testing.T, []byte) map[string]string
	}{{"tar.gz", TarGz, readTarGz}, {"zip", Zip, readZip}} {
		a, err := format.write(someFiles, mtime)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		b, err := format.write(reversed, mtime)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two archives of the same files differ", format.name)
		}
		want := map[string]string{"d/mcpchaos": "-rwxr-xr-x \x7fELF binary", "d/README.md": "-rw-r--r-- # read me\n"}
		if diff := cmp.Diff(want, format.read(t, a)); diff != "" {
			t.Errorf("%s contents (-want +got):\n%s", format.name, diff)
		}
	}
}

func readTarGz(t *testing.T, b []byte) map[string]string {
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !gz.ModTime.IsZero() || gz.Name != "" {
		t.Errorf("gzip header carries time %v and name %q, want neither", gz.ModTime, gz.Name)
	}
	got := map[string]string{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: owner %d %q, want root with no name", h.Name, h.Uid, h.Uname)
		}
		data, _ := io.ReadAll(tr)
		got[h.Name] = h.FileInfo().Mode().String() + " " + string(data)
	}
}

func readZip(t *testing.T, b []byte) map[string]string {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = f.Mode().String() + " " + string(data)
	}
	return got
}

// pip refuses a wheel whose RECORD does not match its files, and installs
// the script and the plugin's entry point only from the right places.
func TestWheel(t *testing.T) {
	w := Wheel{Version: "0.1.0.dev7", Target: Target{"linux", "arm64"}, Binary: []byte("bin"), Readme: "# mcpchaos\n", License: []byte("MIT License\n"),
		Package: []File{{Name: "__init__.py", Data: []byte("x = 1\n")}, {Name: "_version.py", Data: []byte("__version__ = '0.0.0.dev0'\n")}}}
	if got, want := w.FileName(), "mcpchaos-0.1.0.dev7-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl"; got != want {
		t.Errorf("FileName = %s, want %s", got, want)
	}
	b, err := w.Build(time.Unix(1795810548, 0))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	modes := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
		modes[f.Name] = f.Mode().String()
	}
	if m := modes["mcpchaos-0.1.0.dev7.data/scripts/mcpchaos"]; m != "-rwxr-xr-x" {
		t.Errorf("the binary's mode is %q, want executable", m)
	}
	if got := string(files["mcpchaos/_version.py"]); !strings.Contains(got, `__version__ = "0.1.0.dev7"`) {
		t.Errorf("_version.py = %q, want the wheel's version", got)
	}
	if got := string(files["mcpchaos-0.1.0.dev7.dist-info/entry_points.txt"]); got != "[pytest11]\nmcpchaos = mcpchaos.pytest_plugin\n" {
		t.Errorf("entry_points.txt = %q", got)
	}
	if got := string(files["mcpchaos-0.1.0.dev7.dist-info/licenses/LICENSE"]); got != "MIT License\n" {
		t.Errorf("dist-info/licenses/LICENSE = %q, want the licence given", got)
	}
	for _, want := range []string{"Metadata-Version: 2.4\n", "Name: mcpchaos\n", "Version: 0.1.0.dev7\n", "License-Expression: MIT\n",
		"License-File: LICENSE\n", "Requires-Python: >=3.9\n", "\n\n# mcpchaos\n"} {
		if !strings.Contains(string(files["mcpchaos-0.1.0.dev7.dist-info/METADATA"]), want) {
			t.Errorf("METADATA lacks %q", want)
		}
	}
	if !strings.Contains(string(files["mcpchaos-0.1.0.dev7.dist-info/WHEEL"]), "Tag: py3-none-musllinux_1_1_aarch64\n") {
		t.Errorf("WHEEL lacks the musllinux tag:\n%s", files["mcpchaos-0.1.0.dev7.dist-info/WHEEL"])
	}
	record := string(files["mcpchaos-0.1.0.dev7.dist-info/RECORD"])
	listed := 0
	for _, line := range strings.Split(strings.TrimSpace(record), "\n") {
		parts := strings.Split(line, ",")
		if parts[0] == "mcpchaos-0.1.0.dev7.dist-info/RECORD" {
			continue
		}
		sum := sha256.Sum256(files[parts[0]])
		want := fmt.Sprintf("sha256=%s", base64.RawURLEncoding.EncodeToString(sum[:]))
		if parts[1] != want || parts[2] != fmt.Sprint(len(files[parts[0]])) {
			t.Errorf("RECORD line %q, want %s,%d", line, want, len(files[parts[0]]))
		}
		listed++
	}
	if listed != len(files)-1 {
		t.Errorf("RECORD lists %d files, the wheel holds %d besides RECORD", listed, len(files)-1)
	}
}

func TestWheelNeedsTheLicence(t *testing.T) {
	if _, err := (Wheel{Version: "1", Target: Target{"linux", "amd64"}}).Build(time.Unix(1795810548, 0)); err == nil {
		t.Errorf("a wheel built with no licence text: no error")
	}
}

func TestLauncherPackageJSON(t *testing.T) {
	var deps []string
	for _, tg := range Targets {
		deps = append(deps, fmt.Sprintf("%q: \"0.0.0\"", tg.NPMName()))
	}
	src := `{"name": "mcpchaos", "version": "0.0.0", "license": "MIT", "optionalDependencies": {` + strings.Join(deps, ", ") + `}}`
	out, err := launcherPackageJSON([]byte(src), "1.2.3", Targets)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "0.0.0") || strings.Count(string(out), `"1.2.3"`) != 7 {
		t.Errorf("stamped package.json: %s", out)
	}
	if _, err := launcherPackageJSON([]byte(strings.Replace(src, `"license": "MIT", `, "", 1)), "1.2.3", Targets); err == nil || !strings.Contains(err.Error(), "license") {
		t.Errorf("a launcher without a licence: err = %v, want it said", err)
	}
	missing := strings.Replace(src, deps[0]+", ", "", 1)
	if _, err := launcherPackageJSON([]byte(missing), "1.2.3", Targets); err == nil || !strings.Contains(err.Error(), "@mcpchaos/linux-x64") {
		t.Errorf("a launcher without the linux-x64 dependency: err = %v, want it named", err)
	}
}
