package faults

import "strings"

// credentials sends the server, beside the client's session, requests that
// carry the client's credentials changed: none, a malformed one, a made-up
// one of the same form, and requests in the client's own session without
// them or with a made-up one. A server that wants credentials refuses each
// with 401 and a WWW-Authenticate challenge (MCP 2025-11-25, Basic ›
// Authorization; RFC 9110 §15.5.2), and never lets a session stand for
// its user's credentials (Security Best Practices › Session Hijacking).
// The judge's credentials checker reads what the server answered.
var credentialsFamily = &Family{
	Name: "credentials",
	Doc: "send the server, on exchanges of mcpchaos's own, requests with the client's credentials (Authorization, Cookie, and headers named like a token, key, secret or password) changed: " +
		"none, a malformed one, a made-up one of the same form (a handshake each), and a ping in the client's own session without them or with a made-up one; a server that wants credentials refuses each with 401 and WWW-Authenticate. " +
		"By default all five, right after the first answer, the handshake's (default on=s2c:response; HTTP only; skipped when the client sends no credentials: give them with --header)",
	Phase: After,
	On:    "s2c:response",
	Params: []Param{forgeParam(CredentialForgeries,
		"which request: none (no credentials), malformed, made-up (the same form, other characters), session-none (the client's session, no credentials), session-made-up (the client's session, a made-up credential), or all five in turn")},
	New:      func(v Values) (Action, error) { return credentials{forge: forged(v, CredentialForgeries)}, nil },
	Example:  "credentials:forge=made-up",
	HTTPOnly: true,
}

// CredentialForgeries are the requests the credentials fault can send, in
// the order forge=all sends them.
var CredentialForgeries = []string{"none", "malformed", "made-up", "session-none", "session-made-up"}

// Credentials is what an HTTP transport sends for the credentials fault.
type Credentials struct {
	Forge []string
	// Seed draws the made-up credentials, so that a replay makes the same.
	Seed uint64
}

// NeedsCredentials reports whether sc only means something when the client
// sends credentials (--header).
func NeedsCredentials(sc Scenario) bool { return usesFamily(sc, credentialsFamily) }

type credentials struct{ forge []string }

func (f credentials) Fire(c *FireContext) Effect {
	return Effect{Credentials: &Credentials{Forge: f.forge, Seed: c.Draws.Uint64()},
		Detail: "send the server requests with the client's credentials changed: " + strings.Join(f.forge, ", ")}
}
