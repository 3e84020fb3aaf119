package faults

import (
	"fmt"
	"time"
)

// holdHeaders keeps the head of the server's answer (status and headers)
// from the client for a while or for ever: the server has answered, but
// the client's HTTP request has not even returned. Clients that start
// their request timeout only once a response (or its event stream) opens
// wait here for ever; clients with a header timeout shorter than a slow
// server's first byte fail calls that would have succeeded.
var holdHeadersFamily = &Family{
	Name: "hold-headers",
	Doc: "hold the head (status and headers) of the server's answer to the client's request, for a while or for ever, " +
		"before any of it reaches the client; the server is not slowed (HTTP only); default on=c2s:request:tools/call",
	Phase: Before,
	On:    "c2s:request:tools/call",
	Params: []Param{
		{Name: "for", Type: TypeDuration, Default: "forever", Forever: true, Doc: "how long to hold the head"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		return holdHeaders{d: v.Duration("for")}, nil
	},
	Example:  "hold-headers:on=c2s:request:tools/call,for=3s",
	HTTPOnly: true,
}

type holdHeaders struct{ d time.Duration }

func (h holdHeaders) Fire(*FireContext) Effect {
	how := "until the client gives up or the session ends"
	if h.d > 0 {
		how = "for " + h.d.String()
	}
	return Effect{HoldHead: &HoldHead{For: h.d}, Detail: fmt.Sprintf("hold the head of the server's answer %s", how)}
}
