package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// silentServerEnv makes the test binary act as a server that reads its stdin
// and never answers, to test the client's deadline.
const silentServerEnv = "MCPCHAOS_CLIENT_TEST_SILENT_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(silentServerEnv) == "1" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// commandTimeout bounds each run of a built command.
const commandTimeout = 60 * time.Second

// build builds the client and the example server into a temporary directory
// and returns their paths.
func build(t *testing.T) (client, everything string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build with: %v", err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", dir+string(filepath.Separator),
		"github.com/mcpchaos/mcpchaos/examples/cmd/client",
		"github.com/mcpchaos/mcpchaos/examples/cmd/everything")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	return filepath.Join(dir, "client"+exe), filepath.Join(dir, "everything"+exe)
}

type outcome struct {
	code   int
	stdout []string
	stderr string
}

// runCommand runs path with args and env added to the environment.
func runCommand(t *testing.T, env []string, path string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", path, err)
	}
	return outcome{
		code:   cmd.ProcessState.ExitCode(),
		stdout: strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n"),
		stderr: stderr.String(),
	}
}

func TestClientAgainstEverything(t *testing.T) {
	client, everything := build(t)

	t.Run("default calls", func(t *testing.T) {
		got := runCommand(t, nil, client, "--", everything)
		if got.code != 0 || got.stderr != "" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
		want := []string{
			"server mcpchaos-everything 0.1.0 protocol 2026-07-28",
			"tools big echo elicit list_changed log ping_client research roots sample slow touch",
			`result echo "hello"`,
			`notification notifications/progress {"progress":1,"progressToken":"call-2","total":3}`,
			`notification notifications/progress {"progress":2,"progressToken":"call-2","total":3}`,
			`notification notifications/progress {"progress":3,"progressToken":"call-2","total":3}`,
			`result slow "done after 300 ms"`,
			"notification notifications/tools/list_changed {}",
			"notification notifications/prompts/list_changed {}",
			"notification notifications/resources/list_changed {}",
			`result list_changed "sent"`,
		}
		if diff := cmp.Diff(want, got.stdout); diff != "" {
			t.Errorf("stdout (-want +got):\n%s", diff)
		}
	})

	t.Run("handshake era with roots and big", func(t *testing.T) {
		got := runCommand(t, nil, client, "--protocol", "2025-11-25", "--call", "roots", "--call", `big={"kib":1}`, "--", everything)
		if got.code != 0 || got.stderr != "" {
			t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
		}
		want := []string{
			"server mcpchaos-everything 0.1.0 protocol 2025-11-25",
			"tools big echo elicit list_changed log ping_client research roots sample slow touch",
			"roots answered with 1 root",
			`result roots "1"`,
			"result big <1024 bytes>",
		}
		if diff := cmp.Diff(want, got.stdout); diff != "" {
			t.Errorf("stdout (-want +got):\n%s", diff)
		}
	})

	t.Run("missing dash is a usage error", func(t *testing.T) {
		got := runCommand(t, nil, client, everything)
		if got.code != exitUsage {
			t.Errorf("exit %d, want %d", got.code, exitUsage)
		}
		assertOneLine(t, got.stderr, `missing "--"`)
	})

	t.Run("server that cannot start", func(t *testing.T) {
		got := runCommand(t, nil, client, "--", filepath.Join(t.TempDir(), "no-such-server"))
		if got.code != exitFailed {
			t.Errorf("exit %d, want %d", got.code, exitFailed)
		}
		assertOneLine(t, got.stderr, "starting the server failed")
	})

	t.Run("server that does not answer", func(t *testing.T) {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		got := runCommand(t, []string{silentServerEnv + "=1"}, client, "--timeout", "500ms", "--", self)
		if got.code != exitFailed {
			t.Errorf("exit %d, want %d", got.code, exitFailed)
		}
		assertOneLine(t, got.stderr, "timed out after 500ms")
	})
}

func assertOneLine(t *testing.T, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("stderr = %q, want one line containing %q", stderr, want)
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want config
	}{
		{
			name: "defaults",
			args: []string{"--", "server", "--flag"},
			want: config{calls: defaultCalls, timeout: 20 * time.Second, settle: 200 * time.Millisecond, command: []string{"server", "--flag"}},
		},
		{
			name: "calls replace the defaults",
			args: []string{"--call", `echo={"text":"a,b"}`, "--call", "list_changed", "--timeout", "3s", "--settle", "0s", "--protocol", "2025-06-18", "--", "s"},
			want: config{
				calls:    []call{{name: "echo", args: map[string]any{"text": "a,b"}}, {name: "list_changed", args: map[string]any{}}},
				timeout:  3 * time.Second,
				protocol: "2025-06-18",
				command:  []string{"s"},
			},
		},
		{
			name: "listening over HTTP",
			args: []string{"--url", "http://127.0.0.1:1/mcp", "--listen"},
			want: config{calls: defaultCalls, timeout: 20 * time.Second, settle: 200 * time.Millisecond, url: "http://127.0.0.1:1/mcp", listen: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(config{}, call{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseArgsRejects(t *testing.T) {
	for name, args := range map[string][]string{
		"nothing":            nil,
		"no dash":            {"server"},
		"argument before --": {"x", "--", "server"},
		"no command":         {"--"},
		"unknown flag":       {"--bogus", "--", "s"},
		"call without name":  {"--call", "={}", "--", "s"},
		"call with array":    {"--call", "a=[1]", "--", "s"},
		"call with bad json": {"--call", "a={", "--", "s"},
		"zero timeout":       {"--timeout", "0s", "--", "s"},
		"listen over stdio":  {"--listen", "--", "s"},
		"unknown protocol":   {"--protocol", "1999-01-01", "--", "s"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(args, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			assertOneLine(t, stderr.String(), "usage: client")
		})
	}
}
