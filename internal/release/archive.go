package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// File is one entry of an archive, held in memory: a release's files are a
// binary of a few megabytes and some text.
type File struct {
	Name string // slash-separated path inside the archive
	Mode int64  // 0o644 or 0o755
	Data []byte
}

// sortedFiles orders entries by name so that the archive's bytes do not
// depend on the order the caller gathered them in.
func sortedFiles(files []File) []File {
	out := slices.Clone(files)
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// TarGz writes files as a gzipped tar whose bytes depend on nothing but the
// files and mtime: entries sorted, owner root, no user or group names, and
// a gzip header with no name or time.
func TarGz(files []File, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, f := range sortedFiles(files) {
		// Directory entries first, so that tools that extract without
		// creating parents (and people who list the archive) see them.
		for i := range len(f.Name) {
			if f.Name[i] != '/' || dirs[f.Name[:i+1]] {
				continue
			}
			dirs[f.Name[:i+1]] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: f.Name[:i+1], Mode: 0o755,
				ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Mode: f.Mode, Size: int64(len(f.Data)),
			ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Zip writes files as a zip archive with the same guarantees as TarGz: sorted
// entries, every time the given one (zip keeps local time at two-second
// resolution, so it is given in UTC), Unix modes kept for the binaries.
func Zip(files []File, mtime time.Time) ([]byte, error) {
	if mtime.Year() < 1980 {
		return nil, fmt.Errorf("zip cannot hold a time before 1980: %v", mtime)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range sortedFiles(files) {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: mtime.UTC()}
		h.SetMode(fsMode(f.Mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func fsMode(m int64) fs.FileMode { return fs.FileMode(m) & fs.ModePerm }
