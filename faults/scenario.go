package faults

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Scenario is a named fault plan that targets one moment known to break MCP
// SDKs. `mcpchaos test` runs each against a fresh server process.
type Scenario struct {
	Name string
	// Doc says what the scenario does and which bug class it exposes.
	Doc    string
	Faults []string
	// Era asks the probe client for a protocol era ("stateful" or
	// "stateless"); empty negotiates the newest the server offers. A moment
	// that exists in one era only (server-to-client requests) needs it.
	Era string
	// Expect is, for a client under test, what its program must do:
	// "success" when every call stays answerable, "failure" when a fault
	// makes a call impossible (it must then fail promptly and cleanly).
	Expect string

	// The fields below are optional; scenario files set them (see
	// scenariofile.go) and zero keeps the run's own setting.

	// Workload shapes the probe client of mcpchaos test.
	Workload Workload
	// Deadline replaces the run's --deadline for this scenario.
	Deadline time.Duration
	// HangAfter replaces test-client's --hang-after for this scenario: a
	// client program still running then is hung.
	HangAfter time.Duration
	// Seed, if set, replaces the run's seed for this scenario, so that a
	// file can pin the schedule that exposed a bug.
	Seed *uint64
	// Findings, if set, are the finding kinds this scenario is known to
	// produce: a run whose error findings are exactly these kinds passes
	// (the findings are listed as expected), any other run fails. It pins a
	// known bug, or a target that must fail, without failing the run.
	Findings []string
	// Source is where a scenario from a file is defined ("chaos.yaml:4");
	// empty for the built-in scenarios.
	Source string
	// Ref selects this scenario again on a command line (--scenario
	// chaos.yaml#name); empty means the name.
	Ref string
}

// Selector is what --scenario takes to select this scenario again.
func (s Scenario) Selector() string {
	if s.Ref != "" {
		return s.Ref
	}
	return s.Name
}

// Parse parses the scenario's fault specs; a preset that does not parse is a
// bug caught by the tests.
func (s Scenario) Parse() ([]*Fault, error) {
	var out []*Fault
	for _, spec := range s.Faults {
		f, err := Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// Baseline is the no-fault run every matrix starts with: a target that fails
// it is broken without faults, which is said separately from fault findings.
var Baseline = Scenario{Name: "baseline", Doc: "no faults: the workload as a well-behaved client runs it"}

// ServerScenarios is the default matrix for probing a server: the four core
// faults at the moments that break SDKs (DESIGN.md, "Bug classes").
func ServerScenarios() []Scenario {
	return []Scenario{
		{
			Name:   "stall-s2c",
			Doc:    "zero buffering: the server's stdout is not read for 2s (pipe shrunk to a page) once a tool call is in flight; servers that write while holding a lock, or time out writes, misbehave (bug classes 2, 7)",
			Faults: []string{"stall:on=c2s:request:tools/call,dir=s2c,for=2s,shrink=true"},
		},
		{
			Name:   "burst-c2s",
			Doc:    "100 client notifications (roots/list_changed) right after a tool call is forwarded; servers that queue notifications on a bounded or unbuffered channel hang, servers that answer notifications or log to stdout break the protocol (bug classes 2, 6)",
			Faults: []string{"burst:on=c2s:request:tools/call,dir=c2s,method=notifications/roots/list_changed,count=100,position=after"},
		},
		{
			Name:   "eof-inflight",
			Doc:    "the server's stdin closes while 3 tool calls are in flight; servers that tear down under running handlers crash (ClosedResourceError, dictionary changed size) or drop the answers (bug classes 3, 5)",
			Faults: []string{"eof:on=c2s:request:tools/call,inflight=3"},
		},
		{
			Name:   "eof-server-request",
			Doc:    "the server's stdin closes right after the server sends a request to the client (roots, sampling, elicitation); handlers blocked on the answer crash, lose their response or keep the server alive (bug class 4)",
			Faults: []string{"eof:on=s2c:request"},
			Era:    "stateful", // the stateless revision has no server-to-client requests
		},
		{
			Name:   "eof-surface",
			Doc:    "the server's stdin closes while prompts/get and resources/read are in flight (the probe sends them together); prompt and resource handlers that answer into the closed transport crash (ClosedResourceError) or lose their answers, as tool handlers do (bug classes 3, 5); indeterminate for a server with fewer than two prompts and resources to ask for",
			Faults: []string{"eof:on=c2s:request:resources/read,inflight=2"},
		},
		{
			Name:   "eof-task",
			Doc:    "the server's stdin closes while it runs a task the client is polling (tasks/get in flight): the task outlives its session, and must neither keep the server from exiting nor crash it writing to the closed transport (bug classes 3, 5); indeterminate for a server that runs no tool as a task",
			Faults: []string{"eof:on=c2s:request:tasks/get"},
			Era:    "stateful", // tasks are the stateful era's here
		},
		{
			Name:   "half-close-s2c",
			Doc:    "our read end of the server's stdout closes during a tool call, so its writes fail with EPIPE while its stdin still flows; the server must still exit when its stdin closes, and one that dies of the write error unhandled crashed (a warning: the fault made the write fail) (bug classes 3, 5)",
			Faults: []string{"half-close:dir=s2c,on=c2s:request:tools/call"},
		},
	}
}

// HTTPServerScenariosFor is the default matrix of test --url for a server
// at u, whose client sends credentials or not (--header): a server that is
// not on a loopback address leaves out the scenarios that only mean
// something for a local one (LocalOnly), and a client without credentials
// those that change them (NeedsCredentials).
func HTTPServerScenariosFor(u *url.URL, credentialed bool) []Scenario {
	scs := HTTPServerScenarios()
	if !Loopback(u) {
		scs = slices.DeleteFunc(scs, LocalOnly)
	}
	if !credentialed {
		scs = slices.DeleteFunc(scs, NeedsCredentials)
	}
	return scs
}

// Loopback reports whether u names this machine: localhost or a loopback
// address.
func Loopback(u *url.URL) bool {
	host := u.Hostname()
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// LocalOnly reports whether sc only means something for a server on a
// loopback address: a foreign page reaches such a server through DNS
// rebinding, and a public one directly, where its credentials keep it.
func LocalOnly(sc Scenario) bool { return usesFamily(sc, foreignOriginFamily) }

// HTTPServerScenarios is the default matrix for probing an HTTP server
// (test --url): the moments of ServerScenarios that HTTP has, in HTTP's
// terms. The client's connection or stream is what ends, not a pipe: a
// server must go on serving, answer on a resumed stream if it offers
// resumption, and never crash on a write to a stream its client left.
// HTTPServerScenariosFor picks those a given server and client can run.
func HTTPServerScenarios() []Scenario {
	return []Scenario{
		{
			Name:   "stall-streams",
			Doc:    "zero buffering: the server's response streams are not read for 2s once a tool call is in flight; servers that write while holding a lock, or time out writes, misbehave (bug classes 2, 7)",
			Faults: []string{"stall:on=c2s:request:tools/call,dir=s2c,for=2s"},
		},
		{
			Name:   "burst-posts",
			Doc:    "100 client notifications (roots/list_changed), each its own POST, right after a tool call is forwarded; servers that queue notifications on a bounded or unbuffered channel hang, servers that answer them break the protocol (bug classes 2, 6)",
			Faults: []string{"burst:on=c2s:request:tools/call,dir=c2s,method=notifications/roots/list_changed,count=100,position=after"},
		},
		{
			Name:   "cut-before-result",
			Doc:    "the client's connection carrying a tool result is cut just before the result: the server's write to a stream its client left must not crash it (ClosedResourceError), and a server that offers resumption replays the result on the client's GET with Last-Event-ID (bug classes 3, 5)",
			Faults: []string{"eof:on=s2c:response:tools/call,position=before"},
		},
		{
			Name:   "cut-inflight",
			Doc:    "the connection of a tool call is cut while 3 calls are in flight: the handlers still running must neither crash nor stop the others from being answered (bug classes 3, 5)",
			Faults: []string{"eof:on=c2s:request:tools/call,inflight=3"},
		},
		{
			Name:   "cancel-race",
			Doc:    "notifications/cancelled for a tool call arrives just before its result leaves the server: a server may or may not answer a cancelled request, but must not fall over or answer twice (bug class 5)",
			Faults: []string{"cancel:on=s2c:response:tools/call,position=before"},
		},
		{
			Name:   "cut-surface",
			Doc:    "the connection of a resources/read is cut while it and a prompts/get are in flight: prompt and resource handlers still running must neither crash nor keep the others from being answered (bug classes 3, 5); indeterminate for a server with fewer than two prompts and resources to ask for",
			Faults: []string{"eof:on=c2s:request:resources/read,inflight=2"},
		},
		{
			Name:   "end-session-task",
			Doc:    "the session ends (DELETE) while the server runs a task the client is polling: the task outlives its session, and the server must not crash on the writes it makes for it, nor serve the dead session's tasks/get (bug classes 3, 5); indeterminate for a server that runs no tool as a task",
			Era:    "stateful",
			Faults: []string{"end-session:on=c2s:request:tasks/get"},
		},
		{
			Name: "end-session-inflight",
			Doc:  "the session ends (DELETE) while 3 tool calls are in flight: the server must stop or finish their handlers without crashing (the transport closed under running handlers, bug class 3), and answer the session's later requests 404",
			// Sessions are the stateful era's.
			Era:    "stateful",
			Faults: []string{"end-session:on=c2s:request:tools/call,inflight=3"},
		},
		{
			Name: "unknown-session",
			Doc: "from a tool call on, the session's requests reach the server under an Mcp-Session-Id it never issued, as a restarted server, or a replica behind a load balancer, meets a session it does not have: " +
				"the server must answer 404, the one status on which a client starts a new session (any other is a warning: the specification's MUST names sessions the server terminated, not ids it never issued)",
			Era:    "stateful",
			Faults: []string{"forget-session:on=c2s:request:tools/call"},
		},
		{
			Name: "get-stream-dropped",
			Doc: "the client's GET stream (on the legacy transport, its one stream) is cut at both ends as a tool call goes: the server sees its client leave that stream, must not crash on its writes to it, and must let the client open another (the probe does, 1s later); " +
				"on the legacy transport, must refuse the session's later messages rather than accept and lose them (bug classes 3, 5)",
			// The GET stream is the stateful era's: the probe opens it
			// once the handshake is done.
			Era:    "stateful",
			Faults: []string{"eof:on=c2s:request:tools/call,stream=get"},
		},
		{
			Name: "rebinding",
			Doc: "beside the client's session, the server gets the handshake a page of a foreign site sends through DNS rebinding: initialize (server/discover in the stateless era) with a foreign Host, a foreign Origin, Origin: null, and both foreign; " +
				"a local server must refuse each before any method runs, a foreign or null Origin with 403 (a finding names each header let through; advisories GHSA-w48q-cv73-mx4w, GHSA-9h52-p55h-vw2f, GHSA-xw59-hvm2-8pj6). In the default matrix for a server on a loopback address only",
			Faults: []string{"foreign-origin"},
		},
		{
			Name: "credentials",
			Doc: "beside the client's session, the server gets requests with the credentials --header gives changed: none, a malformed one, a made-up one of the same form, and pings in the client's own session without them or with a made-up one; " +
				"a server that refuses the request without credentials must refuse the others too, each with 401 and WWW-Authenticate (a server that serves it wants none, and is not judged). In the default matrix when --header carries credentials",
			Faults: []string{"credentials"},
		},
		{
			Name: "sessions",
			Doc: "two clients at once against one server (--sessions sets how many), each numbering its requests from 1 and marking what it sends (clientInfo, progress tokens, string arguments): " +
				"one client's answer, progress, log line or server request delivered to another is a data leak between users (the shared-server-object bug of typescript-sdk GHSA-345p-7cg4-v4c7); a server that refuses the second client serves one at a time, which is noted, not a finding",
			Workload: Workload{Sessions: 2},
		},
		{
			Name: "sessions-one-ends",
			Doc: "two clients at once against one server, and the first one's session ends (DELETE) while 3 of its tool calls are in flight: the other session, with calls of its own in flight, must be served on, and the server must not crash tearing the ended one down " +
				"(a shared dictionary of sessions or requests changed while iterated; bug classes 3, 5)",
			Era:      "stateful",
			Faults:   []string{"end-session:on=c2s:request:tools/call,inflight=3,session=1"},
			Workload: Workload{Sessions: 2},
		},
	}
}

// ClientScenarios is the default matrix for judging a client program
// (test-client): the moments that broke real SDK clients.
func ClientScenarios() []Scenario {
	return []Scenario{
		{
			Name:   "progress-before-response",
			Doc:    "20 notifications/progress for the call's token arrive just before its result; clients that read notifications through a zero-capacity stream nobody drains hang (python-sdk #594, bug class 2)",
			Faults: []string{"burst:on=s2c:response:tools/call,count=20"},
			Expect: "success",
		},
		{
			Name:   "list-changed-mid-call",
			Doc:    "notifications/tools/list_changed arrives just before a tool result; clients whose notification handler awaits tools/list on the loop that must deliver the answer deadlock (agent-framework #4866, bug class 1)",
			Faults: []string{"burst:on=s2c:response:tools/call,method=notifications/tools/list_changed,count=1"},
			Expect: "success",
		},
		{
			Name:   "slow-server",
			Doc:    "the server's answers are held for 2s once a tool call is in flight (zero buffering toward the client); clients must wait, not fail or hang",
			Faults: []string{"stall:on=c2s:request:tools/call,dir=s2c,for=2s"},
			Expect: "success",
		},
		{
			Name:   "server-eof",
			Doc:    "the server's stdin closes just before a tool call would reach it, so the server exits and the call can never be answered; clients must fail promptly and cleanly, not hang or crash (bug classes 3, 5)",
			Faults: []string{"eof:on=c2s:request:tools/call,position=before"},
			Expect: "failure",
		},
	}
}

// HTTPClientScenarios is the default matrix for judging a client program
// over HTTP (test-client --server-url): the scenarios of ClientScenarios
// that HTTP has, then what only HTTP has. Where a call becomes impossible
// (a cut stream, an error status, a reset, an expired session) the client
// may fail it, or recover (resume, retry, start a new session), but must
// not hang or crash.
func HTTPClientScenarios() []Scenario {
	var out []Scenario
	for _, sc := range ClientScenarios() {
		// server-eof ends the server's stdin: over HTTP there is none.
		if sc.Name != "server-eof" {
			out = append(out, sc)
		}
	}
	return append(out, httpClientOnlyScenarios()...)
}

// httpClientOnlyScenarios are the client scenarios only HTTP has.
func httpClientOnlyScenarios() []Scenario {
	return []Scenario{
		{
			Name:   "result-stream-cut",
			Doc:    "the connection carrying a tool result is cut just before the result; clients must resume the stream (GET with Last-Event-ID) or fail the call, not wait for ever (bug classes 3, 5)",
			Faults: []string{"eof:on=s2c:response:tools/call,position=before"},
			Expect: "failure",
		},
		{
			Name:   "session-expired",
			Doc:    "the session ends at the server (DELETE) just before a tool call, which the server then answers 404; clients must start a new session (failing the call instead is a warning), not hang or retry the dead id (MCP Transports: Session Management)",
			Faults: []string{"end-session:on=c2s:request:tools/call,position=before"},
			Expect: "failure",
		},
		{
			Name:   "session-forgotten",
			Doc:    "the server forgets the session (a restart, another replica) just before a tool call, and answers it, and every later request under the old id, 404: clients must start a new session (an initialize without Mcp-Session-Id), not retry the dead id (an error); one that fails the call instead earns a warning (MCP Transports: Session Management)",
			Faults: []string{"forget-session:on=c2s:request:tools/call"},
			Expect: "failure",
		},
		{
			Name:   "server-error",
			Doc:    "a tool call is answered HTTP 503 in the server's place; clients must fail it (or retry a bounded number of times), not hang or crash",
			Faults: []string{"http-error:on=c2s:request:tools/call,status=503"},
			Expect: "failure",
		},
		{
			Name:   "connection-reset",
			Doc:    "the connection carrying a tool call is reset (TCP RST) before the call reaches the server; clients must fail it or retry, not hang or crash",
			Faults: []string{"reset:on=c2s:request:tools/call"},
			Expect: "failure",
		},
		{
			Name: "get-stream-cut",
			Doc: "the client's GET stream (its channel for the server's own messages) is cut, at both ends, as a tool call goes; the call's answer is held 3s, and then the server tells the client its tools changed, on the GET stream: " +
				"a client that has not reopened it by then loses that notification and every later one, while its calls work (warning get-stream-not-reopened); the calls stay answerable, so the client must succeed; indeterminate for a client that opens no GET stream (it MAY not)",
			// In plan order: the delay holds the answer first, and the
			// notification goes once it is over, 3s after the cut: longer
			// than the SDKs' reconnection delay (1s) and the verdict's
			// bound (2s), within the client's wait for its call.
			Faults: []string{
				"eof:on=c2s:request:tools/call,stream=get",
				"delay:on=s2c:response:tools/call,for=3s",
				"list-changed:on=s2c:response:tools/call,position=before,stream=get",
			},
			Expect: "success",
		},
	}
}

// SelectScenarios picks scenarios by name from a matrix, keeping the order
// given (all of them when names is empty); an unknown name is an error that
// lists the known ones.
func SelectScenarios(all []Scenario, names []string) ([]Scenario, error) {
	if len(names) == 0 {
		return all, nil
	}
	var known []string
	byName := map[string]Scenario{}
	for _, s := range all {
		known = append(known, s.Name)
		byName[s.Name] = s
	}
	var out []Scenario
	seen := map[string]bool{}
	for _, n := range names {
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown scenario %q%s (known: %s; see mcpchaos scenarios)", n, suggest(n, known), strings.Join(known, ", "))
		}
		if !seen[n] {
			out = append(out, s)
			seen[n] = true
		}
	}
	return out, nil
}
