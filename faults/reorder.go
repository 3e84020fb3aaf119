package faults

import (
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// reorder changes the order in which messages arrive, which JSON-RPC allows
// and many receivers do not expect: two messages swapped, progress that
// arrives after the response it reports on, or progress for a request that
// is already answered. Nothing is lost: a held message is always released.
var reorderFamily = &Family{
	Name:     "reorder",
	InFlight: true,
	Doc:      "change the order messages arrive in: swap two, deliver a response before its progress, or send progress after the response",
	Phase:    Before,
	Params: []Param{
		{Name: "mode", Type: TypeChoice, Default: "swap", Choices: []string{"swap", "response-first", "late-progress"},
			Doc: "swap holds the message until the next one the same way is forwarded; response-first holds a progress notification (and later ones for its token) until the response is forwarded; late-progress sends one more progress right after a response. Without on=, response-first fires on s2c:notification:notifications/progress and late-progress on s2c:response"},
		{Name: "max", Type: TypeDuration, Default: "1s", Doc: "longest a message is held: it is released then even if what it waits for never came"},
	},
	New:       newReorder,
	DefaultOn: reorderDefaultOn,
	Example:   "reorder:on=s2c:notification:notifications/progress,mode=response-first,max=2s",
}

func reorderDefaultOn(v Values) string {
	switch v.String("mode") {
	case "response-first":
		return "s2c:notification:notifications/progress"
	case "late-progress":
		return "s2c:response"
	}
	return ""
}

type reorder struct {
	mode string
	max  time.Duration
}

func newReorder(v Values) (Action, error) {
	r := reorder{mode: v.String("mode"), max: v.Duration("max")}
	if r.mode != "late-progress" {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
	}
	if r.max <= 0 {
		return nil, fmt.Errorf("max: must be more than 0, or a held message would be released at once")
	}
	return r, nil
}

func (r reorder) Fire(c *FireContext) Effect {
	switch r.mode {
	case "response-first":
		return r.responseFirst(c)
	case "late-progress":
		return r.lateProgress(c)
	}
	return Effect{
		Hold:   &Hold{Until: UntilNext, Max: r.max},
		Detail: fmt.Sprintf("hold the message until the next %s message has been forwarded (at most %s)", c.Dir, r.max),
	}
}

func (r reorder) responseFirst(c *FireContext) Effect {
	m := c.Message
	if m.Kind != wire.Notification || m.Method != "notifications/progress" || m.ProgressToken == "" {
		return Effect{Skipped: true, Detail: "skipped: not a notifications/progress with a progress token"}
	}
	var req *Pending
	for _, p := range c.Sent(c.Dir.Reverse()) {
		if p.ProgressToken == m.ProgressToken {
			req = p
		}
	}
	if req == nil {
		return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: no unanswered request to the %s carries progress token %s", sender(c.Dir), m.ProgressToken)}
	}
	return Effect{
		Hold: &Hold{Until: UntilAnswer, AnswerID: req.ID, Token: m.ProgressToken, Max: r.max},
		Detail: fmt.Sprintf("hold progress for token %s, and later progress for it, until the answer to %s %s has been forwarded (at most %s)",
			m.ProgressToken, req.Method, req.ID, r.max),
	}
}

func (r reorder) lateProgress(c *FireContext) Effect {
	if !c.Message.IsAnswer() {
		return Effect{Skipped: true, Detail: "skipped: not an answer to a request"}
	}
	a := c.Answers
	if a == nil || a.ProgressToken == "" {
		return Effect{Skipped: true, Detail: "skipped: the request this answers carried no progress token"}
	}
	raw := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + a.ProgressToken +
		`,"progress":1,"total":1,"message":"mcpchaos late progress"}}` + "\n")
	return Effect{
		InjectAfter: []Injection{{Dir: c.Dir, Raw: raw}},
		Detail:      fmt.Sprintf("inject notifications/progress for token %s right after the answer to %s %s", a.ProgressToken, a.Method, a.ID),
	}
}
