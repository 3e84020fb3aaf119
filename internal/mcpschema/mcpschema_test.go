package mcpschema

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSourcesMatchVendoredFiles keeps the vendored schemas as the
// specification published them: a schema edited by hand, or refreshed
// without scripts/update-mcp-schemas, fails here.
func TestSourcesMatchVendoredFiles(t *testing.T) {
	raw, err := schemaFS.ReadFile("schemas/SOURCES")
	if err != nil {
		t.Fatal(err)
	}
	commit := regexp.MustCompile(`^[0-9a-f]{40}$`)
	var listed []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			t.Errorf("SOURCES:%d: want revision, repository, path, commit, sha256; got %q", n, line)
			continue
		}
		rev, repo, path, at, sum := f[0], f[1], f[2], f[3], f[4]
		listed = append(listed, rev)
		if repo != "github.com/modelcontextprotocol/modelcontextprotocol" || path != "schema/"+rev+"/schema.json" || !commit.MatchString(at) {
			t.Errorf("SOURCES:%d: %q is not where scripts/update-mcp-schemas takes %s from", n, line, rev)
		}
		data, err := schemaFS.ReadFile("schemas/" + rev + "/schema.json")
		if err != nil {
			t.Errorf("SOURCES:%d: %v", n, err)
			continue
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("schemas/%s/schema.json has sha256 %x, SOURCES says %s: restore it, or refresh it with scripts/update-mcp-schemas", rev, got, sum)
		}
	}
	if diff := cmp.Diff(listed, Revisions()); diff != "" {
		t.Errorf("SOURCES lists other revisions than schemas/ holds (-SOURCES +schemas/):\n%s", diff)
	}
}

func TestFor(t *testing.T) {
	all := Revisions()
	oldest, newest := all[0], all[len(all)-1]
	type got struct {
		Name  string
		Exact bool
	}
	for _, tc := range []struct {
		version string
		want    got
	}{
		{"2024-11-05", got{"2024-11-05", true}},
		{"2025-03-26", got{"2025-03-26", true}},
		{"2025-06-18", got{"2025-06-18", true}},
		{"2025-11-25", got{"2025-11-25", true}},
		{"2026-07-28", got{"2026-07-28", true}},
		{"2025-04-01", got{"2025-03-26", false}},
		{"2025-11-24", got{"2025-06-18", false}},
		{"2024-10-07", got{oldest, false}},
		{"", got{oldest, false}},
		{"2099-01-01", got{newest, false}},
	} {
		r, exact := For(tc.version)
		if diff := cmp.Diff(tc.want, got{r.Name(), exact}); diff != "" {
			t.Errorf("For(%q) (-want +got):\n%s", tc.version, diff)
		}
	}
}

// TestEveryRequestHasResult checks the mapping from request to result,
// read from each schema: every request method maps to definitions that
// exist, and the ones not named by the convention XRequest → XResult are
// the ones reviewed here.
func TestEveryRequestHasResult(t *testing.T) {
	unconventional := map[string]map[string][]string{}
	for _, name := range Revisions() {
		r, _ := For(name)
		r.load()
		if r.err != nil {
			t.Fatal(r.err)
		}
		defs := definitions(t, name)
		reqs, nots := methodDefinitions(defs)
		for method, names := range reqs {
			res := r.resultDefs[method]
			if len(res) == 0 || r.requests[method] == nil || r.results[method] == nil {
				t.Errorf("%s: request %s (%v) has no result", name, method, names)
			}
			for _, d := range res {
				if defs[d] == nil {
					t.Errorf("%s: the result of %s is %s, which the schema does not define", name, method, d)
				}
			}
			if want := strings.TrimSuffix(names[0], "Request") + "Result"; len(res) != 1 || res[0] != want {
				if unconventional[name] == nil {
					unconventional[name] = map[string][]string{}
				}
				unconventional[name][method] = res
			}
		}
		for method := range nots {
			if r.notifications[method] == nil {
				t.Errorf("%s: notification %s not compiled", name, method)
			}
		}
		for def, v := range defs {
			d, _ := v.(map[string]any)
			props, _ := d["properties"].(map[string]any)
			m, _ := props["method"].(map[string]any)
			if method, _ := m["const"].(string); method != "" && !r.Known(method) {
				t.Errorf("%s: %s has method %s, which Known does not know", name, def, method)
			}
		}
	}
	// Requests the schema gives no result of their own are answered by
	// EmptyResult; 2025-11-25's task-augmented ones may get a task
	// instead; 2026-07-28 has whole responses, XResultResponse.
	want := map[string]map[string][]string{
		"2024-11-05": {"ping": {"EmptyResult"}, "logging/setLevel": {"EmptyResult"}, "resources/subscribe": {"EmptyResult"}, "resources/unsubscribe": {"EmptyResult"}},
		"2025-03-26": {"ping": {"EmptyResult"}, "logging/setLevel": {"EmptyResult"}, "resources/subscribe": {"EmptyResult"}, "resources/unsubscribe": {"EmptyResult"}},
		"2025-06-18": {"ping": {"EmptyResult"}, "logging/setLevel": {"EmptyResult"}, "resources/subscribe": {"EmptyResult"}, "resources/unsubscribe": {"EmptyResult"}},
		"2025-11-25": {
			"ping": {"EmptyResult"}, "logging/setLevel": {"EmptyResult"}, "resources/subscribe": {"EmptyResult"}, "resources/unsubscribe": {"EmptyResult"},
			"tools/call":             {"CallToolResult", "CreateTaskResult"},
			"sampling/createMessage": {"CreateMessageResult", "CreateTaskResult"},
			"elicitation/create":     {"ElicitResult", "CreateTaskResult"},
		},
		"2026-07-28": {
			"completion/complete":      {"CompleteResultResponse"},
			"prompts/get":              {"GetPromptResultResponse"},
			"prompts/list":             {"ListPromptsResultResponse"},
			"resources/list":           {"ListResourcesResultResponse"},
			"resources/read":           {"ReadResourceResultResponse"},
			"resources/templates/list": {"ListResourceTemplatesResultResponse"},
			"server/discover":          {"DiscoverResultResponse"},
			"subscriptions/listen":     {"SubscriptionsListenResultResponse"},
			"tools/call":               {"CallToolResultResponse"},
			"tools/list":               {"ListToolsResultResponse"},
		},
	}
	if diff := cmp.Diff(want, unconventional); diff != "" {
		t.Errorf("results not named XResult after XRequest (-want +got):\n%s", diff)
	}
}

func definitions(t *testing.T, rev string) map[string]any {
	t.Helper()
	data, err := schemaFS.ReadFile("schemas/" + rev + "/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if defs, ok := doc["$defs"].(map[string]any); ok {
		return defs
	}
	defs, _ := doc["definitions"].(map[string]any)
	return defs
}

// era fills a message template for a revision: {R} the fields every
// result carries, {L} those of a list result, {M} a request's params
// _meta. The stateless revision (the one with server/discover) wants them;
// the earlier ones have none.
func era(r *Revision) *strings.Replacer {
	if r.Known("server/discover") {
		return strings.NewReplacer(
			"{R}", `"resultType":"complete",`,
			"{L}", `"cacheScope":"private","ttlMs":0,`,
			"{M}", `"_meta":{"io.modelcontextprotocol/protocolVersion":"`+r.Name()+`","io.modelcontextprotocol/clientCapabilities":{}},`)
	}
	return strings.NewReplacer("{R}", "", "{L}", "", "{M}", "")
}

type fixture struct {
	kind, method, raw string
}

func (m fixture) check(r *Revision) []Problem {
	raw := []byte(era(r).Replace(m.raw))
	switch m.kind {
	case "request":
		return r.Request(m.method, raw)
	case "notification":
		return r.Notification(m.method, raw)
	case "result":
		return r.Result(m.method, raw)
	case "error":
		return r.Error(raw)
	}
	panic("unknown kind " + m.kind)
}

var wellFormed = []fixture{
	{"result", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"everything","version":"1.2.0"},"instructions":"be nice"}}`},
	{"request", "initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"mcpchaos","version":"0.1"}}}`},
	{"notification", "notifications/initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{"result", "server/discover", `{"jsonrpc":"2.0","id":1,"result":{{R}{L}"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}}`},
	{"result", "tools/list", `{"jsonrpc":"2.0","id":2,"result":{{R}{L}"tools":[{"name":"echo","description":"Echoes its input","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}],"nextCursor":"2"}}`},
	{"request", "tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{M}"cursor":"1"}}`},
	{"request", "tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{M}"name":"echo","arguments":{"text":"hi","n":9007199254740993}}}`},
	{"result", "tools/call", `{"jsonrpc":"2.0","id":3,"result":{{R}"content":[{"type":"text","text":"hi"}],"isError":false}}`},
	{"result", "tools/call", `{"jsonrpc":"2.0","id":"3","result":{{R}"content":[],"isError":true,"_meta":{}}}`},
	{"notification", "notifications/progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t-1","progress":0.5,"total":1}}`},
	{"notification", "notifications/progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3}}`},
	{"notification", "notifications/cancelled", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"timeout"}}`},
	{"notification", "notifications/message", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"any":"thing"}}}`},
	{"request", "ping", `{"jsonrpc":"2.0","id":"p","method":"ping"}`},
	{"result", "ping", `{"jsonrpc":"2.0","id":"p","result":{}}`},
	{"error", "", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`},
	{"error", "", `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad params","data":{"field":"name"}}}`},
	// 2025-11-25: a task-augmented call is answered with its task.
	{"result", "tasks/get", `{"jsonrpc":"2.0","id":8,"result":{"taskId":"t","status":"working","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":null}}`},
	// 2026-07-28: a subscription's stream is opened.
	{"result", "subscriptions/listen", `{"jsonrpc":"2.0","id":9,"result":{{R}"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}`},
}

func TestWellFormedMessagesPass(t *testing.T) {
	for _, name := range Revisions() {
		r, _ := For(name)
		checked := 0
		for _, m := range wellFormed {
			if m.method != "" && !r.Known(m.method) {
				continue
			}
			checked++
			if got := m.check(r); got != nil {
				t.Errorf("%s: %s %s %s:\n%v", name, m.method, m.kind, era(r).Replace(m.raw), got)
			}
		}
		if checked < 10 {
			t.Errorf("%s: only %d well-formed messages apply to it; add some for its methods", name, checked)
		}
	}
}

func TestTaskAndInputResultsPass(t *testing.T) {
	task := `{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t","status":"working","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":60000}}}`
	r, _ := For("2025-11-25")
	if got := r.Result("tools/call", []byte(task)); got != nil {
		t.Errorf("2025-11-25: a task-augmented tools/call result: %v", got)
	}
	input := `{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"mode":"form","message":"Which?","requestedSchema":{"type":"object","properties":{"x":{"type":"string"}}}}}}}}`
	r, _ = For("2026-07-28")
	if got := r.Result("tools/call", []byte(input)); got != nil {
		t.Errorf("2026-07-28: a tools/call that asks for input: %v", got)
	}
}

func TestBrokenMessagesFail(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    fixture
		want Problem // the first problem; an empty Message is not compared
	}{
		{"a tool without a name",
			fixture{"result", "tools/list", `{"jsonrpc":"2.0","id":2,"result":{{R}{L}"tools":[{"inputSchema":{"type":"object"}}]}}`},
			Problem{"/result/tools/0", "required", "missing property 'name'"}},
		{"a tool whose inputSchema is not an object schema",
			fixture{"result", "tools/list", `{"jsonrpc":"2.0","id":2,"result":{{R}{L}"tools":[{"name":"echo","inputSchema":{"type":"string"}}]}}`},
			Problem{"/result/tools/0/inputSchema/type", "const", "value must be 'object'"}},
		{"content of type txt",
			fixture{"result", "tools/call", `{"jsonrpc":"2.0","id":3,"result":{{R}"content":[{"type":"txt","text":"hi"}]}}`},
			Problem{"/result/content/0/type", "const", ""}},
		{"content that is not an array",
			fixture{"result", "tools/call", `{"jsonrpc":"2.0","id":3,"result":{{R}"content":"hi"}}`},
			Problem{"/result/content", "type", "got string, want array"}},
		{"progress without its token",
			fixture{"notification", "notifications/progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`},
			Problem{"/params", "required", "missing property 'progressToken'"}},
		{"a progress token that is a float",
			fixture{"notification", "notifications/progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1.5,"progress":1}}`},
			Problem{"/params/progressToken", "type", "got number, want integer or string"}},
		{"initialize without protocolVersion",
			fixture{"result", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`},
			Problem{"/result", "required", "missing property 'protocolVersion'"}},
		{"tools/call without params",
			fixture{"request", "tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call"}`},
			Problem{"", "required", "missing property 'params'"}},
		{"tools/call with null params",
			fixture{"request", "tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":null}`},
			Problem{"/params", "type", "got null, want object"}},
		{"tools/call with params an array",
			fixture{"request", "tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["echo"]}`},
			Problem{"/params", "type", "got array, want object"}},
		{"tools/call whose name is a number",
			fixture{"request", "tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{M}"name":7}}`},
			Problem{"/params/name", "type", "got number, want string"}},
		{"a request for another method",
			fixture{"request", "tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{M}"name":"echo"}}`},
			Problem{"/method", "const", "value must be 'tools/call'"}},
		{"JSON-RPC 1.0",
			fixture{"request", "tools/call", `{"jsonrpc":"1.0","id":3,"method":"tools/call","params":{{M}"name":"echo"}}`},
			Problem{"/jsonrpc", "const", "value must be '2.0'"}},
		{"an id that is an object",
			fixture{"result", "tools/call", `{"jsonrpc":"2.0","id":{},"result":{{R}"content":[]}}`},
			Problem{"/id", "type", "got object, want integer or string"}},
		{"an error code that is a string",
			fixture{"error", "", `{"jsonrpc":"2.0","id":5,"error":{"code":"-32601","message":"Method not found"}}`},
			Problem{"/error/code", "type", "got string, want integer"}},
		{"an error code that is not an integer",
			fixture{"error", "", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601.5,"message":"Method not found"}}`},
			Problem{"/error/code", "type", "got number, want integer"}},
		{"not JSON",
			fixture{"result", "tools/call", `{"jsonrpc":"2.0","id":3,"result":`},
			Problem{"", "json", "not JSON: unexpected EOF"}},
		{"two JSON values",
			fixture{"error", "", `{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}} {}`},
			Problem{"", "json", "not JSON: invalid character after top-level value"}},
		{"nothing",
			fixture{"notification", "notifications/progress", ``},
			Problem{"", "json", "not JSON: EOF"}},
	} {
		for _, name := range Revisions() {
			r, _ := For(name)
			if tc.m.method != "" && !r.Known(tc.m.method) {
				continue
			}
			got := tc.m.check(r)
			if len(got) == 0 {
				t.Errorf("%s: %s: no problem found", name, tc.name)
				continue
			}
			if len(got) > maxProblems {
				t.Errorf("%s: %s: %d problems, more than %d", name, tc.name, len(got), maxProblems)
			}
			first := got[0]
			if tc.want.Message == "" {
				first.Message = ""
			}
			if diff := cmp.Diff(tc.want, first); diff != "" {
				t.Errorf("%s: %s: first problem (-want +got):\n%s\nall: %v", name, tc.name, diff, got)
			}
		}
	}
}

// TestProblemList pins how a message's problems are put: the deepest
// first, the alternatives of an anyOf said once, a required property
// said once, at most maxProblems.
func TestProblemList(t *testing.T) {
	for _, tc := range []struct {
		rev, method, raw string
		want             []string
	}{
		{"2025-06-18", "tools/call", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"txt","text":"hi"}]}}`, []string{
			"/result/content/0/type: value must be one of 'text', 'image', 'audio', 'resource_link', 'resource'",
			"/result/content/0: missing properties 'data', 'mimeType'",
			"/result/content/0: missing properties 'name', 'uri'",
			"/result/content/0: missing property 'resource'",
		}},
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, []string{
			"/result: missing properties 'cacheScope', 'resultType', 'ttlMs'",
		}},
		{"2025-11-25", "tools/list", `{"jsonrpc":"2.0","id":2,"result":{"tools":[{},{},{},{},{},{},{}]}}`, []string{
			"/result/tools/0: missing properties 'inputSchema', 'name'",
			"/result/tools/1: missing properties 'inputSchema', 'name'",
			"/result/tools/2: missing properties 'inputSchema', 'name'",
			"/result/tools/3: missing properties 'inputSchema', 'name'",
			"/result/tools/4: missing properties 'inputSchema', 'name'",
		}},
		{"2024-11-05", "tools/call", `[]`, []string{
			"(root): got array, want object",
		}},
	} {
		r, _ := For(tc.rev)
		var got []string
		for _, p := range r.Result(tc.method, []byte(tc.raw)) {
			got = append(got, p.String())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s %s (-want +got):\n%s", tc.rev, tc.method, tc.raw, diff)
		}
	}
}

// TestUnknownMethodsAreNotJudged: a method the revision does not define
// is the judge's business; the schema has nothing to say about it.
func TestUnknownMethodsAreNotJudged(t *testing.T) {
	for _, tc := range []struct {
		rev, kind, method string
	}{
		{"2025-11-25", "request", "x/custom"},
		{"2025-11-25", "result", "x/custom"},
		{"2025-11-25", "notification", "notifications/x"},
		{"2025-11-25", "notification", "tools/call"}, // a request, not a notification
		{"2025-11-25", "request", "notifications/progress"},
		{"2024-11-05", "request", "elicitation/create"}, // from 2025-06-18 on
		{"2026-07-28", "result", "ping"},                // gone in the stateless revision
	} {
		r, _ := For(tc.rev)
		if got := (fixture{tc.kind, tc.method, "not even JSON"}).check(r); got != nil {
			t.Errorf("%s: %s %s: %v, want no problems", tc.rev, tc.kind, tc.method, got)
		}
	}
	for _, tc := range []struct {
		rev, method string
		known       bool
	}{
		{"2025-11-25", "x/custom", false},
		{"2024-11-05", "elicitation/create", false},
		{"2025-06-18", "elicitation/create", true},
		{"2025-06-18", "tasks/get", false},
		{"2025-11-25", "tasks/get", true},
		{"2026-07-28", "tasks/get", false},
		{"2026-07-28", "initialize", false},
		{"2026-07-28", "ping", false},
		{"2026-07-28", "server/discover", true},
		{"2026-07-28", "notifications/cancelled", true},
		{"2024-11-05", "notifications/progress", true},
		{"2024-11-05", "ping", true},
	} {
		if r, _ := For(tc.rev); r.Known(tc.method) != tc.known {
			t.Errorf("%s: Known(%q) = %v, want %v", tc.rev, tc.method, !tc.known, tc.known)
		}
	}
}

// TestConcurrentFirstUse checks the lazy compile under the race detector.
func TestConcurrentFirstUse(t *testing.T) {
	r := &Revision{name: "2025-11-25"}
	msg := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"txt","text":"hi"}]}}`)
	var wg sync.WaitGroup
	got := make([][]Problem, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = r.Result("tools/call", msg)
		}()
	}
	wg.Wait()
	for i := range got {
		if diff := cmp.Diff(got[0], got[i]); diff != "" || len(got[i]) == 0 {
			t.Errorf("goroutine %d (-first +got):\n%s", i, diff)
		}
	}
}

func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{"/result/tools/0/inputSchema/type", "const", "value must be 'object'"}, "/result/tools/0/inputSchema/type: value must be 'object'"},
		{Problem{"", "json", "not JSON: EOF"}, "(root): not JSON: EOF"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
	if got := pointer([]string{"result", "a/b", "m~n"}); got != "/result/a~1b/m~0n" {
		t.Errorf("pointer escapes: got %q", got)
	}
}

var benchSink []Problem

func BenchmarkResultToolsCall(b *testing.B) {
	r, _ := For("2025-11-25")
	msg := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"The weather in Paris is 18°C and cloudy."},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"structuredContent":{"temperature":18,"conditions":"cloudy"},"isError":false}}`)
	if p := r.Result("tools/call", msg); p != nil {
		b.Fatal(p)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchSink = r.Result("tools/call", msg)
	}
}

func BenchmarkRequestToolsCall(b *testing.B) {
	r, _ := For("2025-11-25")
	msg := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Paris","units":"metric"},"_meta":{"progressToken":"p-42"}}}`)
	if p := r.Request("tools/call", msg); p != nil {
		b.Fatal(p)
	}
	b.ReportAllocs()
	for b.Loop() {
		benchSink = r.Request("tools/call", msg)
	}
}

func ExampleRevision_Result() {
	r, _ := For("2025-06-18")
	for _, p := range r.Result("tools/list", []byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"string"}}]}}`)) {
		fmt.Println(p)
	}
	// Output:
	// /result/tools/0/inputSchema/type: value must be 'object'
}
