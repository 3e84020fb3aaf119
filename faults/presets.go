package faults

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Who runs a scenario: the probe client of mcpchaos test against a server,
// or a client program under mcpchaos test-client.
const (
	ForServer = "test"
	ForClient = "test-client"
	// ForHTTPServer is test --url: its own matrix, and the presets of test
	// that have an HTTP meaning.
	ForHTTPServer = "test --url"
	// ForHTTPClient is test-client --server-url: its own matrix, and the
	// presets of test-client that have an HTTP meaning.
	ForHTTPClient = "test-client --server-url"
)

// Preset is a built-in scenario, selectable by name with --scenario.
type Preset struct {
	Scenario
	// For is the command that runs it: ForServer or ForClient.
	For string
	// Default is set for the scenarios of the default matrix (run when no
	// --scenario is given).
	Default bool
}

// extraPresets are the built-in scenarios beyond the default matrices:
// moments worth a run of their own that the default matrix leaves out
// because they are slower or only some targets have them. Add a row per
// scenario; BugClasses below says which class each exposes.
var extraPresets = []Preset{
	{For: ForServer, Scenario: Scenario{
		Name:     "concurrent-calls",
		Doc:      "12 tool calls, 6 at a time, with their answers held back by a seeded 50-250ms each; handlers that share state without locks crash or answer the wrong call (bug class 7)",
		Faults:   []string{"delay:on=s2c:response:tools/call,for=50ms,jitter=200ms,times=0"},
		Workload: Workload{Calls: 12, Concurrency: 6},
	}},
	{For: ForServer, Scenario: Scenario{
		Name: "hostile-input",
		Doc: "no fault: after its workload the probe sends the wide hostile workload, requests no polite client sends (params missing, null or an array for every method the server declares; each required tool argument missing, null and retyped; 1 MiB strings, control characters, lone surrogates; huge, negative and fractional numbers; odd ids; URIs relative, of unknown schemes, 64 KiB long; template expansions of 1000 items): " +
			"each must be answered in time, with an error or a tool error, and the server must go on serving; arguments that break the tool's schema answered as a success are input not validated",
		Workload: Workload{Hostile: "wide"},
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "malformed-line",
		Doc:    "a line that is not JSON arrives instead of a tool call; the server must answer it with a parse error (id null) or skip it, and go on serving; read loops that die on one bad line hang or crash (bug class 6; the call it replaced is never answered, so the run waits out --deadline)",
		Faults: []string{"corrupt:on=c2s:request:tools/call,mode=text"},
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "oversize-call",
		Doc:    "a tool call grown to 1 MiB (padding under params._meta); servers that read lines through a fixed buffer (bufio.Scanner's 64 KiB default) fail on it (bug class 6)",
		Faults: []string{"oversize:on=c2s:request:tools/call,size=1MiB"},
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "fragmented-call",
		Doc:    "a tool call arrives in 8 partial writes 20ms apart; servers that take one read for one message fail (bug class 6)",
		Faults: []string{"fragment:on=c2s:request:tools/call,pieces=8,gap=20ms"},
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "id-collision",
		Doc:    "a tool call goes on under the id of another call in flight; servers that key running requests by id lose or cross one (bug class 8)",
		Faults: []string{"id-collision:on=c2s:request:tools/call"},
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "id-type",
		Doc:    "a tool call's numeric id goes on as a string (1 as \"1\"); servers that answer with the id converted lose the call (bug class 8)",
		Faults: []string{"id-type:on=c2s:request:tools/call,to=string"},
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "cancel-before-response",
		Doc:    "notifications/cancelled for a tool call reaches the server just as its answer leaves; the server must ignore a cancellation of a finished request, not crash or answer twice (bug class 7)",
		Faults: []string{"cancel:on=s2c:response:tools/call,position=before"},
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "cancel-task-race",
		Doc:    "tasks/cancel reaches the server just as it reports a task completed: it must refuse to cancel a terminal task (-32602) and keep it completed, or, if the cancellation won, keep it cancelled; never report it in another status afterwards, nor lose its result (bug class 7; indeterminate for a server that sends no notifications/tasks/status)",
		Faults: []string{"cancel-task:status=completed,times=0"},
		Era:    "stateful",
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "early-request",
		Doc:    "a tools/list arrives before notifications/initialized; the server must answer it (result or error) and not crash or hang",
		Faults: []string{"early-request"},
		Era:    "stateful", // the stateless revision has no handshake
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "ping-during-initialize",
		Doc:    "a ping reaches the server after its initialize request and before its answer, which a client may send (MCP 2025-11-25, Lifecycle: \"The client SHOULD NOT send requests other than pings before the server has responded to the initialize request\"); the server must answer it, and the handshake go on",
		Faults: []string{"early-request:on=c2s:request:initialize,position=after,method=ping"},
		Era:    "stateful",
	}},
	{For: ForServer, Scenario: Scenario{
		Name:   "second-initialize",
		Doc:    "a second, well-formed initialize reaches the server once the session is up (after notifications/initialized): a client that restarts its handshake, or a proxy that replays it; the server must answer it (a result or an error) and go on serving the session, not crash or hang",
		Faults: []string{"early-request:on=c2s:notification:notifications/initialized,position=after,method=initialize"},
		Era:    "stateful",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "server-request-mid-call",
		Doc:    "the server asks the client for its roots just before a tool result, while the client waits for it; the client must answer and keep its call (bug class 4; clients of the stateless revision skip it: indeterminate)",
		Faults: []string{"server-request:on=s2c:response:tools/call,position=before,method=roots/list"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "ping-before-initialize-answer",
		Doc:    "the server pings the client before answering its initialize, which a server may (MCP 2025-11-25, Lifecycle: \"The server SHOULD NOT send requests other than pings and logging before receiving the initialized notification\"); the client must answer it and finish its handshake (clients of the stateless revision skip it: indeterminate)",
		Faults: []string{"server-request:on=s2c:response:initialize,position=before,method=ping"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "log-before-initialize-answer",
		Doc:    "the server sends three log messages (notifications/message) before its initialize answer, which a server may; the client must take them, or ignore them, and finish its handshake (clients of the stateless revision skip it: indeterminate)",
		Faults: []string{"burst:on=s2c:response:initialize,method=notifications/message,count=3"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "task-status-dropped",
		Doc:    "every notifications/tasks/status is dropped: a requestor MUST NOT rely on them, and must learn a task's end by polling tasks/get; a client that waits for the notification instead hangs (indeterminate for a client that runs no task)",
		Faults: []string{"drop:on=s2c:notification:notifications/tasks/status,times=0"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "burst-resource-updates",
		Doc:    "100 notifications/resources/updated for the bundled server's resource arrive just before a tool result: clients whose update handler re-reads the resource on the loop that must deliver the answer, or queues updates on a bounded channel nobody drains, hang (bug classes 1, 2)",
		Faults: []string{"burst:on=s2c:response:tools/call,position=before,method=notifications/resources/updated,count=100,uri=example://hello"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "late-progress",
		Doc:    "one more notifications/progress arrives right after a tool result; clients must drop progress for a finished request, not crash (bug class 7)",
		Faults: []string{"reorder:mode=late-progress"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "duplicate-response",
		Doc:    "a tool result arrives twice; clients must ignore the second answer, not crash or hand it to another call (bug class 7)",
		Faults: []string{"duplicate:on=s2c:response:tools/call"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "oversize-response",
		Doc:    "a tool result grown to 1 MiB; clients that read lines through a fixed buffer fail (bug class 6)",
		Faults: []string{"oversize:on=s2c:response:tools/call,size=1MiB"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name:   "stderr-flood",
		Doc:    "the server writes 1 MiB to its stderr mid-call and stops answering until it is read; clients that pipe a server's stderr and never read it hang",
		Faults: []string{"stderr-flood:on=c2s:request:tools/call"},
		Expect: "success",
	}},
	{For: ForClient, Scenario: Scenario{
		Name: "linger-on-close",
		// Until killed: a linger that ends by itself lets a client that
		// would wait for ever pass like one that escalates. The SDKs escalate
		// to SIGKILL 4-5s after closing (Python's stdio_client and the
		// TypeScript StdioClientTransport wait 2s, SIGTERM, 2s; mcp-go 2s,
		// SIGTERM, 3s), well inside test-client's --deadline (30s by
		// default), which a client that waits for ever does not meet.
		Doc:    "the server ignores its stdin closing and SIGTERM until it is killed; clients must escalate to SIGKILL (the stdio shutdown's last step), not wait for ever: one that waits is a hang at --deadline (bug class 5, from the client's side)",
		Faults: []string{"linger:for=forever"},
		Expect: "success",
	}},
	{For: ForHTTPServer, Scenario: Scenario{
		Name: "sessions-all-end",
		Doc: "three clients at once against one server, and every session ends (DELETE) while 3 of its tool calls are in flight, the sessions' ends racing each other: teardown that iterates a shared table of sessions or requests while the others' ends change it crashes " +
			"(dictionary changed size during iteration, concurrent map writes; bug classes 3, 5)",
		Era:      "stateful",
		Faults:   []string{"end-session:on=c2s:request:tools/call,inflight=3"},
		Workload: Workload{Sessions: 3},
	}},
	{For: ForHTTPServer, Scenario: Scenario{
		Name: "sessions-shutdown",
		Doc: "three clients at once against one server, and the server is told to stop (SIGTERM) while 3 tool calls of one session are in flight and the other sessions' run: a shutdown that walks a shared table of sessions or requests while their handlers change it crashes " +
			"(dictionary changed size during iteration, concurrent map writes; bug classes 3, 5); the calls the shutdown cuts short are the fault's. Only for a server mcpchaos starts (test --url URL -- CMD)",
		Era:      "stateful",
		Faults:   []string{"signal:on=c2s:request:tools/call,inflight=3,session=1,sig=TERM"},
		Workload: Workload{Sessions: 3},
	}},
}

// Presets returns every built-in scenario: the default matrices of test and
// test-client, then the extra ones.
func Presets() []Preset {
	var out []Preset
	for _, s := range ServerScenarios() {
		out = append(out, Preset{Scenario: s, For: ForServer, Default: true})
	}
	for _, s := range ClientScenarios() {
		out = append(out, Preset{Scenario: s, For: ForClient, Default: true})
	}
	for _, s := range HTTPServerScenarios() {
		out = append(out, Preset{Scenario: s, For: ForHTTPServer, Default: true})
	}
	for _, s := range httpClientOnlyScenarios() {
		out = append(out, Preset{Scenario: s, For: ForHTTPClient, Default: true})
	}
	return append(out, extraPresets...)
}

// PresetsFor returns the built-in scenarios command (ForServer or ForClient)
// runs.
func PresetsFor(command string) []Scenario {
	var out []Scenario
	for _, p := range Presets() {
		if p.For == command || command == ForHTTPServer && p.For == ForServer || command == ForHTTPClient && p.For == ForClient {
			out = append(out, p.Scenario)
		}
	}
	return out
}

// BugClass is one bug class of DESIGN.md ("Bug classes it must catch") and
// the presets that expose it.
type BugClass struct {
	N       int
	Summary string
	Presets []string
	// Pending says why a class has no preset yet.
	Pending string
}

// BugClasses maps DESIGN.md's bug classes to presets; a test checks that
// every class has one (or says why not) and every name exists.
var BugClasses = []BugClass{
	{1, "a client's notification handler awaits a request on the loop that must deliver the answer", []string{"list-changed-mid-call"}, ""},
	{2, "a notification sent before a response into a stream nobody drains", []string{"progress-before-response", "stall-s2c", "burst-c2s", "burst-resource-updates"}, ""},
	{3, "the transport closes while handlers run", []string{"eof-inflight", "eof-surface", "eof-task", "half-close-s2c", "server-eof", "sessions-one-ends", "sessions-all-end"}, ""},
	{4, "handlers blocked on a server-to-client request when the transport closes", []string{"eof-server-request", "server-request-mid-call"}, ""},
	{5, "a server that never exits after stdin closes, or drops responses on EOF", []string{"eof-inflight", "eof-task", "half-close-s2c", "linger-on-close"}, ""},
	{6, "one malformed line ends the session; a line over 64 KiB breaks a fixed-size scanner", []string{"malformed-line", "oversize-call", "fragmented-call", "oversize-response"}, ""},
	{7, "concurrent requests corrupting shared state; a cancellation racing the response", []string{"concurrent-calls", "stall-s2c", "cancel-before-response", "cancel-task-race", "late-progress", "duplicate-response"}, ""},
	{8, "duplicate in-flight request ids cross-wiring responses", []string{"id-collision", "id-type", "sessions"}, ""},
}

// ResolveScenarios turns --scenario values into scenarios, in the order
// given: NAME picks a built-in scenario from presets, FILE runs every
// scenario of a scenario file, FILE#NAME one of them. A value names a file
// when it has a #, a / or a .yaml/.yml suffix, or when a file of that name
// exists. A scenario selected twice runs once; two different scenarios of
// the same name are an error.
func ResolveScenarios(refs []string, presets []Scenario) ([]Scenario, error) {
	var out []Scenario
	for _, ref := range refs {
		got, err := resolveRef(ref, presets)
		if err != nil {
			return nil, err
		}
		for _, sc := range got {
			i := slices.IndexFunc(out, func(o Scenario) bool { return o.Name == sc.Name })
			if i < 0 {
				out = append(out, sc)
				continue
			}
			if out[i].Source != sc.Source {
				return nil, fmt.Errorf("two scenarios are named %q (%s and %s); rename one, as names key transcripts and findings", sc.Name, where(out[i]), where(sc))
			}
		}
	}
	return out, nil
}

// ResolveScenario resolves the one scenario a single session runs (mcpchaos
// wrap): a file with several scenarios needs #NAME.
func ResolveScenario(ref string, presets []Scenario) (Scenario, error) {
	got, err := resolveRef(ref, presets)
	if err != nil {
		return Scenario{}, err
	}
	if len(got) != 1 {
		return Scenario{}, fmt.Errorf("--scenario %s: the file has %d scenarios and one session runs one; pick it with %s#NAME, NAME one of: %s", ref, len(got), ref, strings.Join(names(got), ", "))
	}
	return got[0], nil
}

func where(s Scenario) string {
	if s.Source == "" {
		return "built in"
	}
	return s.Source
}

func names(ss []Scenario) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// isFileRef reports whether a --scenario value names a file.
func isFileRef(ref string) bool {
	if strings.ContainsAny(ref, "#/") || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml") {
		return true
	}
	fi, err := os.Stat(ref)
	return err == nil && fi.Mode().IsRegular()
}

func resolveRef(ref string, presets []Scenario) ([]Scenario, error) {
	if ref == "" {
		return nil, fmt.Errorf("--scenario: empty value; give a NAME (see mcpchaos scenarios), a FILE or FILE#NAME")
	}
	if !isFileRef(ref) {
		sc, err := SelectScenarios(presets, []string{ref})
		if err != nil {
			return nil, err
		}
		return sc, nil
	}
	path, name, hasName := strings.Cut(ref, "#")
	if path == "" {
		return nil, fmt.Errorf("--scenario %s: no file before #; write FILE#NAME, as in chaos.yaml#slow-progress", ref)
	}
	all, err := ReadScenarioFile(path)
	if err != nil {
		return nil, err
	}
	for i := range all {
		all[i].Ref = path + "#" + all[i].Name
	}
	if !hasName {
		return all, nil
	}
	for _, sc := range all {
		if sc.Name == name {
			return []Scenario{sc}, nil
		}
	}
	known := names(all)
	return nil, fmt.Errorf("--scenario %s: %s has no scenario %q%s (it has: %s)", ref, path, name, suggest(name, known), strings.Join(known, ", "))
}

// FaultFlagsName names the scenario --fault flags make on test and
// test-client; no preset has it, so a repro line can tell it apart.
const FaultFlagsName = "fault-flags"

// FaultFlagsScenario is the scenario of the --fault specs given on the
// command line, checked as a scenario file's faults are.
func FaultFlagsScenario(specs []string) (Scenario, error) {
	sc := Scenario{Name: FaultFlagsName, Doc: "the faults given with --fault", Faults: specs}
	if _, err := sc.Parse(); err != nil {
		return Scenario{}, fmt.Errorf("--fault: %w", err)
	}
	return sc, nil
}
