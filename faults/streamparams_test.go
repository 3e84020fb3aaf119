package faults

import (
	"slices"
	"strings"
	"testing"
)

// stream=get and server=read reach the effect the HTTP transport carries
// out, and say so in its detail; a spec that sets them names them as
// HTTP-only, so the stdio transports can refuse it.
func TestStreamAndServerParams(t *testing.T) {
	call := request(c2s, "1", "tools/call", "")
	for _, tc := range []struct {
		spec       string
		stream     string
		keep       bool
		httpParams []string
		detail     string
	}{
		{"eof:on=c2s:request:tools/call", "", false, nil, "close the server's stdin"},
		{"eof:on=c2s:request:tools/call,server=close", "", false, []string{"server"}, "close the server's stdin"},
		{"eof:on=c2s:request:tools/call,server=read", "", true, []string{"server"}, "the server's side stays open"},
		{"eof:on=c2s:request:tools/call,stream=get", StreamGET, false, []string{"stream"}, "(its GET stream)"},
		{"reset:stream=get,server=read", StreamGET, true, []string{"stream", "server"}, "reset the client's connection (its GET stream)"},
		{"stall:on=c2s:request:tools/call,stream=get,for=1s", StreamGET, false, []string{"stream"}, "stop reading the client's GET stream for 1s"},
		{"list-changed:stream=get", StreamGET, false, []string{"stream"}, "list_changed"},
		{"burst:on=c2s:request:tools/call,method=notifications/message,count=2,stream=get", StreamGET, false, []string{"stream"}, "notifications/message"},
		{"server-request:stream=get", StreamGET, false, []string{"stream"}, "roots/list"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			f := mustParse(t, tc.spec)[0]
			if got := f.HTTPParams(); !slices.Equal(got, tc.httpParams) {
				t.Errorf("HTTPParams() = %v; want %v", got, tc.httpParams)
			}
			ds := runPlan(t, 1, []string{tc.spec}, []frame{call})
			if len(ds) != 1 {
				t.Fatalf("fired %d times on a tool call; want once", len(ds))
			}
			e := ds[0].Effect
			if e.Stream != tc.stream || e.KeepServerSide != tc.keep {
				t.Errorf("Stream %q, KeepServerSide %v; want %q, %v", e.Stream, e.KeepServerSide, tc.stream, tc.keep)
			}
			if !strings.Contains(e.Detail, tc.detail) {
				t.Errorf("detail %q does not say %q", e.Detail, tc.detail)
			}
		})
	}
}

// A GET stream carries the server's messages only: a fault aimed at it
// that would act toward the server is refused.
func TestStreamGETIsTowardTheClient(t *testing.T) {
	for _, spec := range []string{"stall:stream=get,dir=c2s", "burst:stream=get,dir=c2s"} {
		if _, err := Parse(spec); err == nil || !strings.Contains(err.Error(), "dir must be s2c") {
			t.Errorf("Parse(%q) = %v; want an error that says dir must be s2c", spec, err)
		}
	}
}
