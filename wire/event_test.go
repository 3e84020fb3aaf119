package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEventRawRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		frame  []byte
		base64 bool // whether SetRaw must fall back to raw_b64
	}{
		{"ASCII JSON line", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"), false},
		{"UTF-8 text", []byte(`{"jsonrpc":"2.0","method":"m","params":{"t":"été ✓ 日本 🎉"}}` + "\n"), false},
		{"HTML-sensitive and separator characters", []byte("<a href=\"x&y\">\u2028\u2029</a>\n"), false},
		{"escapes kept verbatim", []byte(`{"t":"a\"b\\c\u00e9\n"}` + "\n"), false},
		{"CRLF line", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n"), false},
		{"control bytes", []byte("\x00\x01\x1f\x7f\t\r\n"), false},
		{"invalid UTF-8", []byte("{\"t\":\"\xff\xfe\xc3\"}\n"), true},
		{"truncated multi-byte rune", []byte("caf\xc3"), true},
		{"UTF-8 encoded surrogate", []byte("\xed\xa0\x80"), true},
		{"only a NUL", []byte{0}, false},
		{"empty frame", []byte{}, false},
		{"nil frame", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Event{Seq: 3, T: 42, Type: EventReceived}
			e.SetRaw(tc.frame)
			if e.Size != len(tc.frame) {
				t.Errorf("Size = %d; want %d", e.Size, len(tc.frame))
			}
			if got := e.RawBase64 != ""; got != tc.base64 {
				t.Errorf("stored as base64 = %v (Raw %q, RawBase64 %q); want %v", got, e.Raw, e.RawBase64, tc.base64)
			}
			if tc.base64 && e.Raw != "" {
				t.Errorf("Raw = %q; want it empty when the bytes are in RawBase64", e.Raw)
			}

			line, err := e.MarshalLine()
			if err != nil {
				t.Fatalf("MarshalLine: %v", err)
			}
			if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
				t.Fatalf("MarshalLine = %q; want one line ending in a newline", line)
			}
			if !json.Valid(line) {
				t.Fatalf("MarshalLine = %q is not JSON", line)
			}

			var back Event
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatalf("json.Unmarshal(%q): %v", line, err)
			}
			if diff := cmp.Diff(e, back); diff != "" {
				t.Errorf("event after a round trip (-want +got):\n%s", diff)
			}
			got, err := back.Bytes()
			if err != nil {
				t.Fatalf("Bytes: %v", err)
			}
			if !bytes.Equal(got, tc.frame) {
				t.Errorf("Bytes() = %q; want %q", got, tc.frame)
			}
		})
	}
}

// TestEventSetRawReplaces reuses one Event for frames of both encodings: each
// SetRaw must replace what the previous one stored.
func TestEventSetRawReplaces(t *testing.T) {
	frames := [][]byte{
		[]byte("bad \xff\n"),
		[]byte("good\n"),
		[]byte("bad again \xfe\n"),
		{},
		[]byte("\xc3"),
		[]byte("last ✓\n"),
	}
	var e Event
	for i, f := range frames {
		e.SetRaw(f)
		got, err := e.Bytes()
		if err != nil {
			t.Fatalf("frame %d: Bytes: %v", i, err)
		}
		if !bytes.Equal(got, f) {
			t.Errorf("frame %d: after SetRaw(%q), Bytes() = %q", i, f, got)
		}
		if e.Size != len(f) {
			t.Errorf("frame %d: Size = %d; want %d", i, e.Size, len(f))
		}
		if e.Raw != "" && e.RawBase64 != "" {
			t.Errorf("frame %d: both Raw %q and RawBase64 %q are set", i, e.Raw, e.RawBase64)
		}
	}
}

func TestEventBytesBadBase64(t *testing.T) {
	e := Event{RawBase64: "not base64!"}
	if _, err := e.Bytes(); err == nil {
		t.Errorf("Bytes() of a corrupt raw_b64 returned no error")
	}
}

func TestEventSetMessage(t *testing.T) {
	tests := []struct {
		name  string
		dir   Direction
		frame string
		want  Event
	}{
		{
			name:  "request with progress token",
			dir:   ToServer,
			frame: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"p1"}}}` + "\n",
			want: Event{Dir: "c2s", Kind: "request", ID: "4", Method: "tools/call", ProgressToken: `"p1"`,
				Raw: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"p1"}}}` + "\n"},
		},
		{
			name:  "initialize",
			dir:   ToServer,
			frame: `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}` + "\r\n",
			want: Event{Dir: "c2s", Kind: "request", ID: `"init"`, Method: "initialize", Era: "stateful",
				Raw: `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}` + "\r\n"},
		},
		{
			name:  "response",
			dir:   ToClient,
			frame: `{"jsonrpc":"2.0","id":4,"result":{}}`,
			want:  Event{Dir: "s2c", Kind: "response", ID: "4", Raw: `{"jsonrpc":"2.0","id":4,"result":{}}`},
		},
		{
			name:  "error with null id",
			dir:   ToClient,
			frame: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			want: Event{Dir: "s2c", Kind: "error", ID: "null",
				Raw: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		},
		{
			name:  "stateless notification",
			dir:   ToClient,
			frame: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			want: Event{Dir: "s2c", Kind: "notification", Method: "notifications/progress", ProgressToken: "7", Era: "stateless",
				Raw: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		},
		{
			name:  "invalid UTF-8 garbage",
			dir:   ToClient,
			frame: "oops \xff\n",
			want:  Event{Dir: "s2c", Kind: "invalid", Problem: "not a JSON object", RawBase64: "b29wcyD/Cg=="},
		},
		{
			name:  "wrong version keeps id and method",
			dir:   ToServer,
			frame: `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
			want: Event{Dir: "c2s", Kind: "invalid", ID: "1", Method: "ping", Problem: `"jsonrpc" is not "2.0"`,
				Raw: `{"jsonrpc":"1.0","id":1,"method":"ping"}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Classify([]byte(tc.frame))
			e := Event{Seq: 9, T: 100, Type: EventReceived}
			e.SetMessage(tc.dir, &m)
			want := tc.want
			want.Seq, want.T, want.Type, want.Size = 9, 100, EventReceived, len(tc.frame)
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("SetMessage (-want +got):\n%s", diff)
			}
			b, err := e.Bytes()
			if err != nil || string(b) != tc.frame {
				t.Errorf("Bytes() = %q, %v; want %q", b, err, tc.frame)
			}
		})
	}
}

// TestEventLineShape pins the JSON names of the transcript, which are a
// contract with the judge: fields that do not apply are left out.
func TestEventLineShape(t *testing.T) {
	m := Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	e := Event{Seq: 1, T: 2, Type: EventReceived}
	e.SetMessage(ToServer, &m)
	line, err := e.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"t_us":2,"type":"received","dir":"c2s","kind":"request","id":"1","method":"ping","size":41,"message":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n"
	if diff := cmp.Diff(want, string(line)); diff != "" {
		t.Errorf("MarshalLine (-want +got):\n%s", diff)
	}

	// A frame that is not a lone object line keeps its bytes as a string.
	m = Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r\n"))
	e = Event{Seq: 1, T: 2, Type: EventReceived}
	e.SetMessage(ToServer, &m)
	line, _ = e.MarshalLine()
	want = `{"seq":1,"t_us":2,"type":"received","dir":"c2s","kind":"request","id":"1","method":"ping","size":42,"raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"}` + "\n"
	if diff := cmp.Diff(want, string(line)); diff != "" {
		t.Errorf("MarshalLine of a CRLF line (-want +got):\n%s", diff)
	}

	var empty Event
	line, err = empty.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(line), `{"seq":0,"t_us":0,"type":""}`+"\n"; got != want {
		t.Errorf("zero Event MarshalLine = %q; want %q", got, want)
	}
}

// A frame Classify reads as a message is stored as the message member when
// that can give its bytes back exactly, and as a string otherwise: every
// line must be JSON that encoding/json reads back to the frame's bytes.
func TestMessageMemberKeepsEveryByte(t *testing.T) {
	tests := []struct {
		name    string
		frame   string
		message bool
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}` + "\n", true},
		{"escapes", `{"jsonrpc":"2.0","id":"a\"b","result":{"t":"x\\y\n\t\/\b\f\r\u00e9\uD83D\uDE00"}}` + "\n", true},
		{"UTF-8 and separators", "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"t\":\"été 日本 🎉 \u2028\u2029 <&>\"}}\n", true},
		{"spaces inside", `{ "jsonrpc" : "2.0", "id" : 1, "result" : { } }` + "\n", true},
		{"CRLF", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n", false},
		{"no newline", `{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{"leading space", ` {"jsonrpc":"2.0","id":1,"result":{}}` + "\n", false},
		{"trailing space", `{"jsonrpc":"2.0","id":1,"result":{}} ` + "\n", false},
		{"tab between tokens", "{\"jsonrpc\":\"2.0\",\t\"id\":1,\"result\":{}}\n", false},
		{"control byte in a string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"a\x01b\"}}\n", false},
		{"unknown escape", `{"jsonrpc":"2.0","id":1,"result":{"t":"a\qb"}}` + "\n", false},
		{"short unicode escape", `{"jsonrpc":"2.0","id":1,"result":{"t":"\u12"}}` + "\n", false},
		{"escape at the end of a word", `{"jsonrpc":"2.0","id":1,"result":{"t":"1234567\u00zz"}}` + "\n", false},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\xff\"}}\n", false},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"result":{}}` + "\n", false},
		{"not JSON", `{"jsonrpc":"2.0","id":1,` + "\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := eventLine(t, []byte(tc.frame))
			if got := bytes.Contains(line, []byte(`"message":`)); got != tc.message {
				t.Errorf("stored as the message member = %v; want %v\n%s", got, tc.message, line)
			}
		})
	}
}

// eventLine encodes frame as a received event, and fails t unless the line
// is JSON that decodes back to the frame's bytes.
func eventLine(t *testing.T, frame []byte) []byte {
	t.Helper()
	m := Classify(frame)
	e := Event{Seq: 1, T: 2, Type: EventReceived}
	e.SetMessage(ToClient, &m)
	line := e.AppendLine(nil)
	for _, dir := range []Direction{ToClient, ToServer} {
		// The relay's way, straight from the Message, must write the same.
		e.Dir = dir.String()
		if got, want := AppendReceivedBody(nil, dir, &m), e.AppendBody(nil); !bytes.Equal(got, want) {
			t.Fatalf("frame %q: AppendReceivedBody wrote\n%s\nwhere the event's AppendBody writes\n%s", frame, got, want)
		}
	}
	e.Dir = ToClient.String()
	roundTrip(t, line, frame)
	// The same frame in an HTTP exchange, where frames have no newline.
	e.Exchange = 4
	roundTrip(t, e.AppendLine(nil), frame)
	return line
}

// roundTrip fails t unless line is one line of JSON that decodes back to
// frame's bytes.
func roundTrip(t *testing.T, line, frame []byte) {
	t.Helper()
	if !json.Valid(line) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("frame %q made a line that is not one line of JSON:\n%s", frame, line)
	}
	var back Event
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	if got, err := back.Bytes(); err != nil || !bytes.Equal(got, frame) {
		t.Fatalf("frame %q came back as %q (%v) from\n%s", frame, got, err, line)
	}
}

// Over HTTP a frame is a body or an event's data, with no newline: one that
// is a JSON-RPC message as it stands is stored as the message member.
func TestMessageMemberOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		frame   string
		message bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\nb"}]}}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", false},
		{` {"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"t":"\x"}}`, false},
	} {
		m := Classify([]byte(tc.frame))
		e := Event{Seq: 1, T: 2, Type: EventReceived, Exchange: 3, EventID: "7"}
		e.SetMessage(ToClient, &m)
		line := e.AppendLine(nil)
		roundTrip(t, line, []byte(tc.frame))
		if got := bytes.Contains(line, []byte(`"message":`)); got != tc.message {
			t.Errorf("frame %q stored as the message member = %v; want %v\n%s", tc.frame, got, tc.message, line)
		}
	}
}

func TestAppendForwardedLineIsTheEventsLine(t *testing.T) {
	for _, tc := range []struct {
		seq, t, of int64
		dir        Direction
	}{{2, 0, 1, ToServer}, {1 << 40, 123456789, 1<<40 - 1, ToClient}, {7, -3, 0, ToClient}} {
		e := Event{Seq: tc.seq, T: tc.t, Type: EventForwarded, Dir: tc.dir.String(), Of: tc.of}
		if diff := cmp.Diff(string(e.AppendLine(nil)), string(AppendForwardedLine(nil, tc.seq, tc.t, tc.dir, tc.of))); diff != "" {
			t.Errorf("%+v (-AppendLine +AppendForwardedLine):\n%s", tc, diff)
		}
	}
}

// Whatever a peer sends, its event line is JSON and gives the bytes back.
func FuzzEventLine(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", `{"jsonrpc":"2.0","id":1,"result":{"t":"a\u00e9\"\\"}}` + "\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\x7f\x01\"}\n", `{"jsonrpc":"2.0","id":1,"result":"\u12"}` + "\n", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xc3\"}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) { eventLine(t, frame) })
}

// AppendLine replaces encoding/json on the hot path; it must say the same
// thing for every event, including awkward strings.
func TestAppendLineMatchesEncodingJSON(t *testing.T) {
	code, seed := 3, uint64(1<<63+5)
	awkward := []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\x7f", "tab\tnl\ncr\r", "<html>&amp;", "é 日本 \u2028", "bad \xff utf8 \xc3", "\ufffd"}
	for i, s := range awkward {
		e := Event{Seq: int64(i), T: -5, Type: s, Dir: s, Kind: s, ID: s, Method: s, ProgressToken: s, Era: s, Problem: s,
			Size: i, Raw: s, RawBase64: s, Of: int64(i), Fault: s, Spec: s, Action: s, Detail: s, Pipe: s, PID: i,
			Command: []string{s, s}, Signal: s, ByUs: i%2 == 0, Faults: []string{s}, Tool: s, Format: i,
			UntilUS: int64(i) * 7, Forever: i%2 == 1, Scenario: s, Role: s, DeadlineMS: int64(i), GraceMS: int64(i) * 3, Repro: s,
			Expect: s, Peer: s, WallStartUnixNano: int64(i) * 11,
			Exchange: int64(i) * 2, HTTP: s, Status: i * 100, EventID: s, MCPSession: s, URL: s}
		if i%2 == 1 {
			e.ExitCode, e.Seed = &code, &seed
		}
		var fromJSON, fromLine map[string]any
		want, _ := json.Marshal(e)
		if err := json.Unmarshal(want, &fromJSON); err != nil {
			t.Fatal(err)
		}
		line := e.AppendLine(nil)
		if err := json.Unmarshal(line, &fromLine); err != nil {
			t.Fatalf("AppendLine wrote invalid JSON for %q: %v\n%s", s, err, line)
		}
		if diff := cmp.Diff(fromJSON, fromLine); diff != "" {
			t.Errorf("event %d (%q) (-encoding/json +AppendLine):\n%s", i, s, diff)
		}
		if !strings.ContainsAny(s, "<>&\u2028") && string(want)+"\n" != string(line) {
			t.Errorf("event %d: bytes differ\n want %s\n  got %s", i, want, line)
		}
	}
}

func BenchmarkAppendLine(b *testing.B) {
	for _, size := range []int{200, 64 << 10} {
		raw := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat(`Lorem ipsum dolor sit amet, \"consectetur\" adipiscing elit.\n`, size/64) + `"}]}}` + "\n")
		m := Classify(raw)
		var e Event
		e.SetMessage(ToClient, &m)
		e.Type = EventReceived
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			var buf []byte
			for i := 0; i < b.N; i++ {
				buf = e.AppendLine(buf[:0])
			}
		})
		b.Run(strconv.Itoa(size)+"/encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				json.Marshal(&e)
			}
		})
	}
}

// appendString must write what encoding/json reads back as the string
// encoding/json writes, whatever the bytes: the eight-at-a-time loop must not
// skip a byte that needs escaping wherever it falls in a word.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		"12345678\"abcdefgh\\", "1234567\x00", "\xff1234567", "héllo wörld 日本語 \u2028 \xc3", strings.Repeat("ab\"c", 600) + "\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		var fromOurs, fromJSON string
		if err := json.Unmarshal(got, &fromOurs); err != nil {
			t.Fatalf("appendString(%q) = %s, not a JSON string: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		if err := json.Unmarshal(want, &fromJSON); err != nil {
			t.Fatal(err)
		}
		if fromOurs != fromJSON {
			t.Fatalf("appendString(%q) reads back as %q; encoding/json's as %q", s, fromOurs, fromJSON)
		}
	})
}

// A transcript written in a newer format than this reader knows is refused
// with what to do, rather than judged with frames it cannot see; older
// ones, with no format, are read.
func TestReadTranscriptRefusesANewerFormat(t *testing.T) {
	read := func(session string) error {
		in := session + "\n" + `{"seq":2,"t_us":5,"type":"received","dir":"c2s","kind":"request","id":"1","method":"ping","size":41,"raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"}` + "\n"
		return ReadTranscript(strings.NewReader(in), func(Event) error { return nil })
	}
	if err := read(`{"seq":1,"t_us":0,"type":"session","tool":"mcpchaos 0.1.0"}`); err != nil {
		t.Errorf("a transcript with no format: %v", err)
	}
	if err := read(`{"seq":1,"t_us":0,"type":"session","tool":"mcpchaos 0.1.0","format":` + strconv.Itoa(TranscriptFormat) + `}`); err != nil {
		t.Errorf("a transcript in this format: %v", err)
	}
	err := read(`{"seq":1,"t_us":0,"type":"session","tool":"mcpchaos 9.0.0","format":` + strconv.Itoa(TranscriptFormat+1) + `}`)
	if err == nil || !strings.Contains(err.Error(), "mcpchaos 9.0.0") || !strings.Contains(err.Error(), "newer one") {
		t.Errorf("a transcript in a newer format: error %v; want one that names its writer and says to use a newer mcpchaos", err)
	}
}
