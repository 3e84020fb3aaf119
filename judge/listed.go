package judge

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// ListedItems holds a server to its own lists: a tool, prompt or resource
// it listed, then used by name, is not answered as one it does not know
// ("Unknown tool: x", "Prompt x not found", -32002 Resource not found). A
// list_changed notification between the listing and the use lets the item
// go: the server said its list changed.
var ListedItems = &Checker{
	Name:  "listed-items",
	Doc:   "a tool, prompt or resource the server listed, answered as not found when used",
	Reads: []string{wire.EventReceived, wire.EventForwarded},
	Rules: []string{reports.RuleListedNotFound},
	New:   func() Check { return &listedItems{asked: map[string]itemUse{}} },
}

// An item kind: what lists it, what uses it, and the member that names it.
type itemKind struct {
	kind, list, use, changed string
	// member names the item in the list's entries and the use's params.
	member string
}

var itemKinds = []itemKind{
	{"tool", "tools/list", "tools/call", "notifications/tools/list_changed", "name"},
	{"prompt", "prompts/list", "prompts/get", "notifications/prompts/list_changed", "name"},
	{"resource", "resources/list", "resources/read", "notifications/resources/list_changed", "uri"},
}

// codeResourceNotFound is MCP's error code for a resource that does not
// exist (Server › Resources › Error Handling).
const codeResourceNotFound = -32002

// maxListedItems bounds the names kept of each kind.
const maxListedItems = 4096

// itemUse is a request awaiting its answer: a list, or a use of a listed
// item (name set), or an id two requests shared (ambiguous).
type itemUse struct {
	kind      *itemKind
	name      string
	list      bool
	ambiguous bool
	ev        reports.Evidence
}

type listing struct {
	// id is the list request's; ev its answer's.
	id string
	ev reports.Evidence
}

type notFound struct {
	kind     *itemKind
	name     string
	listedBy listing
	id       string
	said     string
	count    int
	evidence []reports.Evidence
}

type listedItems struct {
	asked map[string]itemUse
	// listed are the names the server listed, by kind, with the listing
	// that gave each, until a list_changed for the kind.
	listed map[string]map[string]listing
	found  map[string]*notFound
	order  []string
}

func (c *listedItems) Event(e *wire.Event) {
	switch {
	case e.Type == wire.EventForwarded:
		if id, ok := rewrittenRequest(e, "c2s"); ok {
			if a, taken := c.asked[id]; taken {
				a.ambiguous = true
				c.asked[id] = a
			}
		}
	case e.Dir == "c2s" && e.Kind == "request":
		c.request(e)
	case e.Dir == "s2c" && (e.Kind == "response" || e.Kind == "error"):
		a, ok := c.asked[e.ID]
		if !ok {
			return
		}
		delete(c.asked, e.ID)
		if a.ambiguous {
			return
		}
		if a.list {
			c.record(a.kind, e)
			return
		}
		if said, ok := saysNotFound(a.kind, a.name, e); ok {
			c.notFound(a, said, e)
		}
	case e.Dir == "s2c" && e.Kind == "notification":
		for i := range itemKinds {
			if k := &itemKinds[i]; e.Method == k.changed {
				delete(c.listed, k.kind)
			}
		}
	}
}

func (c *listedItems) request(e *wire.Event) {
	for i := range itemKinds {
		k := &itemKinds[i]
		var a itemUse
		switch e.Method {
		case k.list:
			a = itemUse{kind: k, list: true}
		case k.use:
			b, err := e.Bytes()
			if err != nil {
				return
			}
			name := stringValue(member(member(b, "params"), k.member))
			if _, listed := c.listed[k.kind][name]; !listed {
				return
			}
			a = itemUse{kind: k, name: name, ev: evidenceOf(e)}
		default:
			continue
		}
		if len(c.asked) < maxOpenAsked {
			c.asked[e.ID] = a
		}
		return
	}
}

// record keeps the names a list answer gives.
func (c *listedItems) record(k *itemKind, e *wire.Event) {
	if e.Kind != "response" {
		return
	}
	b, err := e.Bytes()
	if err != nil {
		return
	}
	var entries []map[string]json.RawMessage
	if json.Unmarshal(member(member(b, "result"), k.list[:strings.IndexByte(k.list, '/')]), &entries) != nil {
		return
	}
	if c.listed == nil {
		c.listed = map[string]map[string]listing{}
	}
	names := c.listed[k.kind]
	if names == nil {
		names = map[string]listing{}
		c.listed[k.kind] = names
	}
	for _, entry := range entries {
		name := stringValue(entry[k.member])
		if name == "" || len(names) >= maxListedItems {
			continue
		}
		if _, ok := names[name]; !ok {
			names[name] = listing{id: e.ID, ev: evidenceOf(e)}
		}
	}
}

func (c *listedItems) notFound(a itemUse, said string, e *wire.Event) {
	key := a.kind.kind + "\x00" + a.name
	if c.found == nil {
		c.found = map[string]*notFound{}
	}
	f := c.found[key]
	if f == nil {
		if len(c.found) >= maxViolationKinds {
			return
		}
		f = &notFound{kind: a.kind, name: a.name, listedBy: c.listed[a.kind.kind][a.name], id: e.ID, said: said}
		f.evidence = append(f.evidence, f.listedBy.ev)
		c.found[key] = f
		c.order = append(c.order, key)
	}
	f.count++
	if len(f.evidence) < maxViolationEvidence {
		f.evidence = append(f.evidence, a.ev, evidenceOf(e))
	}
}

func (c *listedItems) Findings() []reports.Finding {
	var out []reports.Finding
	for _, key := range c.order {
		f := c.found[key]
		uses := words.Plural(f.count, "a "+f.kind.use+" of it", fmt.Sprintf("%d %s requests for it", f.count, f.kind.use))
		fd := reports.NewFinding(reports.RuleListedNotFound,
			fmt.Sprintf("the server listed %s %q (%s, id %s), then answered %s (id %s) as one it does not know: %q; a client can only use what the list gives it",
				f.kind.kind, f.name, f.kind.list, f.listedBy.id, uses, f.id, words.Cut(f.said, 200)), f.evidence)
		fd.Request = &reports.Request{ID: f.id, Method: f.kind.use}
		if f.kind.kind == "tool" {
			fd.Request.Tool = f.name
		}
		out = append(out, fd)
	}
	return out
}

// saysNotFound reports whether e, the answer to a use of kind's item
// name, says the item does not exist, and the words it says so with: a
// JSON-RPC error, or a tool result with isError, whose message puts the
// kind, the name and "unknown" or "not found" together. A message about
// something else the item could not find ("file not found" from a tool
// that reads files) names neither the kind nor the item beside those
// words, and is not one.
func saysNotFound(k *itemKind, name string, e *wire.Event) (string, bool) {
	b, err := e.Bytes()
	if err != nil {
		return "", false
	}
	var msg string
	switch e.Kind {
	case "error":
		var env struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &env) != nil {
			return "", false
		}
		if k.kind == "resource" && env.Error.Code == codeResourceNotFound {
			return cmp.Or(env.Error.Message, "-32002"), true
		}
		msg = env.Error.Message
	case "response":
		if k.kind != "tool" {
			return "", false
		}
		var res struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(b, &res) != nil || !res.Result.IsError || len(res.Result.Content) == 0 {
			return "", false
		}
		msg = res.Result.Content[0].Text
	}
	if msg == "" || len(msg) > 4096 {
		return "", false
	}
	q := regexp.QuoteMeta(name)
	kind := regexp.QuoteMeta(k.kind)
	// "Unknown tool: x", "no such prompt 'x'"; "Tool x not found",
	// "tool 'x' does not exist", "Resource x not found"; "Tool not found: x".
	re, err := regexp.Compile(`(?i)(?:unknown|no such|nonexistent|non-existent)\s+` + kind + `\b[\s:'"` + "`" + `]*` + q + `|` +
		`\b` + kind + `\b[\s:'"` + "`" + `]*` + q + `['"` + "`" + `]?\s+(?:not found|does not exist|doesn't exist|is not registered|not registered|is unknown)|` +
		`\b` + kind + `\s+not found\b[\s:'"` + "`" + `]*` + q)
	if err != nil || !re.MatchString(msg) {
		return "", false
	}
	return msg, true
}
