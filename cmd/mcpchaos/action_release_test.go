package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/release"
	"go.yaml.in/yaml/v3"
)

// Given a version, the Action installs the release's binary for the runner
// instead of building one, and only if the archive matches SHA256SUMS. The
// release here is a stand-in laid out as scripts/package lays one out, read
// through the release-url input as a mirror would serve it.
func TestGitHubActionInstallsARelease(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the install step's archive here is the .tar.gz of unix runners")
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Steps []struct {
				Name, Run, If string
				Env           map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	var install, build string
	for _, s := range action.Runs.Steps {
		switch {
		case strings.HasPrefix(s.Name, "Install mcpchaos"):
			install = s.Run
			if s.If != "inputs.version != ''" {
				t.Errorf("the install step runs if %q, want only when a version is given", s.If)
			}
		case s.Name == "Build mcpchaos":
			build = s.Run
			if s.If != "inputs.version == ''" {
				t.Errorf("the build step runs if %q, want only when no version is given", s.If)
			}
		}
	}
	if install == "" || build == "" {
		t.Fatal("action.yml has no install step or no build step")
	}

	const version = "9.8.7"
	name := fmt.Sprintf("mcpchaos_%s_%s_%s", version, runtime.GOOS, runtime.GOARCH)
	fake := []byte("#!/bin/sh\necho 'mcpchaos " + version + "'\n")
	archive, err := release.TarGz([]release.File{{Name: name + "/mcpchaos", Mode: 0o755, Data: fake}}, time.Unix(1795810548, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		sum     [32]byte
		wantErr string
	}{
		{"checksum matches", sha256.Sum256(archive), ""},
		{"checksum differs", sha256.Sum256([]byte("another archive")), "but SHA256SUMS says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dist, tmp := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(dist, name+".tar.gz"), archive, 0o644)
			os.WriteFile(filepath.Join(dist, "SHA256SUMS"), []byte(fmt.Sprintf("%x  %s.tar.gz\n", tc.sum, name)), 0o644)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-e", "-c", install)
			cmd.Dir = filepath.Join("..", "..")
			cmd.Env = append(os.Environ(), "RUNNER_TEMP="+tmp, "MCPCHAOS_VERSION="+version, "MCPCHAOS_RELEASE_URL=file://"+dist)
			out, err := cmd.CombinedOutput()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(string(out), tc.wantErr) {
					t.Fatalf("the install step: %v, output %q; want it to fail saying %q", err, out, tc.wantErr)
				}
				if _, err := os.Stat(filepath.Join(tmp, "mcpchaos")); err == nil {
					t.Error("a binary whose archive failed its checksum was installed")
				}
				return
			}
			if err != nil {
				t.Fatalf("the install step: %v\n%s", err, out)
			}
			got, err := exec.CommandContext(ctx, filepath.Join(tmp, "mcpchaos")).Output()
			if err != nil || string(got) != "mcpchaos "+version+"\n" {
				t.Errorf("the installed binary says %q (%v), want mcpchaos %s", got, err, version)
			}
		})
	}
}
