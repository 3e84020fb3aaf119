package faults

import (
	"fmt"
	"net/http"
)

// httpError answers a client's POST with an HTTP error status in the
// server's place: a 5xx from a gateway or a crashed worker, a 429, a 404
// for a session the server no longer knows. Clients must fail the call
// promptly (or retry within bounds), never wait for ever or crash.
var httpErrorFamily = &Family{
	Name: "http-error",
	Doc: "answer the client's HTTP request with an error status instead of sending it on (HTTP only; the server never sees it); " +
		"default on=c2s:request:tools/call",
	Phase: Before,
	On:    "c2s:request:tools/call",
	Params: []Param{
		{Name: "status", Type: TypeInt, Default: "503", Doc: "the HTTP status, 400 to 599 (404 is what a server answers for a session it no longer knows)"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		s := v.Int("status")
		if s < 400 || s > 599 {
			return nil, fmt.Errorf("status: %d is not an HTTP error status (400 to 599)", s)
		}
		return httpError{status: s}, nil
	},
	Example:  "http-error:on=c2s:request:tools/call,status=503",
	HTTPOnly: true,
}

type httpError struct{ status int }

func (h httpError) Fire(*FireContext) Effect {
	return Effect{
		Respond: &Respond{Status: h.status},
		Detail:  fmt.Sprintf("answer with HTTP %d %s instead of sending the message on", h.status, http.StatusText(h.status)),
	}
}
