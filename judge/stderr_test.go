package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scanLines runs the stderr scanner over lines and returns its hits.
func scanLines(lines []string) []crashHit {
	var hits []crashHit
	s := stderrScanner{emit: func(h crashHit) bool { hits = append(hits, h); return true }}
	for i, l := range lines {
		s.add(int64(i+1), int64(i+1)*1000, l)
	}
	s.flush()
	return hits
}

func readLines(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "stderr", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// TestSignatures names the crash in each real-format stderr sample: the
// signature, and the line that names it.
func TestSignatures(t *testing.T) {
	type sig struct{ Sig, Text string }
	tests := []struct {
		file string
		want []sig
	}{
		// python-sdk #526: stdin EOF while a handler runs; the handler's
		// answer meets a closed stream, three exception groups deep.
		{"python_closed_resource_group.txt", []sig{{"python:ClosedResourceError", "anyio.ClosedResourceError"}}},
		// python-sdk #2306: teardown iterates a dict that finishing handlers
		// mutate; the EndOfStream it was handling is context, not the crash.
		{"python_dict_changed_group.txt", []sig{{"python:RuntimeError:dictionary changed size during iteration", "RuntimeError: dictionary changed size during iteration"}}},
		{"python_dict_changed_shutdown.txt", []sig{{"python:RuntimeError:dictionary changed size during iteration", "RuntimeError: dictionary changed size during iteration"}}},
		{"python_broken_resource_group.txt", []sig{{"python:BrokenResourceError", "anyio.BrokenResourceError"}}},
		// Two tracebacks: the group, then the interpreter failing to flush
		// stdout at exit. One signature, two hits.
		{"python_broken_pipe_group.txt", []sig{
			{"python:BrokenPipeError", "BrokenPipeError: [Errno 32] Broken pipe"},
			{"python:BrokenPipeError", "BrokenPipeError: [Errno 32] Broken pipe"},
		}},
		// A group of three: two equal leaves are one signature.
		{"python_two_leaves_group.txt", []sig{
			{"python:ClosedResourceError", "anyio.ClosedResourceError"},
			{"python:RuntimeError:dictionary changed size during iteration", "RuntimeError: dictionary changed size during iteration"},
		}},
		// python-sdk's simple-tool (mcp 2.3.0): its stdout writer failing
		// on a closed pipe ends the task group, and the server.
		{"python_stdout_writer_broken_pipe.txt", []sig{{"python:BrokenPipeError", "BrokenPipeError: [Errno 32] Broken pipe"}}},
		{"python_plain_valueerror.txt", []sig{{"python:ValueError:invalid literal for int() with base 10: 'seven'", "ValueError: invalid literal for int() with base 10: 'seven'"}}},
		{"go_panic_closed_channel.txt", []sig{{"go:panic", "send on closed channel"}}},
		{"go_panic_nil.txt", []sig{{"go:panic", "runtime error: invalid memory address or nil pointer dereference"}}},
		{"go_concurrent_map_writes.txt", []sig{{"go:fatal error: concurrent map writes", "concurrent map writes"}}},
		{"go_deadlock.txt", []sig{{"go:all goroutines are asleep", "all goroutines are asleep - deadlock!"}}},
		{"go_panic_broken_pipe.txt", []sig{{"go:panic", "write /dev/stdout: broken pipe"}}},
		{"go_broken_pipe_log.txt", nil},
		// The TypeScript SDK writing to a closed stdout.
		{"node_unhandled_error_epipe.txt", []sig{{"node:unhandled-error EPIPE", "Error: write EPIPE"}}},
		{"node_unhandled_rejection.txt", []sig{{"node:unhandled-rejection", "Error: connect ECONNREFUSED 127.0.0.1:5432"}}},
		{"node_unhandled_rejection_value.txt", []sig{{"node:unhandled-rejection", `[UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "tool timed out".] {`}}},
		{"node_uncaught_typeerror.txt", []sig{{"node:TypeError", "TypeError: Cannot read properties of undefined (reading 'trim')"}}},
		// The TypeScript SDK 1.16.0 failing a call whose POST got 503: a
		// plain Error, uncaught at the program's top-level await.
		{"node_sdk116_post_error.txt", []sig{{"node:Error", `Error: Error POSTing to endpoint (HTTP 503): {"error":{"code":-32603,"message":"Service Unavailable (mcpchaos fault http-error#1)"},"id":null,"jsonrpc":"2.0"}`}}},
		// Logs that look like crashes to a grep but are not.
		{"no_signature_noise.txt", nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			var got []sig
			for _, h := range scanLines(readLines(t, tc.file)) {
				got = append(got, sig{h.sig, h.text})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("signatures (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCaughtByOneTraceback keeps the SDK's word that it caught an exception
// to the traceback it precedes: python-sdk's simple-tool printed its stdout
// writer's exception group, the one that ended it, on the line after a
// handler's logged traceback.
func TestCaughtByOneTraceback(t *testing.T) {
	type hit struct{ Sig, CaughtBy string }
	var got []hit
	for _, h := range scanLines(append(readLines(t, "python_handler_caught.txt"), readLines(t, "python_stdout_writer_broken_pipe.txt")...)) {
		got = append(got, hit{h.sig, h.caughtBy})
	}
	want := []hit{{"python:UnsupportedProtocol", "modern request handler raised"}, {"python:BrokenPipeError", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
}

// TestSessionCrashed tells the Python SDK's word that an exception ended a
// session from its other logged tracebacks, which it handles.
func TestSessionCrashed(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"ERROR:mcp.server.streamable_http_manager:Session 6cb9b3aa986f4ae2bbc8593e893b8812 crashed: unhandled errors in a TaskGroup (1 sub-exception)", true},
		{"Session 5f904191f7ef4787af113cbae95c7f76 crashed: unhandled errors in a TaskGroup (1 sub-exception)", true},
		{"Session 5f904191f7ef4787af113cbae95c7f76 crashed", true},
		{"Session None crashed", true},
		{"[11/26/26 14:54:05] ERROR    Session 5f90 crashed          streamable_http_manager.py:286", true},
		{"ERROR:mcp.server.streamable_http_manager:Stateless session crashed", true},
		{"Cleaning up crashed session 5f90 from active instances.", false},
		{"ERROR:mcp.server.streamable_http:Error in message router", false},
		{"Error in standalone SSE writer", false},
		{"ERROR:mcp.server.streamable_http:SSE response error", false},
		{"my session crashed: retrying", false},
	} {
		if got := sdkSessionCrashed(tc.line) != ""; got != tc.want {
			t.Errorf("sdkSessionCrashed(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}

	// In FastMCP 2.12.5's stderr under end-session-inflight, five
	// tracebacks of ClosedResourceError: only the last ended the session.
	var got []string
	for _, h := range scanLines(readLines(t, "python_session_crashed.txt")) {
		got = append(got, h.sig+" "+h.sessionCrash)
	}
	want := []string{
		"python:ClosedResourceError ", "python:ClosedResourceError ", "python:ClosedResourceError ",
		"python:ClosedResourceError ", "python:ClosedResourceError ", "python:ClosedResourceError ",
		"python:ClosedResourceError ERROR:mcp.server.streamable_http_manager:Session 6cb9b3aa986f4ae2bbc8593e893b8812 crashed: unhandled errors in a TaskGroup (1 sub-exception)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
}
