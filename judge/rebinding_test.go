package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// foreign records what the server answered a foreign page's initialize.
func (b *tb) foreign(forged, detail string, status int, session, answer string) int64 {
	e := wire.Event{Type: wire.EventForeign, Forged: forged, Fault: "foreign-origin#1", Dir: "c2s",
		Method: "initialize", ID: `"mcpchaos-inject-foreign-1"`, Detail: detail, Status: status, MCPSession: session}
	if answer != "" {
		e.Kind = wire.Classify([]byte(answer)).Kind.String()
		e.SetRaw([]byte(answer))
	}
	return b.add(e)
}

// forgedCall records the client's own request (id, method) on exchange x,
// sent on by fault forge-origin with forged's headers (detail), the head
// of the server's answer (status) and the answer the exchange carried.
func (b *tb) forgedCall(x int64, forged, detail, id, method string, status int, answer string) {
	m := wire.Classify([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{}}`, id, method)))
	e := wire.Event{Type: wire.EventReceived, Exchange: x}
	e.SetMessage(wire.ToServer, &m)
	seq := b.add(e)
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, Fault: "forge-origin#1", Action: "forge-origin", Forged: forged,
		Method: method, ID: id, Kind: "request", Detail: detail + ", in place of the client's Host: 127.0.0.1:8000; Origin: none"})
	b.add(wire.Event{Type: wire.EventForwarded, Dir: "c2s", Of: seq, Exchange: x})
	head := wire.Event{Type: wire.EventHTTP, Exchange: x, Status: status}
	if status >= 400 {
		head.Of = seq
	}
	b.add(head)
	if answer != "" {
		am := wire.Classify([]byte(answer))
		ae := wire.Event{Type: wire.EventReceived, Exchange: x}
		ae.SetMessage(wire.ToClient, &am)
		b.fwd("s2c", b.add(ae))
	}
}

// Issue 41: fault forge-origin sends the client's own requests on with a
// forged Host or Origin; the rebinding checker judges what the server
// answered them as it judges foreign-origin's requests of its own.
func TestRebindingOfTheClientsOwnRequests(t *testing.T) {
	origin := "Host: 127.0.0.1:8000; Origin: http://evil.example:8000"
	both := "Host: evil.example:8000; Origin: http://evil.example:8000"
	in := ", in place of the client's Host: 127.0.0.1:8000; Origin: none"
	runJudgeCases(t, []judgeCase{
		{
			name: "a tools/list with a foreign Origin answered with a result: foreign-origin-served",
			build: func(b *tb) {
				b.forgedCall(3, "origin", origin, "2", "tools/list", 200, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: "2", Method: "tools/list"}, Seqs: seqs(4),
				Message: "the server served the client's tools/list (" + origin + in + ") sent with its own Host but a foreign Origin, as a page of another site sends it: it answered 200; it does not check Origin (the specification's MUST)"}},
		},
		{
			name: "refused with 403 and 421: nothing",
			build: func(b *tb) {
				b.forgedCall(3, "origin", origin, "2", "tools/list", 403, "")
				b.forgedCall(4, "rebinding", both, "3", "tools/list", 421, "")
				b.finish()
			},
		},
		{
			name: "a foreign Origin refused with 200 and a JSON-RPC error: foreign-origin-not-403",
			build: func(b *tb) {
				b.forgedCall(3, "origin", origin, "2", "tools/list", 200, `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"bad origin"}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindSecurity, Severity: reports.SeverityWarning, Request: &reports.Request{ID: "2", Method: "tools/list"}, Seqs: seqs(4),
				Message: "the server refused the client's tools/list (" + origin + in + ") sent with its own Host but a foreign Origin, as a page of another site sends it with HTTP 200 and a JSON-RPC error, not the 403 Forbidden the specification names for an invalid Origin"}},
		},
		{
			name: "a session id named in the head of a tools/list answer is not a session issued",
			build: func(b *tb) {
				b.forgedCall(3, "rebinding", both, "2", "tools/list", 200, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: "2", Method: "tools/list"}, Seqs: seqs(4),
				Message: "the server served the client's tools/list (" + both + in + ") sent with a foreign Host and a foreign Origin, as a page of another site sends it once DNS rebinding has pointed the site's name at this machine: it answered 200; it checks neither Host nor Origin: any web page the user opens can use its tools"}},
		},
	})
}

// Issue 41: the rebinding checker, on what servers with and without the
// SDKs' DNS-rebinding fixes answer.
func TestRebinding(t *testing.T) {
	const served = `{"jsonrpc":"2.0","id":"mcpchaos-inject-foreign-1","result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	const refusedBody = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Invalid Origin header"}}`
	both := "Host: evil.example:8000; Origin: http://evil.example:8000"
	origin := "Host: 127.0.0.1:8000; Origin: http://evil.example:8000"
	null := "Host: 127.0.0.1:8000; Origin: null"
	host := "Host: evil.example:8000; Origin: none"
	runJudgeCases(t, []judgeCase{
		{
			name: "a server without the fix serves all four: a finding for each header let through",
			build: func(b *tb) {
				b.foreign("host", host, 200, "3f1c9a7e-52b4-4d0e-8a61-9b2f7c4d1e08", served)
				b.foreign("origin", origin, 200, "a94e0d2b-6c7f-4b13-9e58-0f2d1c6b7a39", served)
				b.foreign("null-origin", null, 200, "5d2b8f41-0e9c-4a76-b3d1-7c6e2a9f0b54", served)
				b.foreign("rebinding", both, 200, "c07a4e19-8b2d-4f65-a1c3-6e9d0b5f2a87", served)
				b.finish()
			},
			want: []short{
				{Kind: reports.KindSecurity, Severity: reports.SeverityWarning, Request: &reports.Request{ID: `"mcpchaos-inject-foreign-1"`, Method: "initialize"}, Seqs: seqs(3),
					Message: "the server served initialize (" + host + ") sent with a foreign Host and no Origin: it answered 200 and issued session 3f1c9a7e-52b4-4d0e-8a61-9b2f7c4d1e08; it does not check Host"},
				{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: `"mcpchaos-inject-foreign-1"`, Method: "initialize"}, Seqs: seqs(4),
					Message: "the server served initialize (" + origin + ") sent with its own Host but a foreign Origin, as a page of another site sends it: it answered 200 and issued session a94e0d2b-6c7f-4b13-9e58-0f2d1c6b7a39; it does not check Origin (the specification's MUST)"},
				{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: `"mcpchaos-inject-foreign-1"`, Method: "initialize"}, Seqs: seqs(5),
					Message: "the server served initialize (" + null + ") sent with Origin: null, as a sandboxed frame or a local file sends it: it answered 200 and issued session 5d2b8f41-0e9c-4a76-b3d1-7c6e2a9f0b54; it takes Origin: null for a trusted one"},
				{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: `"mcpchaos-inject-foreign-1"`, Method: "initialize"}, Seqs: seqs(6),
					Message: "the server served initialize (" + both + ") sent with a foreign Host and a foreign Origin, as a page of another site sends it once DNS rebinding has pointed the site's name at this machine: it answered 200 and issued session c07a4e19-8b2d-4f65-a1c3-6e9d0b5f2a87; it checks neither Host nor Origin: any web page the user opens can use its tools"},
			},
		},
		{
			name: "a fixed server refuses each, 421 for the Host and 403 for the Origin: nothing",
			build: func(b *tb) {
				b.foreign("host", host, 421, "", "")
				b.foreign("origin", origin, 403, "", refusedBody)
				b.foreign("null-origin", null, 403, "", refusedBody)
				b.foreign("rebinding", both, 421, "", "")
				b.finish()
			},
		},
		{
			name: "an invalid Origin refused with 400: a warning that the status is not 403",
			build: func(b *tb) {
				b.foreign("origin", origin, 400, "", refusedBody)
				b.foreign("rebinding", both, 400, "", refusedBody)
				b.finish()
			},
			want: []short{{Kind: reports.KindSecurity, Severity: reports.SeverityWarning, Request: &reports.Request{ID: `"mcpchaos-inject-foreign-1"`, Method: "initialize"}, Seqs: seqs(3),
				Message: "the server refused initialize (" + origin + ") sent with its own Host but a foreign Origin, as a page of another site sends it with HTTP 400, not the 403 Forbidden the specification names for an invalid Origin"}},
		},
		{
			name: "a server on every interface, in the rebinding scenario: a warning with the address",
			build: func(b *tb) {
				b.add(wire.Event{Type: wire.EventListening, Detail: "0.0.0.0:8000"})
				b.foreign("host", host, 421, "", "")
				b.finish()
			},
			want: []short{{Kind: reports.KindSecurity, Severity: reports.SeverityWarning, Seqs: seqs(3),
				Message: "the server listens on 0.0.0.0:8000: every interface, not only loopback, so any machine of the user's network reaches it; a local server SHOULD bind only to localhost (127.0.0.1)"}},
		},
		{
			name: "on loopback, or outside the rebinding scenario: nothing",
			build: func(b *tb) {
				b.add(wire.Event{Type: wire.EventListening, Detail: "127.0.0.1:8000, [::1]:8000"})
				b.foreign("host", host, 421, "", "")
				b.finish()
			},
		},
		{
			name: "session ids: a short one, and numbered ones",
			build: func(b *tb) {
				b.add(wire.Event{Type: wire.EventHTTP, HTTP: "POST /mcp", MCPSession: "mcp-session-0b8f5a0e-7c1d-4e2a-9f3b-2d6c8e1a4b7f"})
				b.foreign("origin", origin, 200, "session-17", served)
				b.foreign("null-origin", null, 200, "session-18", served)
				b.finish()
			},
			want: []short{
				{Kind: reports.KindSecurity, Severity: reports.SeverityWarning, Seqs: seqs(4),
					Message: `the server issued session id "session-17": about 6 random bits, which a client can guess; session ids should be globally unique and cryptographically secure (a securely generated UUID, a JWT, a cryptographic hash)`},
				{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: `"mcpchaos-inject-foreign-1"`, Method: "initialize"}, Seqs: seqs(4),
					Message: "the server served initialize (" + origin + ") sent with its own Host but a foreign Origin, as a page of another site sends it: it answered 200 and issued session session-17; it does not check Origin (the specification's MUST)"},
				{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: `"mcpchaos-inject-foreign-1"`, Method: "initialize"}, Seqs: seqs(5),
					Message: "the server served initialize (" + null + ") sent with Origin: null, as a sandboxed frame or a local file sends it: it answered 200 and issued session session-18; it takes Origin: null for a trusted one"},
			},
		},
		{
			name: "a request that never got an answer (the session ended) is nothing",
			build: func(b *tb) {
				b.foreign("origin", origin+"; no answer: context canceled", 0, "", "")
				b.finish()
			},
		},
	})
}

// credential records what the server answered a request of fault
// credentials.
func (b *tb) credential(forged string, status int, challenge, answer string) int64 {
	e := wire.Event{Type: wire.EventForeign, Forged: forged, Fault: "credentials#1", Dir: "c2s",
		Method: "initialize", ID: `"mcpchaos-inject-credentials-1"`, Detail: "Authorization: " + forged, Status: status, Challenge: challenge}
	if strings.HasPrefix(forged, "session-") {
		e.Method = "ping"
	}
	if answer != "" {
		e.Kind = wire.Classify([]byte(answer)).Kind.String()
		e.SetRaw([]byte(answer))
	}
	return b.add(e)
}

// Issue 41: the credentials checker.
func TestCredentials(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":"mcpchaos-inject-credentials-1","result":{}}`
	const bearer = `Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource"`
	runJudgeCases(t, []judgeCase{
		{
			name: "a server that checks its tokens: 401 with a challenge each time: nothing",
			build: func(b *tb) {
				for _, f := range []string{"none", "malformed", "made-up", "session-none", "session-made-up"} {
					b.credential(f, 401, bearer, "")
				}
				b.finish()
			},
		},
		{
			name: "a server that wants no credentials serves them all: nothing",
			build: func(b *tb) {
				for _, f := range []string{"none", "malformed", "made-up", "session-none", "session-made-up"} {
					b.credential(f, 200, "", ok)
				}
				b.finish()
			},
		},
		{
			name: "a server that checks a token is there, not what it is, and its sessions not at all; 403 without a challenge",
			build: func(b *tb) {
				b.credential("none", 403, "", "")
				b.credential("malformed", 403, "", "")
				b.credential("made-up", 200, "", ok)
				b.credential("session-none", 200, "", ok)
				b.finish()
			},
			want: []short{
				{Kind: reports.KindSecurity, Severity: reports.SeverityWarning, Request: &reports.Request{ID: `"mcpchaos-inject-credentials-1"`, Method: "initialize"}, Seqs: seqs(3),
					Message: "the server refused initialize with no credentials (Authorization: none) with HTTP 403: a request without valid credentials gets 401 Unauthorized and a WWW-Authenticate challenge, which tells a client how to authorize"},
				{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: `"mcpchaos-inject-credentials-1"`, Method: "initialize"}, Seqs: seqs(5),
					Message: "the server refused a request without credentials, and then served initialize with a made-up credential of the right form (Authorization: made-up): answered 200; it takes any credential of the right form"},
				{Kind: reports.KindSecurity, Severity: reports.SeverityError, Request: &reports.Request{ID: `"mcpchaos-inject-credentials-1"`, Method: "ping"}, Seqs: seqs(6),
					Message: "the server refused a request without credentials, and then served ping in a session it had opened for the client's credentials (Authorization: session-none): answered 200; whoever has the session id can use the session as its user"},
			},
		},
	})
}
