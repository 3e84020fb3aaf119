package faults

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCaseFileRoundTrip(t *testing.T) {
	want := Case{
		Scenario: Scenario{Name: "eof-inflight", Doc: "stdin closes: with 3 calls", Era: "stateful",
			Faults:   []string{"eof:on=c2s:request:tools/call,inflight=3"},
			Workload: Workload{Calls: 4, Concurrency: 2}, Deadline: 1500 * time.Millisecond, HangAfter: 90 * time.Second},
		Seed:      1<<64 - 1,
		Command:   []string{"python", "server.py", "--flag=a b"},
		Findings:  []string{"crash", "lost-response"},
		Decisions: []Decision{{Label: "eof#1", Spec: "eof:on=c2s:request:tools/call,inflight=3", Action: "eof", Seq: 12, Dir: "c2s", Kind: "request", Method: "tools/call", ID: `"a:b"`, Detail: "closed stdin"}},
	}
	data, err := MarshalCase(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseCaseFile("case.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("case (-want +got):\n%s\nfile:\n%s", diff, data)
	}

	// A case with a probe workload keeps its calls, arguments byte for byte
	// (spacing, key order, number spelling, a quote and a colon in a value),
	// and its skipped tools.
	withCalls := want
	withCalls.Calls = []ToolCall{
		{Tool: "echo", Arguments: `{"text":"it's: \"hi\"", "a":1.50}`},
		{Tool: "slow", Arguments: `{}`},
		{Tool: "echo", Arguments: `{ "text" : "again" }`},
	}
	withCalls.SkipTools = []string{"big", "sample"}
	data, err = MarshalCase(withCalls)
	if err != nil {
		t.Fatal(err)
	}
	got, err = ParseCaseFile("case.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if diff := cmp.Diff(withCalls, got); diff != "" {
		t.Errorf("case with calls (-want +got):\n%s\nfile:\n%s", diff, data)
	}

	// A case of test-client keeps its server and the scenario's expect.
	client := want
	client.Server, client.Client = []string{"mcpchaos", "serve"}, true
	client.Scenario.Expect = "failure"
	client.Scenario.Era, client.Scenario.Workload = "", Workload{}
	data, _ = MarshalCase(client)
	got, err = ParseCaseFile("case.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(client, got); diff != "" {
		t.Errorf("client case (-want +got):\n%s", diff)
	}

	// Cases over HTTP keep their URL; a case of test --url against a
	// server that was already up has no command, and one of test-client
	// --server-url without --server no server.
	for _, c := range []Case{
		{Scenario: Scenario{Name: "cut", Faults: []string{"eof"}}, URL: "http://127.0.0.1:3000/mcp", Findings: []string{"lost-response"}},
		{Scenario: Scenario{Name: "cut", Faults: []string{"eof"}}, URL: "https://example.com/mcp", Command: []string{"node", "srv.js"}, Findings: []string{}},
		{Scenario: Scenario{Name: "cut", Faults: []string{"eof"}}, URL: "http://127.0.0.1:3000/mcp", Client: true, Command: []string{"python", "client.py"}, Findings: []string{"hang"}},
	} {
		data, _ = MarshalCase(c)
		got, err = ParseCaseFile("case.yaml", data)
		if err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		if c.Command == nil {
			c.Command = []string{}
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("HTTP case (-want +got):\n%s\nfile:\n%s", diff, data)
		}
	}

	// A case without decisions or findings round-trips too.
	bare := Case{Scenario: Scenario{Name: "a", Faults: []string{"eof"}}, Command: []string{"srv"}, Findings: []string{}}
	data, _ = MarshalCase(bare)
	got, err = ParseCaseFile("case.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bare, got); diff != "" {
		t.Errorf("bare case (-want +got):\n%s", diff)
	}
}

func TestParseCaseFileErrors(t *testing.T) {
	const scenario = "version: 1\nscenario: {name: a, faults: [eof]}\nseed: 1\ncommand: [srv]\n"
	const keys = "version, scenario, seed, by, command, server, url, calls, skip-tools, findings, decisions"
	for _, tc := range []struct{ name, file, want string }{
		{"empty", "", "case.yaml:1: the file is empty; a case file starts with version: 1"},
		{"unknown version", "version: 3\n", "case.yaml:1: version: unknown version 3; this mcpchaos reads case file version 1 (a newer mcpchaos may read this file)"},
		{"no findings", scenario, "case.yaml:1: no findings:; it is required (keys: " + keys + ")"},
		{"unknown key", scenario + "findings: []\nnotes: x\n", `case.yaml:6: unknown key "notes" (allowed: ` + keys + ")"},
		{"empty command", "version: 1\nscenario: {name: a, faults: [eof]}\nseed: 1\ncommand: []\nfindings: []\n", "case.yaml:4: command: empty; a case records the command it ran against, as in [python, server.py]"},
		{"seed in the scenario", "version: 1\nscenario: {name: a, faults: [eof], seed: 3}\nseed: 1\ncommand: [srv]\nfindings: []\n", "case.yaml:2: scenario.seed: a case keeps seed: at its top level, not in its scenario"},
		{"bad fault", "version: 1\nscenario:\n  name: a\n  faults: [eoff]\nseed: 1\ncommand: [srv]\nfindings: []\n", `case.yaml:4: scenario.faults[0]: fault "eoff": unknown fault "eoff" (did you mean "eof"?) ` + knownFaults},
		{"empty server", scenario + "server: []\nfindings: []\n", "case.yaml:5: server: empty; leave server: out of a case of mcpchaos test, and out of one of test-client whose server was already up"},
		{"unknown by", scenario + "by: wrap\nfindings: []\n", `case.yaml:5: by: unknown command "wrap"; a case is saved by test or test-client`},
		{"server in a case of test", scenario + "by: test\nserver: [srv]\nfindings: []\n", "case.yaml:6: server: a case of mcpchaos test has no server: (its command: is the server); remove it, or write by: test-client"},
		{"empty client command", "version: 1\nscenario: {name: a, faults: [eof]}\nseed: 1\nby: test-client\ncommand: []\nurl: http://127.0.0.1:1/mcp\nfindings: []\n", "case.yaml:5: command: empty; a case records the client program it ran, as in [python, client.py]"},
		{"bad url", scenario + "url: 127.0.0.1:3000\nfindings: []\n", `case.yaml:5: url: "127.0.0.1:3000" is not the http:// or https:// URL of an MCP endpoint, as in http://127.0.0.1:3000/mcp`},
		{"unknown finding", scenario + "findings: [hung]\n", `case.yaml:5: findings[0]: unknown finding kind "hung" (did you mean "hang"?) (kinds: hang, crash, lost-response, duplicate-response, unknown-response, zombie, protocol-violation, cross-session, security)`},
		{"decision key", scenario + "findings: []\ndecisions:\n  - {label: eof#1, spec: eof, action: eof, sq: 3}\n", `case.yaml:7: decisions[0]: unknown key "sq" (did you mean "seq"?) (allowed: label, spec, action, seq, dir, kind, method, id, detail)`},
		{"decision seq", scenario + "findings: []\ndecisions:\n  - {label: eof#1, spec: eof, action: eof, seq: x}\n", `case.yaml:7: decisions[0].seq: expected a transcript sequence number, got "x"`},
		{"decision without label", scenario + "findings: []\ndecisions:\n  - {spec: eof, action: eof}\n", `case.yaml:7: decisions[0]: no label:; it is required (keys: label, spec, action, seq, dir, kind, method, id, detail)`},
		{"calls not a list", scenario + "calls: echo\nfindings: []\n", `case.yaml:5: calls: expected a list of tool calls, as in [{tool: echo, arguments: '{"text":"hi"}'}], got "echo"`},
		{"empty calls", scenario + "calls: []\nfindings: []\n", "case.yaml:5: calls: empty; leave calls: out to call every tool with arguments from its schema"},
		{"call key", scenario + "calls:\n  - {tool: echo, args: '{}'}\nfindings: []\n", `case.yaml:6: calls[0]: unknown key "args" (allowed: tool, arguments)`},
		{"call without arguments", scenario + "calls:\n  - {tool: echo}\nfindings: []\n", "case.yaml:6: calls[0]: no arguments:; it is required (keys: tool, arguments)"},
		{"call without tool name", scenario + "calls:\n  - {tool: '', arguments: '{}'}\nfindings: []\n", "case.yaml:6: calls[0].tool: empty; give the name of the tool to call"},
		{"arguments as a mapping", scenario + "calls:\n  - tool: echo\n    arguments: {text: hi}\nfindings: []\n", `case.yaml:7: calls[0].arguments: expected the JSON arguments object as a string, as in arguments: '{"text":"hi"}', got a mapping`},
		{"arguments a JSON list", scenario + "calls:\n  - {tool: slow, arguments: '{}'}\n  - {tool: echo, arguments: '[1]'}\nfindings: []\n", `case.yaml:7: calls[1].arguments: it is not a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage; give a JSON object, as in '{"text":"hi"}' or '{}'`},
		{"arguments null", scenario + "calls:\n  - {tool: echo, arguments: 'null'}\nfindings: []\n", `case.yaml:6: calls[0].arguments: it is not a JSON object; give a JSON object, as in '{"text":"hi"}' or '{}'`},
		{"arguments not JSON", scenario + "calls:\n  - {tool: echo, arguments: '{text: hi}'}\nfindings: []\n", `case.yaml:6: calls[0].arguments: it is not a JSON object: invalid character 't' looking for beginning of object key string; give a JSON object, as in '{"text":"hi"}' or '{}'`},
		{"skip-tools not a list", scenario + "skip-tools: echo\nfindings: []\n", `case.yaml:5: skip-tools: expected a list of strings, got "echo"`},
		{"empty skip-tools", scenario + "skip-tools: []\nfindings: []\n", "case.yaml:5: skip-tools: empty; leave skip-tools: out to skip no tool"},
		{"empty skipped tool", scenario + "skip-tools: [echo, '']\nfindings: []\n", "case.yaml:5: skip-tools[1]: empty tool name"},
		{"calls in a client case", scenario + "server: [srv]\nfindings: []\ncalls:\n  - {tool: echo, arguments: '{}'}\n", "case.yaml:8: calls: a case of test-client has no probe workload: its client program makes the calls; remove calls:"},
		{"skip-tools in a client case", scenario + "server: [srv]\nskip-tools: [echo]\nfindings: []\n", "case.yaml:6: skip-tools: a case of test-client has no probe workload: its client program makes the calls; remove skip-tools:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCaseFile("case.yaml", []byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
