package explore

import (
	"slices"

	"github.com/mcpchaos/mcpchaos/suite"
)

// family is a fault family explore tries at the messages it can act on,
// with the parameters of its one systematic setting. The settings are the
// default matrix's where it has one (a 2 s stall, 100 notifications): a
// bug they expose is then shrunk to the least that still does.
type family struct {
	name   string
	params []param
	// applies says the family can act on the message, in the session's era.
	applies func(m suite.Message, stateful bool) bool
	stdio   bool
	http    bool
	// ownMoment: the fault names its own moment (early-request fires on
	// notifications/initialized), so it is one point, not one a message.
	ownMoment bool
	// ladders are the smaller settings shrinking tries, per parameter,
	// from the largest down.
	ladders map[string][]string
	// expect is, for a client under test, what its program must do under
	// the fault: "" is success (every call stays answerable), "failure"
	// when the fault makes a call impossible (it must fail promptly and
	// cleanly).
	expect string
}

func (f family) transport(http bool) bool {
	if http {
		return f.http
	}
	return f.stdio
}

func familyNamed(name string) (family, bool) {
	for _, f := range slices.Concat(families, clientFamilies) {
		if f.name == name {
			return f, true
		}
	}
	return family{}, false
}

// Message predicates.
func clientRequest(m suite.Message) bool { return m.Dir == "c2s" && m.Kind == "request" }
func clientNote(m suite.Message) bool    { return m.Dir == "c2s" && m.Kind == "notification" }

// opening says the message opens the session: a request that must not be
// cancelled (MCP, Cancellation: initialize MUST NOT be cancelled), and
// that no other request can be in flight beside.
func opening(m suite.Message) bool {
	return m.Method == "initialize" || m.Method == "server/discover"
}

// families is the order in which a message's points are listed. The faults
// that act on the server's side of a session are here; those that only a
// client can feel (server-to-client requests injected, list_changed
// notifications, HTTP error statuses answered in the server's place, held
// response heads, reused event ids) are test-client's.
var families = []family{
	{
		name:  "eof",
		stdio: true, http: true,
		applies: func(m suite.Message, _ bool) bool { return m.Kind != "" },
	},
	{
		name:   "half-close",
		params: []param{{"dir", "s2c"}},
		stdio:  true,
		applies: func(m suite.Message, _ bool) bool {
			return clientRequest(m) || (m.Dir == "s2c" && m.Kind != "response")
		},
	},
	{
		name:   "stall",
		params: []param{{"dir", "s2c"}, {"for", "2s"}, {"shrink", "true"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool {
			return clientRequest(m) || (m.Dir == "s2c" && m.Kind == "notification")
		},
		ladders: map[string][]string{"for": {"500ms"}},
	},
	{
		name:   "delay",
		params: []param{{"for", "1s"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return m.Dir == "c2s" || m.Kind == "request" },
		ladders: map[string][]string{"for": {"200ms"}},
	},
	{
		name:   "reorder",
		params: []param{{"mode", "swap"}},
		stdio:  true,
		applies: func(m suite.Message, _ bool) bool {
			return (clientRequest(m) && !opening(m)) || clientNote(m)
		},
	},
	{
		name:  "drop",
		stdio: true, http: true,
		applies: func(m suite.Message, _ bool) bool { return clientNote(m) },
	},
	{
		name:  "duplicate",
		stdio: true,
		// A request sent twice under one id is two requests to answer;
		// a notification or an answer sent twice is one to be ignored.
		applies: func(m suite.Message, _ bool) bool { return m.Dir == "c2s" && m.Kind != "request" },
	},
	{
		name:   "corrupt",
		params: []param{{"mode", "text"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
	{
		name:   "oversize",
		params: []param{{"size", "1MiB"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) },
		ladders: map[string][]string{"size": {"256KiB", "80KiB"}},
	},
	{
		name:    "fragment",
		params:  []param{{"pieces", "8"}, {"gap", "20ms"}},
		stdio:   true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) },
		ladders: map[string][]string{"pieces": {"2"}},
	},
	{
		name:  "id-type",
		stdio: true, http: true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) },
	},
	{
		name:  "id-collision",
		stdio: true, http: true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
	{
		name:  "cancel",
		stdio: true, http: true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
	{
		name:   "cancel",
		params: []param{{"position", "before"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool {
			return m.Dir == "s2c" && m.Kind == "response" && !opening(m)
		},
	},
	{
		name:   "burst",
		params: []param{{"dir", "c2s"}, {"method", "notifications/roots/list_changed"}, {"count", "100"}, {"position", "after"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
		ladders: map[string][]string{"count": {"10", "1"}},
	},
	{
		name:  "early-request",
		stdio: true, http: true,
		ownMoment: true,
		applies: func(m suite.Message, stateful bool) bool {
			return stateful && clientNote(m) && m.Method == "notifications/initialized"
		},
	},
	// Mutations: a client request sent on with its params, a tool call's
	// arguments or a resource's URI changed one way (the server owes it an
	// answer all the same); shrinking shortens what was lengthened, to the
	// smallest message that still fails.
	{
		name:   "mutate",
		params: []param{{"field", "/params"}, {"op", "null"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return mutable(m) },
	},
	{
		name:   "mutate",
		params: []param{{"field", "/params"}, {"op", "retype"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return mutable(m) },
	},
	{
		name:   "mutate",
		params: []param{{"field", "/params/arguments"}, {"op", "retype"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return mutable(m) && m.Method == "tools/call" },
	},
	{
		name:   "mutate",
		params: []param{{"field", "/params/uri"}, {"op", "lengthen"}, {"size", "1MiB"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return mutable(m) && m.Method == "resources/read" },
		ladders: map[string][]string{"size": {"64KiB", "4KiB"}},
	},
	// The handshake as surface: a ping between the initialize request and
	// its answer (which a client may send), and a second, well-formed
	// initialize once the session is up.
	{
		name:   "early-request",
		params: []param{{"method", "ping"}, {"position", "after"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, stateful bool) bool {
			return stateful && clientRequest(m) && m.Method == "initialize"
		},
	},
	{
		name:   "early-request",
		params: []param{{"method", "initialize"}, {"position", "after"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, stateful bool) bool {
			return stateful && clientNote(m) && m.Method == "notifications/initialized"
		},
	},
	{
		name:    "reset",
		params:  []param{{"position", "after"}},
		http:    true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
	{
		name:    "end-session",
		http:    true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
	{
		name:    "forget-session",
		http:    true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
	// The second-session family: a fault in the first of two sessions
	// working at once against one server, the second a witness. What the
	// fault does to the first is the one-session families' to find; what
	// it does to the second (its calls failed, hung, answered 404, its
	// messages given to the other) is a server's sessions not kept apart
	// (cross-session-fault, cross-session-message). Its client's ending
	// (eof) and its session's (end-session) at each of the session's
	// requests.
	{
		name:    "end-session",
		params:  []param{{sessionKey, "1"}},
		http:    true,
		applies: func(m suite.Message, stateful bool) bool { return stateful && clientRequest(m) && !opening(m) },
	},
	{
		name:    "eof",
		params:  []param{{sessionKey, "1"}},
		http:    true,
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
}

// sessionKey is the trigger key that confines a fault to one session of
// several; a plan with a fault that names session 1 runs two sessions at
// once (faults.Scenario.Sessions), the struck one and a witness.
const sessionKey = "session"

// mutable says a client request has params to mutate: not the opening
// one, nor a ping, which has none.
func mutable(m suite.Message) bool {
	return clientRequest(m) && !opening(m) && m.Method != "ping"
}

func serverAnswer(m suite.Message) bool { return m.Dir == "s2c" && m.Kind == "response" }
func serverNote(m suite.Message) bool   { return m.Dir == "s2c" && m.Kind == "notification" }

// clientFamilies are explore-client's: what the server's side of a session
// can do to a client. Each keeps every call answerable (the client must
// succeed) but eof, which ends the server (the client must fail promptly
// and cleanly). Faults whose fairness depends on the client's retry policy
// (an HTTP error status, a reset connection) are left to test-client's
// named scenarios.
var clientFamilies = []family{
	{
		name:   "delay",
		params: []param{{"for", "1s"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return m.Dir == "s2c" },
		ladders: map[string][]string{"for": {"200ms"}},
	},
	{
		name:   "stall",
		params: []param{{"dir", "s2c"}, {"for", "2s"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) || serverNote(m) },
		ladders: map[string][]string{"for": {"500ms"}},
	},
	{
		name:  "duplicate",
		stdio: true, http: true,
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) || serverNote(m) },
	},
	{
		name:   "burst",
		params: []param{{"count", "20"}},
		stdio:  true, http: true,
		// Progress for the call in flight, just before its answer.
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) && m.Method == "tools/call" },
		ladders: map[string][]string{"count": {"5", "1"}},
	},
	{
		name:    "reorder",
		params:  []param{{"mode", "late-progress"}},
		stdio:   true,
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) && m.Method == "tools/call" },
	},
	{
		name:   "list-changed",
		params: []param{{"position", "before"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) && !opening(m) },
	},
	{
		name:   "server-request",
		params: []param{{"position", "before"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, stateful bool) bool { return stateful && serverAnswer(m) && !opening(m) },
	},
	// The handshake as surface: what a server may send before its
	// initialize answer, a ping and log lines.
	{
		name:   "server-request",
		params: []param{{"position", "before"}, {"method", "ping"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, stateful bool) bool {
			return stateful && serverAnswer(m) && m.Method == "initialize"
		},
	},
	{
		name:   "burst",
		params: []param{{"method", "notifications/message"}, {"count", "3"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) && m.Method == "initialize" },
		ladders: map[string][]string{"count": {"1"}},
	},
	{
		name:   "oversize",
		params: []param{{"size", "1MiB"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) },
		ladders: map[string][]string{"size": {"256KiB", "80KiB"}},
	},
	{
		name:   "fragment",
		params: []param{{"pieces", "8"}, {"gap", "20ms"}},
		stdio:  true, http: true,
		applies: func(m suite.Message, _ bool) bool { return serverAnswer(m) },
		ladders: map[string][]string{"pieces": {"2"}},
	},
	{
		name:    "eof",
		params:  []param{{"position", "before"}},
		stdio:   true,
		expect:  "failure",
		applies: func(m suite.Message, _ bool) bool { return clientRequest(m) && !opening(m) },
	},
}
