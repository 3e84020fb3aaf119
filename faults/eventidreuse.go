package faults

// eventIDReuse gives a server's event the id of the event before it in the
// same stream. Event ids must be unique within a session (MCP Transports:
// Resumability and Redelivery): a client that resumes from the reused id
// is sent again what it already has (it must not take a result twice), and
// one that keys its own bookkeeping by event id loses an event.
var eventIDReuseFamily = &Family{
	Name: "event-id-reuse",
	Doc: "send a server's event with the id of the event before it in the same stream (skipped for the first event with an id, " +
		"or for an answer that is a JSON body) (HTTP only); default on=s2c:response:tools/call",
	Phase: Before,
	On:    "s2c:response:tools/call",
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		return eventIDReuse{}, nil
	},
	Example:  "event-id-reuse:on=s2c:notification:notifications/progress,nth=2",
	HTTPOnly: true,
}

type eventIDReuse struct{}

func (eventIDReuse) Fire(*FireContext) Effect {
	return Effect{ReuseEventID: true, Detail: "send the event with the id of the one before it"}
}
