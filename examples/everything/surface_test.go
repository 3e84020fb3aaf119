package everything_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/everything"
)

// nextAnswer reads the server's lines until the answer to id, returning it
// and the notifications that came before it.
func (c *rawClient) nextAnswer(id float64) (answer map[string]any, notes []map[string]any) {
	c.t.Helper()
	for {
		m := c.next()
		if m["id"] == id && m["method"] == nil {
			return m, notes
		}
		if m["method"] != nil && m["id"] == nil {
			notes = append(notes, m)
		}
	}
}

// The bundled server's surface beyond tools, as `mcpchaos serve` offers it to
// client programs under test (issue 29): completion of the summarize
// prompt's style, the item template, updates to subscribers only, log
// messages at the level set, and research run as a task to its end.
func TestSurface(t *testing.T) {
	c := connectRaw(t)

	c.send(`{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"style","value":"b"}}}`)
	if a, _ := c.nextAnswer(2); !strings.Contains(fmt.Sprint(a["result"]), "values:[brief]") {
		t.Errorf("completion of style from %q = %v, want brief", "b", a)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"example://items/7"}}`)
	if a, _ := c.nextAnswer(3); !strings.Contains(fmt.Sprint(a["result"]), "Item 7.") {
		t.Errorf("reading item 7 = %v", a)
	}

	// Not subscribed: touch sends no update; subscribed: one; unsubscribed:
	// none again.
	for i, step := range []struct {
		before  string
		updates int
	}{
		{"", 0},
		{`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":"` + everything.HelloURI + `"}}`, 1},
		{`{"jsonrpc":"2.0","id":%d,"method":"resources/unsubscribe","params":{"uri":"` + everything.HelloURI + `"}}`, 0},
	} {
		id := float64(10 + 2*i)
		if step.before != "" {
			c.send(fmt.Sprintf(step.before, int(id)))
			c.nextAnswer(id)
		}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"touch"}}`, int(id)+1))
		_, notes := c.nextAnswer(id + 1)
		got := 0
		for _, n := range notes {
			if n["method"] == "notifications/resources/updated" {
				got++
			}
		}
		if got != step.updates {
			t.Errorf("step %d: %d updates, want %d (%v)", i, got, step.updates, notes)
		}
	}

	// At level warning, log sends only its warning.
	c.send(`{"jsonrpc":"2.0","id":20,"method":"logging/setLevel","params":{"level":"warning"}}`)
	c.nextAnswer(20)
	c.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"log"}}`)
	_, notes := c.nextAnswer(21)
	// mcp-go queues log messages apart from answers: they may come before
	// the call's answer or after it, so pings follow until the warning has
	// come (on a loaded machine it came after a first ping's answer).
	var levels []string
	for ping := 22; ping < 42; ping++ {
		for _, n := range notes {
			if n["method"] == "notifications/message" {
				levels = append(levels, fmt.Sprint(n["params"].(map[string]any)["level"]))
			}
		}
		if len(levels) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, ping))
		_, notes = c.nextAnswer(float64(ping))
	}
	if strings.Join(levels, " ") != "warning" {
		t.Errorf("log sent messages of levels %q after the level was set to warning, want the warning alone", levels)
	}

	// research as a task: created working, then completed with its result
	// (mcp-go #897 would cancel it as soon as it was created). A short ttl:
	// mcp-go deletes the task from a goroutine that sleeps the ttl out, which
	// must end before the leak check's patience does.
	c.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"research","arguments":{"topic":"x"},"task":{"ttl":3000}}}`)
	a, _ := c.nextAnswer(30)
	task, _ := a["result"].(map[string]any)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("research as a task answered %v, want a CreateTaskResult", a)
	}
	status := ""
	for n := 31; n < 80 && status != "completed"; n++ {
		time.Sleep(50 * time.Millisecond)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q}}`, n, id))
		got, _ := c.nextAnswer(float64(n))
		status = fmt.Sprint(got["result"].(map[string]any)["status"])
		if status != "working" && status != "completed" {
			t.Fatalf("task %s is %s, want working then completed: %v", id, status, got)
		}
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":99,"method":"tasks/result","params":{"taskId":%q}}`, id))
	if got, _ := c.nextAnswer(99); !strings.Contains(fmt.Sprint(got["result"]), "Research on x") {
		t.Errorf("tasks/result = %v, want research's text", got)
	}
}
