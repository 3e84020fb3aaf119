package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProcessFaultsParse checks the defaults and the parameter checks of
// signal, stderr-flood and linger.
func TestProcessFaultsParse(t *testing.T) {
	tests := []struct {
		spec  string
		want  Action
		phase Phase
	}{
		{"signal", signalFault{name: "SIGTERM"}, After},
		{"signal:sig=KILL", signalFault{name: "SIGKILL"}, After},
		{"signal:sig=INT,for=9s", signalFault{name: "SIGINT"}, After},
		{"signal:sig=STOP", signalFault{name: "SIGSTOP", d: 2 * time.Second}, After},
		{"signal:sig=STOP,for=250ms,position=before", signalFault{name: "SIGSTOP", d: 250 * time.Millisecond}, Before},
		{"stderr-flood", stderrFlood{bytes: 1 << 20, line: 200, block: true, timeout: 10 * time.Second}, Before},
		{"stderr-flood:bytes=10,line=4,block=false,timeout=1s", stderrFlood{bytes: 10, line: 4, timeout: time.Second}, Before},
		{"linger", linger{d: 5 * time.Second}, Before},
		{"linger:for=30s", linger{d: 30 * time.Second}, Before},
		{"linger:for=forever", linger{}, Before},
	}
	for _, tc := range tests {
		f := mustParse(t, tc.spec)[0]
		if diff := cmp.Diff(tc.want, f.Action, cmpOpts); diff != "" {
			t.Errorf("%s: action (-want +got):\n%s", tc.spec, diff)
		}
		if f.Trigger.Phase != tc.phase {
			t.Errorf("%s: phase %v; want %v", tc.spec, f.Trigger.Phase, tc.phase)
		}
	}
	bad := []struct{ spec, want string }{
		{"signal:sig=HUP", `"HUP" is not one of TERM, KILL, INT, STOP`},
		{"signal:sig=STOP,for=0s", "for: a STOP must last longer than 0s"},
		{"stderr-flood:bytes=0", "bytes: must be between 1"},
		{"stderr-flood:bytes=2000000000", "bytes: must be between 1"},
		{"stderr-flood:line=1", "line: must be between 2"},
		{"stderr-flood:line=70000", "line: must be between 2"},
		{"stderr-flood:timeout=0s", "timeout: must be longer than 0s"},
		{"stderr-flood:block=maybe", `"maybe" is not true or false`},
		{"linger:for=0s", "is not a duration like 250ms, 5s or forever"},
	}
	for _, tc := range bad {
		_, err := Parse(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

func TestProcessFaultsEffects(t *testing.T) {
	tests := []struct {
		spec string
		want Effect
	}{
		{"signal", Effect{Signal: &Signal{Name: "SIGTERM"}, Detail: "send SIGTERM to the server's process group"}},
		{"signal:sig=KILL", Effect{Signal: &Signal{Name: "SIGKILL"}, Detail: "send SIGKILL to the server's process group"}},
		{"signal:sig=STOP,for=3s", Effect{Signal: &Signal{Name: "SIGSTOP", For: 3 * time.Second}, Detail: "send SIGSTOP to the server's process group, and SIGCONT 3s later"}},
		{"stderr-flood:bytes=1000", Effect{StderrFlood: &StderrFlood{Bytes: 1000, Line: 200, Block: true, Timeout: 10 * time.Second},
			Detail: "write 1000 bytes of log lines to the server's stderr, holding the server's output until written"}},
		{"stderr-flood:bytes=1000,block=false", Effect{StderrFlood: &StderrFlood{Bytes: 1000, Line: 200, Timeout: 10 * time.Second},
			Detail: "write 1000 bytes of log lines to the server's stderr"}},
		{"linger:for=2s", Effect{Linger: &Linger{For: 2 * time.Second}, Detail: "ignore the client's EOF and SIGTERM/SIGINT for 2s once they come"}},
		{"linger:for=forever", Effect{Linger: &Linger{}, Detail: "ignore the client's EOF and SIGTERM/SIGINT until killed"}},
	}
	for _, tc := range tests {
		ds := runPlan(t, 1, []string{tc.spec}, []frame{request(c2s, "1", "ping", "")})
		if len(ds) != 1 {
			t.Fatalf("%s: %d firings; want 1", tc.spec, len(ds))
		}
		if diff := cmp.Diff(tc.want, ds[0].Effect); diff != "" {
			t.Errorf("%s: effect (-want +got):\n%s", tc.spec, diff)
		}
	}
}

// TestStderrFloodText: the lines add up to Bytes exactly, each Line long
// with its newline, the last one shorter.
func TestStderrFloodText(t *testing.T) {
	for _, f := range []StderrFlood{{Bytes: 1000, Line: 200}, {Bytes: 1001, Line: 200}, {Bytes: 5, Line: 200}, {Bytes: 7, Line: 2}, {Bytes: 1 << 20, Line: 200}} {
		total, lines := 0, f.Lines()
		for n := range lines {
			b := f.Text(n)
			if len(b) == 0 || b[len(b)-1] != '\n' || strings.Count(string(b), "\n") != 1 {
				t.Fatalf("%+v: line %d = %q; want one line", f, n, b)
			}
			if n < lines-1 && len(b) != f.Line {
				t.Fatalf("%+v: line %d is %d bytes; want %d", f, n, len(b), f.Line)
			}
			total += len(b)
		}
		if total != f.Bytes || f.Text(lines) != nil {
			t.Errorf("%+v: %d lines of %d bytes in all (then %q); want %d", f, lines, total, f.Text(lines), f.Bytes)
		}
	}
	if got := string((&StderrFlood{Bytes: 40, Line: 40}).Text(0)); got != "mcpchaos stderr-flood line 1 xxxxxxxxxx\n" {
		t.Errorf("first line %q", got)
	}
}
