package wire

import "fmt"

// Probe is a liveness probe's request: the cheapest request a peer must
// answer whatever else it is doing, in the era the session speaks.
type Probe struct {
	ID     string // JSON text, starting with ProbeIDPrefix
	Method string
	Raw    []byte // one line, newline-terminated
}

// NewProbe builds the n-th liveness probe of a session in era: ping, or in
// the stateless era (which has no ping outside a session) server/discover
// with the _meta every 2026-07-28 request must carry.
func NewProbe(n int64, era Era) Probe {
	id := fmt.Sprintf("%s%d\"", ProbeIDPrefix, n)
	method, params := "ping", ""
	if era == Stateless {
		method, params = "server/discover", statelessProbeParams
	}
	return Probe{ID: id, Method: method,
		Raw: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"` + params + "}\n")}
}

const statelessProbeParams = `,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"mcpchaos-liveness-probe","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}`
