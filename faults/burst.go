package faults

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// burst injects a run of notifications toward one peer, by default just
// before the triggering message is forwarded: progress before a response is
// what hangs clients that read through a zero-capacity stream, list_changed
// mid-call is what deadlocks clients that reload tools from the receive loop.
var burstFamily = &Family{
	Name:     "burst",
	InFlight: true,
	Doc:      "inject N notifications toward a peer (progress for an in-flight request, log messages, list_changed, resource updates)",
	Phase:    Before,
	Params: []Param{
		{Name: "count", Type: TypeInt, Default: "10", Doc: "how many notifications"},
		{Name: "method", Type: TypeString, Default: "notifications/progress", Doc: "notification method: notifications/progress, notifications/message, notifications/{tools,prompts,resources}/list_changed or any notifications/*"},
		{Name: "dir", Type: TypeDirection, Default: "s2c", Doc: "direction to inject in: s2c toward the client, c2s toward the server"},
		{Name: "gap", Type: TypeDuration, Default: "0s", Doc: "pause before each notification"},
		{Name: "uri", Type: TypeString, Default: "mcpchaos://resource", Doc: "the resource a notifications/resources/updated burst names (params.uri)"},
		streamParam("write the notifications into that stream (dir is s2c)"),
	},
	New:     newBurst,
	Example: "burst:on=s2c:response:tools/call,count=20",
}

// maxBurst bounds one firing, so a typo cannot make the relay build a
// hundred million frames.
const maxBurst = 100000

type burst struct {
	count  int
	method string
	dir    wire.Direction
	gap    time.Duration
	uri    string
	stream string
}

func newBurst(v Values) (Action, error) {
	b := burst{count: v.Int("count"), method: v.String("method"), dir: v.Direction("dir"), gap: v.Duration("gap"), uri: v.String("uri"), stream: v.String("stream")}
	if b.stream == StreamGET && b.dir == wire.ToServer {
		return nil, fmt.Errorf("stream=get writes into the client's GET stream: dir must be s2c")
	}
	if b.count == 0 || b.count > maxBurst {
		return nil, fmt.Errorf("count: must be between 1 and %d", maxBurst)
	}
	if !strings.HasPrefix(b.method, "notifications/") {
		return nil, fmt.Errorf("method: %q is not a notification method (they start with notifications/)", b.method)
	}
	return b, nil
}

func (b burst) Fire(c *FireContext) Effect {
	dir := b.dir
	var params func(i int) string
	detail := fmt.Sprintf("inject %d %s toward the %s", b.count, b.method, receiver(dir))
	switch b.method {
	case "notifications/progress":
		token := b.progressToken(c, dir)
		if token == "" {
			return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: no unanswered request from the %s carries a progress token", receiver(dir))}
		}
		detail += " for progress token " + token
		params = func(i int) string {
			return fmt.Sprintf(`{"progressToken":%s,"progress":%d,"total":%d,"message":"mcpchaos burst"}`, token, i, b.count)
		}
	case "notifications/message":
		params = func(i int) string {
			return fmt.Sprintf(`{"level":"info","logger":"mcpchaos","data":"burst %d of %d"}`, i, b.count)
		}
	case "notifications/resources/updated":
		uri, _ := json.Marshal(b.uri)
		params = func(int) string { return `{"uri":` + string(uri) + `}` }
	}
	e := Effect{Detail: detail, Stream: b.stream}
	for i := 1; i <= b.count; i++ {
		e.Inject = append(e.Inject, Injection{Dir: dir, Raw: notification(b.method, params, i), Gap: b.gap})
	}
	return e
}

// progressToken picks the token to report progress on: the request the
// triggering message answers, else one of the receiver's unanswered requests,
// chosen by the seed.
func (b burst) progressToken(c *FireContext, dir wire.Direction) string {
	if a := c.Answers; a != nil && a.ProgressToken != "" && a.Dir == dir.Reverse() {
		return a.ProgressToken
	}
	var withToken []*Pending
	for _, p := range c.Sent(dir.Reverse()) {
		if p.ProgressToken != "" {
			withToken = append(withToken, p)
		}
	}
	if len(withToken) == 0 {
		return ""
	}
	return withToken[c.Draws.Intn(len(withToken))].ProgressToken
}

func notification(method string, params func(int) string, i int) []byte {
	m, _ := json.Marshal(method)
	s := `{"jsonrpc":"2.0","method":` + string(m)
	if params != nil {
		s += `,"params":` + params(i)
	}
	return []byte(s + "}\n")
}

func receiver(dir wire.Direction) string {
	if dir == wire.ToClient {
		return "client"
	}
	return "server"
}
