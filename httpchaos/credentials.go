package httpchaos

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/ctxsleep"
	"github.com/mcpchaos/mcpchaos/wire"
)

// credentialNames are the words a header that carries credentials is
// named with, beside Authorization and Cookie.
var credentialNames = []string{"token", "secret", "key", "password", "auth", "cookie", "session"}

// CredentialHeaders names the headers of h that carry credentials
// (Authorization, Cookie, and those named like a token, key, secret,
// password or session), but the MCP session id (a session, not a
// credential).
func CredentialHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		lk := strings.ToLower(k)
		if lk == "mcp-session-id" {
			continue
		}
		for _, w := range credentialNames {
			if strings.Contains(lk, w) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// credentialsSkip says why the credentials fault cannot act, or "".
func (p *Proxy) credentialsSkip() string {
	h, _ := p.asTheClient()
	if len(CredentialHeaders(h)) == 0 {
		return "skipped: the client sends no credentials (an Authorization, Cookie or token header): give them with --header, and the scenario tests that the server refuses requests without them"
	}
	return ""
}

// sessionWait bounds how long the credentials fault waits for the client's
// session id, which its first request after the handshake carries.
const sessionWait = 2 * time.Second

// credentials sends the server, one after the other on exchanges of the
// proxy's own, a request for each of c.Forge with the client's
// credentials changed, and records each with what the server answered.
func (p *Proxy) credentials(label string, cause int64, c *faults.Credentials) {
	if !p.enter() {
		return
	}
	defer p.leave()
	rng := rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
	for i, forged := range c.Forge {
		h, target := p.visitHeaders()
		v := visit{forged: forged, header: h}
		names := CredentialHeaders(h)
		var said []string
		for _, k := range names {
			val := h.Get(k)
			switch forged {
			case "none", "session-none":
				h.Del(k)
				said = append(said, k+": none")
			case "malformed":
				h.Set(k, malformedCredential(val))
				said = append(said, k+": malformed")
			case "made-up", "session-made-up":
				h.Set(k, madeUpCredential(val, rng))
				said = append(said, k+": made up, of the same form")
			}
		}
		v.detail = strings.Join(said, "; ")
		raw := foreignHandshake("credentials-"+strconv.Itoa(i+1), wire.Era(p.era.Load()))
		if strings.HasPrefix(forged, "session-") {
			if wire.Era(p.era.Load()) == wire.Stateless {
				p.record(wire.Event{Type: wire.EventFault, Fault: label, Of: cause, Action: "credentials",
					Detail: "skipped " + forged + ": the stateless revision has no sessions"})
				continue
			}
			v.session = p.awaitSession()
			if v.session == "" {
				p.record(wire.Event{Type: wire.EventFault, Fault: label, Of: cause, Action: "credentials",
					Detail: "skipped " + forged + ": the client's session has no Mcp-Session-Id"})
				continue
			}
			client, _ := p.asTheClient()
			h.Set("Mcp-Session-Id", v.session)
			if version := client.Get("MCP-Protocol-Version"); version != "" {
				h.Set("MCP-Protocol-Version", version)
			}
			raw = []byte(`{"jsonrpc":"2.0","id":` + wire.InjectIDPrefix + "credentials-" + strconv.Itoa(i+1) + `","method":"ping"}`)
			v.detail += "; in the client's session " + v.session
		}
		p.sendVisit(label, cause, target, v, raw)
	}
}

// awaitSession waits, a while, for the client's session id.
func (p *Proxy) awaitSession() string {
	for end := time.Now().Add(sessionWait); ; {
		if id := p.sessionID(); id != "" || time.Now().After(end) {
			return id
		}
		if !ctxsleep.Sleep(p.ctx, 20*time.Millisecond) {
			return ""
		}
	}
}

// malformedCredential is val broken: the scheme alone of a credential that
// has one ("Bearer"), else characters no token holds.
func malformedCredential(val string) string {
	if scheme, _, ok := strings.Cut(val, " "); ok {
		return scheme
	}
	return "!!!!"
}

// madeUpCredential is a credential of val's form, its scheme kept and its
// letters and digits drawn anew: what a client that never had one sends.
func madeUpCredential(val string, rng *rand.Rand) string {
	scheme, token, ok := strings.Cut(val, " ")
	if !ok {
		scheme, token = "", val
	}
	b := []byte(token)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = 'a' + byte(rng.IntN(26))
		case 'A' <= c && c <= 'Z':
			b[i] = 'A' + byte(rng.IntN(26))
		case '0' <= c && c <= '9':
			b[i] = '0' + byte(rng.IntN(10))
		}
	}
	if string(b) == token && len(b) > 0 {
		b = append(b, 'x') // nothing to draw anew: at least not the same
	}
	if ok {
		return scheme + " " + string(b)
	}
	return string(b)
}
