package release

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// License is the SPDX expression every package's metadata declares, and
// LicenseFile the file at the repository's root whose text every artifact
// carries beside what it ships.
const (
	License     = "MIT"
	LicenseFile = "LICENSE"
)

// CheckLicenses opens every artifact SHA256SUMS in dist lists and checks that
// it carries the licence: the file itself, byte for byte the text given, and,
// where the format has metadata, the SPDX expression in it. It returns one
// line per artifact checked, or an error naming every artifact that fails,
// so that a release missing the licence anywhere cannot pass CI.
func CheckLicenses(dist string, license []byte) ([]string, error) {
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a release scripts/package wrote: %w", dist, err)
	}
	var checked, bad []string
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		_, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return nil, fmt.Errorf("%s: cannot read the line %q", filepath.Join(dist, "SHA256SUMS"), sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dist, filepath.FromSlash(name)))
		if err == nil {
			err = checkArtifactLicense(name, data, license)
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		checked = append(checked, name)
	}
	if len(bad) > 0 {
		return checked, errors.New(strings.Join(bad, "\n"))
	}
	if len(checked) == 0 {
		return nil, fmt.Errorf("%s lists no artifact", filepath.Join(dist, "SHA256SUMS"))
	}
	return checked, nil
}

// checkArtifactLicense knows where each kind of artifact keeps its licence:
// an archive beside the binary, an npm tarball at package/LICENSE with
// "license" in its package.json, a wheel in its .dist-info/licenses/ with
// License-Expression and License-File in its METADATA.
func checkArtifactLicense(name string, data, license []byte) error {
	switch {
	case strings.HasSuffix(name, ".whl"):
		files, err := zipFiles(data)
		if err != nil {
			return err
		}
		var meta, text []byte
		for n, d := range files {
			dir, file := path.Split(n)
			switch {
			case strings.HasSuffix(dir, ".dist-info/") && file == "METADATA":
				meta = d
			case strings.HasSuffix(dir, ".dist-info/licenses/") && file == LicenseFile:
				text = d
			}
		}
		if err := sameLicense(text, license, ".dist-info/licenses/"+LicenseFile); err != nil {
			return err
		}
		for _, field := range []string{"License-Expression: " + License, "License-File: " + LicenseFile} {
			if !bytes.Contains(metadataHeader(meta), []byte("\n"+field+"\n")) {
				return fmt.Errorf("METADATA lacks %q", field)
			}
		}
		return nil
	case strings.HasPrefix(name, "npm/") && strings.HasSuffix(name, ".tgz"):
		files, err := tarGzFiles(data)
		if err != nil {
			return err
		}
		if err := sameLicense(files["package/"+LicenseFile], license, "package/"+LicenseFile); err != nil {
			return err
		}
		var pkg struct {
			License string `json:"license"`
		}
		if err := json.Unmarshal(files["package/package.json"], &pkg); err != nil {
			return fmt.Errorf("package/package.json: %w", err)
		}
		if pkg.License != License {
			return fmt.Errorf("package.json says license %q, want %q", pkg.License, License)
		}
		return nil
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".zip"):
		var files map[string][]byte
		var err error
		if strings.HasSuffix(name, ".zip") {
			files, err = zipFiles(data)
		} else {
			files, err = tarGzFiles(data)
		}
		if err != nil {
			return err
		}
		base := strings.TrimSuffix(strings.TrimSuffix(path.Base(name), ".zip"), ".tar.gz")
		return sameLicense(files[base+"/"+LicenseFile], license, base+"/"+LicenseFile)
	}
	return fmt.Errorf("not an artifact scripts/package writes (no archive, npm package or wheel)")
}

func sameLicense(got, want []byte, where string) error {
	switch {
	case got == nil:
		return fmt.Errorf("no %s in it", where)
	case !bytes.Equal(got, want):
		return fmt.Errorf("its %s is not the repository's %s", where, LicenseFile)
	}
	return nil
}

// metadataHeader is METADATA's header fields, a newline before the first, so
// that a field can be matched whole; the description after the blank line
// is left out, since a README may quote any field.
func metadataHeader(meta []byte) []byte {
	head, _, _ := bytes.Cut(meta, []byte("\n\n"))
	return append([]byte("\n"), append(head, '\n')...)
}

func zipFiles(data []byte) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		d, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		files[f.Name] = d
	}
	return files, nil
}

func tarGzFiles(data []byte) (map[string][]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		d, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		files[h.Name] = d
	}
}
