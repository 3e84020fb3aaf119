package judge

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The official-schema checker picks the revision each message is judged
// by, and reads past what faults and recording order do to ids. (The
// shapes themselves are TestJudgeProtocol's, in crash_test.go.)
func TestOfficialSchemaRevision(t *testing.T) {
	const nameless = `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"inputSchema":{"type":"object"}}]}}`
	stateless := func(b *tb, id string) int64 {
		seq := b.recv("c2s", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
		b.fwd("c2s", seq)
		return seq
	}
	runJudgeCases(t, []judgeCase{
		{
			name: "the negotiated revision judges the session's results, not the one the client asked for",
			build: func(b *tb) {
				b.recv("c2s", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
				b.call("1", "tools/list")
				b.replyRaw(fmt.Sprintf(nameless, "1"))
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("1", "tools/list"), Seqs: seqs(8),
				Message: "1 result of tools/list breaks the MCP 2024-11-05 schema: /result/tools/0: missing property 'name'"}},
		},
		{
			name: "an initialize result that names no version: the requested one stands",
			build: func(b *tb) {
				b.recv("c2s", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("0", "initialize"), Seqs: seqs(4),
				Message: "1 result of initialize breaks the MCP 2025-03-26 schema: /result: missing property 'protocolVersion'"}},
		},
		{
			// 2026-07-28 makes a list result say how it may be cached.
			name: "stateless era: each request's _meta names the revision its answer is judged by",
			build: func(b *tb) {
				stateless(b, "1")
				b.replyRaw(fmt.Sprintf(nameless, "1"))
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("1", "tools/list"), Seqs: seqs(5),
				Message: "1 result of tools/list breaks the MCP 2026-07-28 schema: /result/tools/0: missing property 'name'; /result: missing properties 'cacheScope', 'resultType', 'ttlMs'"}},
		},
		{
			name: "notifications: judged by the session's revision, one finding however many break alike",
			build: func(b *tb) {
				for range 3 {
					b.replyRaw(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}`)
				}
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(3, 5, 7),
				Message: "3 notifications of notifications/message break the MCP 2025-11-25 schema: /params: missing property 'level'"}},
		},
	})
}

// What faults and recording order do to ids: an answer recorded before its
// request is still judged; the answers to an id a fault gave a second
// request cannot be told apart, and are not.
func TestOfficialSchemaIDs(t *testing.T) {
	const nameless = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"inputSchema":{"type":"object"}}]}}`
	t.Run("an answer before its request", func(t *testing.T) {
		b := newTB()
		b.replyRaw(nameless)
		b.call("1", "tools/list")
		b.finish()
		want := []string{"1 result of tools/list breaks the MCP 2025-11-25 schema: /result/tools/0: missing property 'name'"}
		if diff := cmp.Diff(want, schemaFindings(b)); diff != "" {
			t.Errorf("schema findings (-want +got):\n%s", diff)
		}
	})
	t.Run("an id a fault gave a second request", func(t *testing.T) {
		b := newTB()
		b.call("1", "tools/list")
		seq := b.recv("c2s", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
		e := wire.Event{Type: wire.EventForwarded, Of: seq, Detail: "id-collision#1"}
		e.SetMessage(wire.ToServer, &m)
		b.add(e)
		b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		b.replyRaw(nameless)
		b.finish()
		if got := schemaFindings(b); len(got) != 0 {
			t.Errorf("schema findings: %q, want none", got)
		}
	})
}

// schemaFindings are the messages of the official-schema findings of b's
// transcript.
func schemaFindings(b *tb) []string {
	var got []string
	for _, f := range Session(b.evs).Findings {
		if f.Rule == reports.RuleSchema {
			got = append(got, f.Message)
		}
	}
	return got
}

// A million progress notifications are judged in seconds: after the first
// of a method, one in sampleEvery is validated.
func TestOfficialSchemaSamples(t *testing.T) {
	b := newTB()
	const sent = checkFirst + 2*sampleEvery
	for range sent {
		b.replyRaw(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
	}
	b.finish()
	got := schemaFindings(b)
	// The first checkFirst, then the 1000th and 2000th of the method.
	want := []string{fmt.Sprintf("%d notifications of notifications/progress break the MCP 2025-11-25 schema: /params: missing property 'progressToken'", checkFirst+2)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema findings (-want +got):\n%s", diff)
	}
}

// A client program under test is held to the schema too: its requests, its
// results of the server's requests and its notifications, by the revision
// its initialize negotiated.
func TestOfficialSchemaClient(t *testing.T) {
	b := newClientTB("success")()
	seq := b.recv("c2s", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
	b.fwd("c2s", seq)
	b.replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
	b.sreq("1", "roots/list")
	seq = b.recv("c2s", `{"jsonrpc":"2.0","id":1,"result":{"roots":[{"name":"no uri"}]}}`)
	b.fwd("c2s", seq)
	seq = b.recv("c2s", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
	b.fwd("c2s", seq)
	// The server's own messages are not the client's to answer for.
	b.replyRaw(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)
	b.finish()
	var got []string
	for _, f := range Session(b.evs).Findings {
		if f.Rule == reports.RuleSchema {
			got = append(got, f.Message)
		}
	}
	want := []string{
		"1 request of initialize breaks the MCP 2025-06-18 schema: /params: missing property 'clientInfo'",
		"1 result of roots/list breaks the MCP 2025-06-18 schema: /result/roots/0: missing property 'uri'",
		"1 notification of notifications/progress breaks the MCP 2025-06-18 schema: /params: missing property 'progressToken'",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema findings (-want +got):\n%s", diff)
	}
}
