package wire

import "fmt"

// Direction is the way a message travels between the two peers of a session.
// The two directions number their request ids independently.
type Direction uint8

const (
	// ToServer is client to server ("c2s").
	ToServer Direction = iota + 1
	// ToClient is server to client ("s2c").
	ToClient
)

// String returns the short name used in fault specs and transcripts.
func (d Direction) String() string {
	switch d {
	case ToServer:
		return "c2s"
	case ToClient:
		return "s2c"
	}
	return "unknown"
}

// Reverse is the direction answers to a request in d travel.
func (d Direction) Reverse() Direction {
	if d == ToServer {
		return ToClient
	}
	return ToServer
}

// ParseDirection accepts the names String returns.
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "c2s":
		return ToServer, nil
	case "s2c":
		return ToClient, nil
	}
	return 0, fmt.Errorf("unknown direction %q (want c2s for client to server or s2c for server to client)", s)
}

// Kind is what a frame is, read from its bytes.
type Kind uint8

const (
	// Invalid is a frame that is not a JSON-RPC 2.0 message: not JSON, not an
	// object, a wrong "jsonrpc" member, or a shape that fits no other kind.
	Invalid Kind = iota
	Request
	Notification
	Response
	Error
)

var kindNames = [...]string{"invalid", "request", "notification", "response", "error"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind accepts the names String returns.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

// Era is the MCP protocol generation a message belongs to, when its bytes say.
type Era uint8

const (
	EraUnknown Era = iota
	// Stateful is the initialize-handshake era, up to revision 2025-11-25.
	Stateful
	// Stateless is revision 2026-07-28 and later: server/discover and
	// per-request _meta instead of a session.
	Stateless
)

func (e Era) String() string {
	switch e {
	case Stateful:
		return "stateful"
	case Stateless:
		return "stateless"
	}
	return ""
}

// Message is one frame as it crossed the wire, with what its bytes say about it.
// Raw is never re-encoded: forwarding a Message writes Raw unchanged.
type Message struct {
	// Raw is the exact bytes read, including the terminating '\n' when the
	// frame had one (a final frame cut off by EOF has none).
	Raw []byte
	Kind
	// ID is the JSON text of the "id" member ("7", "\"a\""); empty when absent.
	ID string
	// Method is the "method" member of requests and notifications.
	Method string
	// ProgressToken is the JSON text of params._meta.progressToken (requests)
	// or params.progressToken (notifications/progress); empty when absent.
	ProgressToken string
	Era
	// Problem says why Kind is Invalid.
	Problem string
}

// IsAnswer reports whether m closes a request (a result or an error).
func (m *Message) IsAnswer() bool { return m.Kind == Response || m.Kind == Error }
