package faults

import "fmt"

// drop loses one message: a response that never arrives, a notification
// that vanishes, the failure that timeouts and retries exist for.
var dropFamily = &Family{
	Name:  "drop",
	Doc:   "do not forward the triggering message (it is recorded as dropped)",
	Phase: Before,
	Local: true,
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		return drop{}, nil
	},
	Example: "drop:on=s2c:response:tools/call",
}

type drop struct{}

func (drop) Fire(*FireContext) Effect {
	return Effect{Drop: true, Detail: "drop the message"}
}

// mustBeBefore rejects position=after for faults that replace or withhold the
// triggering message, which cannot be done once it is forwarded.
func mustBeBefore(v Values) error {
	if v.Has("position") && v.String("position") == "after" {
		return fmt.Errorf("position: after is not possible, this fault acts on the message instead of forwarding it")
	}
	return nil
}
