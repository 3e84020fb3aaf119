package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// classifyCase is one row of the table: a frame and what Classify must say
// about it. Raw is filled in by the test (it must be the input itself).
type classifyCase struct {
	name string
	in   string
	want Message
}

const (
	problemJSONRPC   = `"jsonrpc" is not "2.0"`
	problemNotObject = "not a JSON object"
	problemBatch     = "JSON-RPC batch (arrays are not MCP messages)"
	problemEmpty     = "empty line"
	problemEnd       = "not JSON: unexpected end of frame"
	problemTrailing  = "not JSON: data after the top-level value"
	problemDepth     = "not JSON: nested too deeply"
)

// nested returns a response whose result nests arrays so that the frame as a
// whole is levels deep (the top-level object counts as one level).
func nested(levels int) string {
	n := levels - 1
	return `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
}

// bigResponse is a tools/call response whose one text content is n bytes long.
func bigResponse(id string, n int) string {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":`)
	sb.WriteString(id)
	sb.WriteString(`,"result":{"content":[{"type":"text","text":"`)
	// Text with the escapes a real tool result has: quotes, backslashes,
	// newlines, unicode escapes and non-ASCII text.
	chunk := `line of output with \"quotes\", a C:\\path\\to\\file, a tab\t and \u00e9t\u00e9 — ünïcödé ✓\n`
	for sb.Len() < n {
		sb.WriteString(chunk)
	}
	sb.WriteString(`"}],"isError":false}}` + "\n")
	return sb.String()
}

func classifyCases() []classifyCase {
	req := func(id, method string) Message { return Message{Kind: Request, ID: id, Method: method} }
	invalid := func(problem string) Message { return Message{Problem: problem} }
	return []classifyCase{
		// Requests.
		{"request number id", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n", req("1", "tools/list")},
		{"request zero id", `{"jsonrpc":"2.0","id":0,"method":"ping"}`, req("0", "ping")},
		{"request string id", `{"jsonrpc":"2.0","id":"abc-1","method":"ping"}`, req(`"abc-1"`, "ping")},
		{"request empty string id", `{"jsonrpc":"2.0","id":"","method":"ping"}`, req(`""`, "ping")},
		{"request id before jsonrpc", `{"method":"ping","id":5,"jsonrpc":"2.0"}`, req("5", "ping")},
		{"request with params", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","n":[1,2.5,-3e2,true,false,null]}}}`, req("2", "tools/call")},
		{"request spaced out", "{ \"jsonrpc\" : \"2.0\" ,\t\"id\" :\n 3 , \"method\" : \"ping\" }", req("3", "ping")},
		{"request id string with space", `{"jsonrpc":"2.0","id":"a b","method":"ping"}`, req(`"a b"`, "ping")},
		{"request duplicate id last wins", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, req("2", "m")},
		{"request unknown members", `{"jsonrpc":"2.0","id":1,"method":"m","x":{"id":9,"method":"n"},"y":[{"jsonrpc":"1.0"}]}`, req("1", "m")},
		{"request params array", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1,{"_meta":{"progressToken":1}}]}`, req("1", "m")},

		// Notifications.
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}` + "\n",
			Message{Kind: Notification, Method: "notifications/cancelled"}},
		{"notification no params", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
			Message{Kind: Notification, Method: "notifications/tools/list_changed"}},

		// Responses and errors.
		{"response", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` + "\n", Message{Kind: Response, ID: "1"}},
		{"response string id", `{"jsonrpc":"2.0","id":"x","result":{}}`, Message{Kind: Response, ID: `"x"`}},
		{"response null result", `{"jsonrpc":"2.0","id":1,"result":null}`, Message{Kind: Response, ID: "1"}},
		{"error", `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}`, Message{Kind: Error, ID: "7"}},
		{"error null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n", Message{Kind: Error, ID: "null"}},
		{"error string id", `{"jsonrpc":"2.0","id":"r1","error":{"code":-32603,"message":"boom","data":{"trace":["a","b"]}}}`, Message{Kind: Error, ID: `"r1"`}},

		// Eras.
		{"initialize is stateful",
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n",
			Message{Kind: Request, ID: "0", Method: "initialize", Era: Stateful}},
		{"initialized is stateful", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			Message{Kind: Notification, Method: "notifications/initialized", Era: Stateful}},
		{"initialize wins over meta marker",
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			Message{Kind: Request, ID: "0", Method: "initialize", Era: Stateful}},
		{"server/discover is stateless", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`,
			Message{Kind: Request, ID: "1", Method: "server/discover", Era: Stateless}},
		{"meta protocol version is stateless",
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			Message{Kind: Request, ID: "2", Method: "tools/call", Era: Stateless}},
		{"meta protocol version outside _meta is not a marker",
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
			req("2", "tools/call")},
		{"ordinary request has no era", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{}}}`, req("2", "tools/list")},
		{"era read even when jsonrpc is wrong", `{"jsonrpc":"1.0","id":1,"method":"server/discover"}`,
			Message{ID: "1", Method: "server/discover", Era: Stateless, Problem: problemJSONRPC}},

		// Progress tokens.
		{"progress token in request _meta",
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"tok-1"},"name":"slow","arguments":{}}}`,
			Message{Kind: Request, ID: "4", Method: "tools/call", ProgressToken: `"tok-1"`}},
		{"numeric progress token",
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":42}}}`,
			Message{Kind: Request, ID: "4", Method: "tools/call", ProgressToken: "42"}},
		{"progress token and stateless marker together",
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p"}}}`,
			Message{Kind: Request, ID: "4", Method: "tools/call", ProgressToken: `"p"`, Era: Stateless}},
		{"notifications/progress",
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":50,"total":100}}` + "\n",
			Message{Kind: Notification, Method: "notifications/progress", ProgressToken: `"tok-1"`}},
		{"notifications/progress params token wins over _meta",
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"progressToken":"m"},"progressToken":"p","progress":1}}`,
			Message{Kind: Notification, Method: "notifications/progress", ProgressToken: `"p"`}},
		{"params.progressToken of other methods is not a token",
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"progressToken":"x"}}`,
			req("3", "tools/call")},
		{"repeated _meta: the last one counts",
			`{"jsonrpc":"2.0","id":3,"method":"m","params":{"_meta":{"progressToken":1},"_meta":{"progressToken":2}}}`,
			Message{Kind: Request, ID: "3", Method: "m", ProgressToken: "2"}},
		{"repeated _meta: a later one without a token clears it",
			`{"jsonrpc":"2.0","id":3,"method":"m","params":{"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"_meta":{}}}`,
			req("3", "m")},
		{"repeated progressToken: the last one counts",
			`{"jsonrpc":"2.0","id":3,"method":"m","params":{"_meta":{"progressToken":1,"progressToken":"two"}}}`,
			Message{Kind: Request, ID: "3", Method: "m", ProgressToken: `"two"`}},
		{"progress token nested deeper is not a token",
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"_meta":{"progressToken":"x"}}}}`,
			req("3", "tools/call")},

		// Framing and whitespace.
		{"CRLF", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n", req("1", "ping")},
		{"leading and trailing whitespace", " \t {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \t\r\n", req("1", "ping")},
		{"no newline at EOF", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, req("1", "ping")},

		// Method names.
		{"escaped slash in method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`, req("1", "tools/call")},
		{"unicode escape in method", `{"jsonrpc":"2.0","id":1,"method":"\u0070ing"}`, req("1", "ping")},
		{"escaped quote in method", `{"jsonrpc":"2.0","id":1,"method":"a\"b"}`, req("1", `a"b`)},
		{"escaped backslash ends method", `{"jsonrpc":"2.0","id":1,"method":"x\\"}`, req("1", `x\`)},
		{"escaped special method still has era", `{"jsonrpc":"2.0","id":1,"method":"server\/discover"}`,
			Message{Kind: Request, ID: "1", Method: "server/discover", Era: Stateless}},
		{"non-ASCII method", `{"jsonrpc":"2.0","id":1,"method":"outil/é✓"}`, req("1", "outil/é✓")},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, Message{ID: "1", Problem: `"method" is not a string`}},
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null}`, Message{ID: "1", Problem: `"method" is not a string`}},
		{"method case matters", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, Message{ID: "1", Problem: `no "method", "result" or "error"`}},

		// The jsonrpc member.
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, Message{ID: "1", Method: "ping", Problem: problemJSONRPC}},
		{"jsonrpc as a number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, Message{ID: "1", Method: "ping", Problem: problemJSONRPC}},
		{"jsonrpc null", `{"jsonrpc":null,"id":1,"result":{}}`, Message{ID: "1", Problem: problemJSONRPC}},
		{"missing jsonrpc", `{"id":1,"method":"ping"}`, Message{ID: "1", Method: "ping", Problem: problemJSONRPC}},
		{"escaped jsonrpc value", `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, req("1", "ping")},
		{"empty object", `{}`, invalid(problemJSONRPC)},
		{"empty object spaced", "{ \n }\n", invalid(problemJSONRPC)},

		// Shapes that fit no kind.
		{"only jsonrpc", `{"jsonrpc":"2.0"}`, invalid(`no "method", "result" or "error"`)},
		{"id only", `{"jsonrpc":"2.0","id":1}`, Message{ID: "1", Problem: `no "method", "result" or "error"`}},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
			Message{ID: "1", Problem: `response has both "result" and "error"`}},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, invalid(`response has no "id"`)},
		{"error without id", `{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}`, invalid(`response has no "id"`)},
		{"response null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, Message{ID: "null", Problem: "response id is not a string or a number"}},
		{"request null id", `{"jsonrpc":"2.0","id":null,"method":"m"}`, Message{ID: "null", Method: "m", Problem: "request id is not a string or a number"}},
		{"request object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}`, Message{ID: `{"a":1}`, Method: "m", Problem: "request id is not a string or a number"}},
		{"request array id", `{"jsonrpc":"2.0","id":[1],"method":"m"}`, Message{ID: "[1]", Method: "m", Problem: "request id is not a string or a number"}},
		{"error bool id", `{"jsonrpc":"2.0","id":false,"error":{"code":1,"message":"x"}}`, Message{ID: "false", Problem: "error id is not a string, a number or null"}},

		// Not objects.
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]` + "\n", invalid(problemBatch)},
		{"empty batch", `[]`, invalid(problemBatch)},
		{"batch after whitespace", "  [1]", invalid(problemBatch)},
		{"plain text", "hello world\n", invalid(problemNotObject)},
		{"HTTP header", "Content-Length: 42\r\n", invalid(problemNotObject)},
		{"top-level string", `"{\"jsonrpc\":\"2.0\"}"`, invalid(problemNotObject)},
		{"top-level number", `42`, invalid(problemNotObject)},
		{"top-level null", `null`, invalid(problemNotObject)},
		{"byte order mark", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`, invalid(problemNotObject)},
		{"leading form feed is not JSON whitespace", "\f" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`, invalid(problemNotObject)},
		{"trailing vertical tab is not JSON whitespace", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\v\n", invalid(problemTrailing)},
		{"trailing no-break space is not JSON whitespace", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\u00a0", invalid(problemTrailing)},

		// Empty lines.
		{"empty", "", invalid(problemEmpty)},
		{"newline", "\n", invalid(problemEmpty)},
		{"CRLF only", "\r\n", invalid(problemEmpty)},
		{"blanks", " \t \r\n", invalid(problemEmpty)},

		// Broken JSON.
		{"truncated in string", `{"jsonrpc":"2.0","id":1,"method":"pi`, invalid(problemEnd)},
		{"truncated after comma", `{"jsonrpc":"2.0",`, invalid(problemEnd)},
		{"truncated after colon", `{"jsonrpc":`, invalid(problemEnd)},
		{"truncated after value", `{"jsonrpc":"2.0"` + "\n", invalid(problemEnd)},
		{"truncated open brace", "{\n", invalid(problemEnd)},
		{"truncated in array", `{"jsonrpc":"2.0","id":1,"result":[1,2`, invalid(problemEnd)},
		{"truncated literal", `{"jsonrpc":"2.0","id":1,"result":tr`, invalid("not JSON: unexpected 't'")},
		{"truncated escape", `{"jsonrpc":"2.0","id":1,"method":"a\"}`, invalid(problemEnd)},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"}x`, invalid(problemTrailing)},
		{"trailing garbage after newline", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n}", invalid(problemTrailing)},
		{"two objects on a line", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`, invalid(problemTrailing)},
		{"trailing NUL", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\x00", invalid(problemTrailing)},
		{"missing colon", `{"jsonrpc" "2.0"}`, invalid(`not JSON: unexpected '"'`)},
		{"single quotes", `{'jsonrpc':'2.0'}`, invalid(`not JSON: unexpected '''`)},
		{"trailing comma", `{"jsonrpc":"2.0",}`, invalid(`not JSON: unexpected '}'`)},
		{"trailing comma in array", `{"jsonrpc":"2.0","id":1,"result":[1,]}`, invalid(`not JSON: unexpected ']'`)},
		{"leading comma", `{,"jsonrpc":"2.0"}`, invalid(`not JSON: unexpected ','`)},
		{"bare key", `{jsonrpc:"2.0"}`, invalid(`not JSON: unexpected 'j'`)},
		{"number key", `{1:2}`, invalid(`not JSON: unexpected '1'`)},
		{"missing comma", `{"jsonrpc":"2.0" "id":1}`, invalid(`not JSON: unexpected '"'`)},
		{"mismatched bracket", `{"jsonrpc":"2.0","id":1,"result":[}`, invalid(`not JSON: unexpected '}'`)},
		{"NUL between members", "{\"jsonrpc\":\"2.0\"\x00}", invalid("not JSON: unexpected byte 0x00")},
		{"non-ASCII between members", "{\"jsonrpc\":\"2.0\"\xff}", invalid("not JSON: unexpected byte 0xff")},
		{"misspelled literal", `{"jsonrpc":"2.0","id":1,"result":nul}`, invalid("not JSON: unexpected 'n'")},
		{"literal with suffix", `{"jsonrpc":"2.0","id":1,"result":nullx}`, invalid("not JSON: unexpected 'x'")},
		{"capitalised literal", `{"jsonrpc":"2.0","id":1,"result":True}`, invalid("not JSON: unexpected 'T'")},

		// Numbers.
		{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"m"}`, req("-0", "m")},
		{"id 1e5", `{"jsonrpc":"2.0","id":1e5,"method":"m"}`, req("1e5", "m")},
		{"id 1E+5", `{"jsonrpc":"2.0","id":1E+5,"method":"m"}`, req("1E+5", "m")},
		{"id -1.5e-3", `{"jsonrpc":"2.0","id":-1.5e-3,"method":"m"}`, req("-1.5e-3", "m")},
		{"id big", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`, req("123456789012345678901234567890", "m")},
		{"id 01", `{"jsonrpc":"2.0","id":01,"method":"m"}`, invalid("not JSON: unexpected '1'")},
		{"id -01", `{"jsonrpc":"2.0","id":-01,"method":"m"}`, invalid("not JSON: unexpected '1'")},
		{"id +1", `{"jsonrpc":"2.0","id":+1,"method":"m"}`, invalid("not JSON: unexpected '+'")},
		{"id .5", `{"jsonrpc":"2.0","id":.5,"method":"m"}`, invalid("not JSON: unexpected '.'")},
		{"id 1.", `{"jsonrpc":"2.0","id":1.,"method":"m"}`, invalid("not JSON: unexpected ','")},
		{"id 1e", `{"jsonrpc":"2.0","id":1e,"method":"m"}`, invalid("not JSON: unexpected ','")},
		{"id 1e+", `{"jsonrpc":"2.0","id":1e+}`, invalid("not JSON: unexpected '}'")},
		{"id minus alone", `{"jsonrpc":"2.0","id":-,"method":"m"}`, invalid("not JSON: unexpected ','")},
		{"id minus at end", `{"jsonrpc":"2.0","id":-`, invalid(problemEnd)},
		{"id hex", `{"jsonrpc":"2.0","id":0x1,"method":"m"}`, invalid("not JSON: unexpected 'x'")},
		{"id NaN", `{"jsonrpc":"2.0","id":NaN,"method":"m"}`, invalid("not JSON: unexpected 'N'")},

		// Literals.
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"m"}`, Message{ID: "true", Method: "m", Problem: "request id is not a string or a number"}},
		{"literals in params", `{"jsonrpc":"2.0","method":"m","params":{"a":true,"b":false,"c":null,"d":[true,false,null]}}`,
			Message{Kind: Notification, Method: "m"}},

		// Strings with escapes: the scanner must find the right closing quote.
		{"id escaped backslash", `{"jsonrpc":"2.0","id":"a\\","method":"m"}`, req(`"a\\"`, "m")},
		{"id two escaped backslashes", `{"jsonrpc":"2.0","id":"a\\\\","method":"m"}`, req(`"a\\\\"`, "m")},
		{"id escaped quote", `{"jsonrpc":"2.0","id":"a\"b","method":"m"}`, req(`"a\"b"`, "m")},
		{"id backslash then escaped quote", `{"jsonrpc":"2.0","id":"\\\"","method":"m"}`, req(`"\\\""`, "m")},
		{"id only escaped quote", `{"jsonrpc":"2.0","id":"\"","method":"m"}`, req(`"\""`, "m")},
		{"quote-like text in params", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"k":"\\\"}\"{","l":"\\"}}`, req("1", "m")},
		{"key with escaped quote", `{"jsonrpc":"2.0","a\"b":1,"id":1,"method":"m"}`, req("1", "m")},
		{"escaped key", `{"jsonrpc":"2.0","\u0069d":1,"method":"ping"}`, req("1", "ping")},
		{"escaped method key", `{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`, req("1", "ping")},
		{"escaped _meta key", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u005fmeta":{"progress\u0054oken":7}}}`,
			Message{Kind: Request, ID: "1", Method: "m", ProgressToken: "7"}},

		// String contents are not validated: structure decides.
		{"invalid UTF-8 in params", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"text\":\"\xff\xfe\xc3\"}}\n", req("1", "tools/call")},
		{"invalid UTF-8 in method", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xffb\"}", req("1", "a\xffb")},
		{"invalid UTF-8 in id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"result\":{}}", Message{Kind: Response, ID: "\"\xc0\xaf\""}},
		{"raw tab in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"t\":\"a\tb\"}}", req("1", "m")},
		{"unknown escape in string", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"\q"}}`, req("1", "m")},
		{"unknown escape in method", `{"jsonrpc":"2.0","id":1,"method":"\q"}`, Message{ID: "1", Problem: `"method" is not a string`}},

		// Nesting.
		{"nested at the limit", nested(10000), Message{Kind: Response, ID: "1"}},
		{"nested past the limit", nested(10001), invalid(problemDepth)},
		{"nested objects", `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000) + "}", Message{Kind: Response, ID: "1"}},
		{"hostile nesting", `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1<<20), invalid(problemDepth)},
		{"hostile nested objects", strings.Repeat(`{"a":`, 1<<18), invalid(problemDepth)},

		// Size.
		{"huge response", bigResponse("9", 6<<20), Message{Kind: Response, ID: "9"}},
		{"huge request", `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"upload","arguments":{"data":"` +
			strings.Repeat("QUJD", 1<<20) + `"},"_meta":{"progressToken":"up"}}}` + "\n",
			Message{Kind: Request, ID: `"big"`, Method: "tools/call", ProgressToken: `"up"`}},
		{"huge truncated", bigResponse("9", 3<<20)[:3<<20], invalid(problemEnd)},
	}
}

// bytesEqual compares Raw (and any []byte) with bytes.Equal: cmp's default
// element-by-element walk takes seconds on the multi-MiB frames.
var bytesEqual = cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })

func TestClassify(t *testing.T) {
	for _, tc := range classifyCases() {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			orig := bytes.Clone(in)
			want := tc.want
			want.Raw = orig
			got := Classify(in)
			if diff := cmp.Diff(want, got, bytesEqual); diff != "" {
				if len(tc.in) > 4096 {
					// Leave Raw out of the report: it may be megabytes long.
					g, w := got, want
					g.Raw, w.Raw = nil, nil
					diff = cmp.Diff(w, g) + "(Raw left out)\n"
				}
				t.Errorf("Classify(%.200q) mismatch (-want +got):\n%s", tc.in, diff)
			}
			if len(in) > 0 && &got.Raw[0] != &in[0] {
				t.Errorf("Raw is a copy; want the input slice itself")
			}
			if len(got.Raw) != len(in) || cap(got.Raw) != cap(in) {
				t.Errorf("Raw has len %d cap %d; want len %d cap %d", len(got.Raw), cap(got.Raw), len(in), cap(in))
			}
			if !bytes.Equal(in, orig) {
				t.Errorf("Classify modified its input")
			}
		})
	}
}

// TestClassifyAgreesWithEncodingJSON checks the table's frames against the
// same oracle the fuzzer uses, so that a wrong row in the table cannot hide a
// disagreement with encoding/json.
func TestClassifyAgreesWithEncodingJSON(t *testing.T) {
	for _, tc := range classifyCases() {
		t.Run(tc.name, func(t *testing.T) {
			checkClassify(t, []byte(tc.in))
		})
	}
}

func TestClassifyDepthMatchesEncodingJSON(t *testing.T) {
	for _, levels := range []int{1, 2, 9999, 10000, 10001, 10002} {
		in := []byte(nested(levels))
		if levels == 1 {
			in = []byte(`{"jsonrpc":"2.0","id":1,"result":1}`)
		}
		m := Classify(in)
		valid := json.Valid(in)
		if valid != (m.Problem != problemDepth) {
			t.Errorf("%d levels: json.Valid = %v but Classify problem = %q", levels, valid, m.Problem)
		}
	}
}

func TestClassifyDoesNotAllocate(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","a":[1,2,{"b":null}],"_meta":{"progressToken":"tok"}}}` + "\n",
		`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello \"world\""}]}}` + "\n",
		`{"jsonrpc":"2.0","id":"ab","error":{"code":-32601,"message":"Method not found"}}` + "\n",
		bigResponse("12", 64<<10),
	}
	for _, f := range frames {
		in := []byte(f)
		// ID, Method and ProgressToken are strings copied out of the frame,
		// and the "jsonrpc" value is read as one: one allocation each at most,
		// nothing per byte or per member.
		n := testing.AllocsPerRun(100, func() { _ = Classify(in) })
		if n > 4 {
			t.Errorf("Classify(%.80q) made %v allocations; want at most 4", f, n)
		}
	}
}

// jsonWhitespace is what RFC 8259 counts as whitespace between tokens.
const jsonWhitespace = " \t\r\n"

// structuralProblem reports whether p says the frame's JSON structure (rather
// than its JSON-RPC shape) is wrong.
func structuralProblem(p string) bool {
	for _, prefix := range []string{"not JSON", "not a JSON object", "empty", "JSON-RPC batch"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// toValidUTF8 replaces each byte of an invalid UTF-8 sequence with U+FFFD,
// the way encoding/json decodes such bytes in strings.
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		sb.WriteRune(r)
	}
	return sb.String()
}

func compactJSON(t *testing.T, what string, s []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, s); err != nil {
		t.Fatalf("json.Compact(%s %q): %v", what, s, err)
	}
	return buf.String()
}

// stringSyntaxError reports whether an encoding/json syntax error message is
// about the contents of a string, which Classify deliberately does not check.
func stringSyntaxError(msg string) bool {
	for _, where := range []string{"in string literal", "in string escape code", `in \u hexadecimal character escape`} {
		if strings.HasSuffix(msg, where) {
			return true
		}
	}
	return false
}

// checkClassify is the fuzz oracle: properties that must hold for any input.
func checkClassify(t *testing.T, in []byte) {
	t.Helper()
	orig := bytes.Clone(in)
	m := Classify(in)

	// Raw is the input itself, untouched.
	if !bytes.Equal(m.Raw, orig) || len(m.Raw) != len(in) || (len(in) > 0 && &m.Raw[0] != &in[0]) {
		t.Fatalf("Raw = %q; want the input %q itself", m.Raw, orig)
	}
	if !bytes.Equal(in, orig) {
		t.Fatalf("Classify modified its input: %q became %q", orig, in)
	}
	if (m.Kind == Invalid) != (m.Problem != "") {
		t.Fatalf("Kind %v with Problem %q: a problem must go with Invalid and only with it", m.Kind, m.Problem)
	}
	if m.Kind > Error || m.Era > Stateless {
		t.Fatalf("Kind %d, Era %d out of range", m.Kind, m.Era)
	}

	valid := json.Valid(in)
	trimmed := bytes.Trim(in, jsonWhitespace)
	if valid {
		switch {
		case trimmed[0] == '{' && structuralProblem(m.Problem):
			t.Fatalf("valid JSON object classified with problem %q", m.Problem)
		case trimmed[0] == '[' && m.Problem != problemBatch:
			t.Fatalf("valid JSON array classified with problem %q; want %q", m.Problem, problemBatch)
		case trimmed[0] != '{' && trimmed[0] != '[' && m.Problem != problemNotObject:
			t.Fatalf("valid JSON scalar classified with problem %q; want %q", m.Problem, problemNotObject)
		}
	}
	if !structuralProblem(m.Problem) && !valid {
		// The scanner does not look inside strings, so the only frames it may
		// pass that encoding/json rejects are ones with bad string contents: a
		// control byte (tab, CR and LF included: they are whitespace only
		// between tokens), a bad escape, or a non-ASCII byte.
		suspicious := false
		for _, c := range in {
			if c < 0x20 || c == '\\' || c >= 0x80 {
				suspicious = true
				break
			}
		}
		if !suspicious {
			t.Fatalf("Classify passed the structure (problem %q) of invalid JSON with no control, escape or non-ASCII bytes", m.Problem)
		}
		// Sharper: encoding/json must be complaining about a string.
		var v any
		err := json.Unmarshal(in, &v)
		var se *json.SyntaxError
		if !errors.As(err, &se) || !stringSyntaxError(se.Error()) {
			t.Fatalf("Classify passed the structure (problem %q) but encoding/json says %v", m.Problem, err)
		}
	}
	if !valid || trimmed[0] != '{' {
		return
	}

	// A JSON object: everything Classify says must follow from the members
	// encoding/json sees.
	want := expectFromEncodingJSON(t, in)
	got := Message{Kind: m.Kind, Method: toValidUTF8(m.Method), Era: m.Era}
	if m.ID != "" {
		got.ID = compactJSON(t, "ID", []byte(m.ID))
	}
	if m.ProgressToken != "" {
		got.ProgressToken = compactJSON(t, "ProgressToken", []byte(m.ProgressToken))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Classify(%q) (problem %q) disagrees with encoding/json (-json +classify, ids and tokens compacted):\n%s", in, m.Problem, diff)
	}
	if m.Kind == Invalid {
		return
	}

	// A JSON-RPC message: decode its id and method the ordinary way too.
	var ref struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(in, &members); err != nil {
		t.Fatalf("json.Unmarshal into a map: %v", err)
	}
	caseVariant := false
	for k := range members {
		if (strings.EqualFold(k, "id") && k != "id") || (strings.EqualFold(k, "method") && k != "method") {
			caseVariant = true
		}
	}
	if caseVariant {
		// encoding/json matches struct fields case-insensitively but JSON-RPC
		// members are case-sensitive; take the exact members from the map.
		ref.ID = members["id"]
		if raw, ok := members["method"]; ok {
			if err := json.Unmarshal(raw, &ref.Method); err != nil {
				t.Fatalf("method %s: %v", raw, err)
			}
		}
	} else if err := json.Unmarshal(in, &ref); err != nil {
		t.Fatalf("json.Unmarshal into a struct: %v", err)
	}
	switch {
	case len(ref.ID) == 0 && m.ID != "":
		t.Fatalf("ID = %q; encoding/json finds no id", m.ID)
	case len(ref.ID) > 0 && m.ID == "":
		t.Fatalf("ID is empty; encoding/json finds %s", ref.ID)
	case len(ref.ID) > 0 && compactJSON(t, "ref id", ref.ID) != compactJSON(t, "id", []byte(m.ID)):
		t.Fatalf("ID = %s; encoding/json finds %s", m.ID, ref.ID)
	}
	if got := toValidUTF8(m.Method); got != ref.Method {
		t.Fatalf("Method = %q; encoding/json finds %q", m.Method, ref.Method)
	}
}

// expectFromEncodingJSON works out from encoding/json's reading of a valid
// JSON object what Classify should say about it: Kind, and ID and
// ProgressToken compacted. It follows the JSON-RPC 2.0 and MCP rules, not
// Classify's code: members are matched exactly after unescaping, and a
// repeated member counts only the last time it appears.
func expectFromEncodingJSON(t *testing.T, in []byte) Message {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(in, &members); err != nil {
		t.Fatalf("json.Unmarshal into a map: %v", err)
	}
	first := func(raw json.RawMessage) byte {
		if raw = bytes.TrimLeft(raw, jsonWhitespace); len(raw) > 0 {
			return raw[0]
		}
		return 0
	}

	var want Message
	id, hasID := members["id"]
	if hasID {
		want.ID = compactJSON(t, "id", id)
	}
	method, hasMethod := members["method"]
	if hasMethod {
		if first(method) != '"' {
			return want // "method" is not a string
		}
		if err := json.Unmarshal(method, &want.Method); err != nil {
			t.Fatalf("method %s: %v", method, err)
		}
	}

	// Progress token and era, from params.
	var params, meta map[string]json.RawMessage
	if p := members["params"]; first(p) == '{' {
		if err := json.Unmarshal(p, &params); err != nil {
			t.Fatalf("params: %v", err)
		}
		if mt := params["_meta"]; first(mt) == '{' {
			if err := json.Unmarshal(mt, &meta); err != nil {
				t.Fatalf("_meta: %v", err)
			}
		}
	}
	if tok, ok := params["progressToken"]; ok && want.Method == "notifications/progress" {
		want.ProgressToken = compactJSON(t, "params.progressToken", tok)
	} else if tok, ok := meta["progressToken"]; ok {
		want.ProgressToken = compactJSON(t, "_meta.progressToken", tok)
	}
	if _, ok := meta[metaProtocolVersion]; ok {
		want.Era = Stateless
	}
	switch want.Method {
	case "initialize", "notifications/initialized":
		want.Era = Stateful
	case "server/discover":
		want.Era = Stateless
	}

	// Kind.
	var version string
	if v := members["jsonrpc"]; first(v) != '"' || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return want
	}
	_, hasResult := members["result"]
	_, hasError := members["error"]
	idKind := first(id)
	validID := idKind == '"' || idKind == '-' || (idKind >= '0' && idKind <= '9')
	switch {
	case hasMethod && hasID:
		if validID {
			want.Kind = Request
		}
	case hasMethod:
		want.Kind = Notification
	case hasResult && hasError, !hasID:
	case hasResult:
		if validID {
			want.Kind = Response
		}
	case hasError:
		if validID || idKind == 'n' {
			want.Kind = Error
		}
	}
	return want
}

func FuzzClassify(f *testing.F) {
	for _, tc := range classifyCases() {
		if len(tc.in) > 64<<10 {
			continue // keep the seed corpus small enough to mutate quickly
		}
		f.Add([]byte(tc.in))
	}
	f.Add([]byte(bigResponse("1", 4<<10)))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkClassify(t, in)
	})
}

// benchFrames are a typical small request, a progress notification, a
// request of the stateless era, an error, and a tools/call response whose
// result text is about 64 KiB: what a session is made of; and the request
// scripts/bench-relay sends.
func benchFrames(b *testing.B) []struct {
	name  string
	frame []byte
} {
	small := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_weather",` +
		`"arguments":{"city":"Lisbon","units":"metric","days":3,"hourly":false,"lang":"pt-PT" },` +
		`"_meta":{"progressToken":"p-12"}}}` + "\n")
	if len(small) != 200 {
		b.Fatalf("small frame is %d bytes; want 200", len(small))
	}
	large := []byte(bigResponse("12", 64<<10))
	for _, f := range [][]byte{small, large} {
		if m := Classify(f); m.Kind != Request && m.Kind != Response {
			b.Fatalf("benchmark frame classified as %v (%s)", m.Kind, m.Problem)
		}
	}

	return []struct {
		name  string
		frame []byte
	}{
		{"200B", small},
		{"progress", []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-12","progress":3,"total":10,"message":"step 3"}}` + "\n")},
		{"stateless", []byte(`{"jsonrpc":"2.0","id":"c-7","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}` + "\n")},
		{"error", []byte(`{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"Unknown tool: get_wether","data":{"tool":"get_wether"}}}` + "\n")},
		{"64KiB", large},
		// What scripts/bench-relay sends (its ids run to 199,999), for the
		// classifier's share of that run.
		{"bench-relay", []byte(`{"jsonrpc":"2.0","id":123456,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 120) + `"}}}` + "\n")},
	}
}

var sinkMessage Message

func BenchmarkClassify(b *testing.B) {
	for _, bf := range benchFrames(b) {
		b.Run(bf.name, func(b *testing.B) {
			b.SetBytes(int64(len(bf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				sinkMessage = Classify(bf.frame)
			}
		})
	}
}

// BenchmarkJSONUnmarshalBaseline decodes the same frames with encoding/json
// into the smallest struct that would answer the same questions, for scale.
func BenchmarkJSONUnmarshalBaseline(b *testing.B) {
	type frame struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
	}
	for _, bf := range benchFrames(b) {
		b.Run(bf.name, func(b *testing.B) {
			b.SetBytes(int64(len(bf.frame)))
			b.ReportAllocs()
			for b.Loop() {
				var f frame
				if err := json.Unmarshal(bf.frame, &f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
