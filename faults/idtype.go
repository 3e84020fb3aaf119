package faults

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// idType sends a request on with its id turned into the other JSON type (1
// becomes "1", "abc" a number) and turns the answer's id back, so a correct
// peer on either side sees nothing. A receiver that answers with the wrong
// type (1 for "1": ids compared as numbers, or re-encoded from a parsed
// integer) sends an answer nobody asked for and leaves the request
// unanswered: the judge reports an unknown-response and a hang or
// lost-response. Such an answer is not translated; it goes on as the peer
// wrote it.
var idTypeFamily = &Family{
	Name:     "id-type",
	InFlight: true,
	Doc: "send the triggering request on with its id as the other JSON type (1 as \"1\", a string as a number) and give the answer back its original id, " +
		"so that a receiver that answers with the wrong id type is caught (default on=c2s:request:tools/call)",
	Phase: Before,
	Params: []Param{
		{Name: "to", Type: TypeChoice, Default: "flip", Choices: []string{"flip", "string", "number"},
			Doc: "the id type the receiver gets: flip turns a number into a string and a string into a number; string or number skips a request whose id already has that type"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		return idType{to: v.String("to")}, nil
	},
	Example: "id-type:on=c2s:request:tools/call,to=string",
	On:      "c2s:request:tools/call",
}

type idType struct{ to string }

func (k idType) Fire(c *FireContext) Effect {
	m := c.Message
	if m.Kind != wire.Request {
		return Effect{Skipped: true, Detail: "skipped: not a request, so there is no id to rewrite"}
	}
	if why := c.rewritten(); why != "" {
		return Effect{Skipped: true, Detail: why}
	}
	old := m.ID
	var id string
	if old[0] == '"' {
		if k.to == "string" {
			return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: the id %s is a string already", old)}
		}
		n, ok := c.freeNumber(old)
		if !ok {
			return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: no free number found for the id %s", old)}
		}
		id = n
	} else {
		if k.to == "number" {
			return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: the id %s is a number already", old)}
		}
		// A number's JSON text has no quote or backslash to escape.
		id = `"` + old + `"`
		if c.idInUse(c.Dir, id) {
			return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: the %s holds a request with id %s already, rewriting %s to it would be a collision", receiver(c.Dir), id, old)}
		}
	}
	raw, ok := wire.ReplaceID(m.Raw, id)
	if !ok {
		return Effect{Skipped: true, Detail: "skipped: the request's id could not be located"}
	}
	c.rewriteID(id, nil)
	return Effect{Rewrite: raw, Detail: fmt.Sprintf("send the request on with id %s instead of %s; an answer with id %s goes back to the %s as %s",
		id, old, id, sender(c.Dir), old)}
}
