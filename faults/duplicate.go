package faults

import "fmt"

// duplicate forwards one message several times: a response answered twice,
// a notification repeated, what idempotence and id bookkeeping must survive.
var duplicateFamily = &Family{
	Name:  "duplicate",
	Doc:   "forward the triggering message N times in total, the copies right after it",
	Phase: Before,
	Local: true,
	Params: []Param{
		{Name: "count", Type: TypeInt, Default: "2", Doc: "how many times the message arrives in total (2 is one extra copy)"},
	},
	New: func(v Values) (Action, error) {
		n := v.Int("count")
		if n < 2 || n > maxBurst {
			return nil, fmt.Errorf("count: must be between 2 and %d (it counts the message itself)", maxBurst)
		}
		return duplicate{count: n}, nil
	},
	Example: "duplicate:on=s2c:response:tools/call,count=2",
}

type duplicate struct{ count int }

func (d duplicate) Fire(*FireContext) Effect {
	return Effect{Copies: d.count - 1, Detail: fmt.Sprintf("forward the message %d times", d.count)}
}
