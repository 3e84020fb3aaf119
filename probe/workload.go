package probe

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// Metadata keys of the stateless era, carried in every request's _meta. They
// are spelled as mcp-go's mcp.MetaKey* constants; importing that package for
// them would link an SDK into the mcpchaos binary, which has none.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// clientCapabilities are declared in both eras. The probe can answer every
// server-to-client request they allow (see serverRequestResults), and
// declaring them is what makes servers exercise those paths.
var clientCapabilities = json.RawMessage(`{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`)

type listedTool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Execution   struct {
		// TaskSupport "required" (MCP 2025-11-25, Tasks) says clients
		// MUST call the tool as a task; the server answers a plain call
		// -32601.
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

// taskOnly says the tool may only be called as a task, which the probe does
// not do: a plain call would be the probe breaking the specification, and
// its -32601 would exercise nothing of the tool.
func (t listedTool) taskOnly() bool { return t.Execution.TaskSupport == "required" }

// workload runs the session's requests on Run's goroutine. Its error is what
// Run returns; requests that failed are not errors, they are in the outcome.
//
// The order matters to the faults, whose triggers name methods: the first
// tools/call is a plain call of the first tool, as it always was, so the
// default scenarios land where they did; prompts, resources, completions
// and the log level come before it, the tasks start once the first calls
// are on their way, and the requests sent to be refused come last, the
// unknown method after everything but the ping.
func (s *session) workload(out *Outcome) error {
	caps, err := s.handshake(out)
	if err != nil {
		return err
	}
	var tools []listedTool
	complete := false
	if declared(caps.Tools) || s.cfg.Calls != nil {
		tools, complete = s.listTools()
	} else {
		s.why("tools/call", "the server declares no tools")
	}
	for _, t := range tools {
		out.Tools = append(out.Tools, t.Name)
	}
	calls, err := s.plan(tools, out, complete, caps.tasks().ToolCalls)
	if err != nil {
		return err
	}
	if len(calls) == 0 && declared(caps.Tools) {
		switch {
		case s.ended():
			s.why("tools/call", "the session ended first")
		case len(tools) == 0 && !complete:
			s.why("tools/call", "tools/list was not answered with a listing")
		case len(tools) == 0:
			s.why("tools/call", "the server listed no tools")
		default:
			s.why("tools/call", "no listed tool could be called without a task")
		}
	}
	sf := s.explore(caps)
	tasks := s.planTasks(caps, tools)
	out.TaskOnlyTools = slices.DeleteFunc(out.TaskOnlyTools, func(name string) bool {
		return slices.ContainsFunc(tasks.calls, func(c Call) bool { return c.Tool == name })
	})
	s.callTools(calls, func() { s.runTasks(tasks) })
	s.errorPaths(caps, tools, complete)
	sf.end()
	s.unknownMethodLast()
	if out.Era == EraStateful {
		s.roundTrip("ping", nil, "")
	}
	// Last, after everything a fault scenario's session also sends: what
	// the polite workload finds is found the same way with or without it,
	// so the baseline's findings still stand for the scenarios'.
	s.hostile(s.hostileWork(caps, tools, sf))
	s.growth(s.growthWork(tools, sf))
	out.Coverage = s.coverage(caps, out.Era)
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	return nil
}

// handshake settles the era: server/discover first, the initialize handshake
// when the server does not offer the stateless revision.
func (s *session) handshake(out *Outcome) (serverCapabilities, error) {
	var caps serverCapabilities
	var discover *pending
	if s.cfg.Era != EraStateful {
		p, err := s.request("server/discover", s.params(nil, nil, true), "")
		if err != nil {
			return caps, s.notInitialized(err.Error())
		}
		// A server of an earlier revision may ignore the method instead of
		// refusing it, so the wait is short; the request keeps its own
		// deadline, and a late answer still counts (see below).
		if s.wait(p.done, s.grace, true) {
			if c, ok := s.offersStateless(p, out); ok {
				return c, nil
			}
		} else {
			discover = p
		}
		if s.ctx.Err() != nil {
			return caps, s.notInitialized("")
		}
	}

	init := map[string]any{
		"protocolVersion": StatefulVersion,
		"capabilities":    clientCapabilities,
		"clientInfo":      s.clientInfo(),
	}
	p, err := s.request("initialize", init, "")
	if err != nil {
		return caps, s.notInitialized(err.Error())
	}
	// A server that is merely slow to start (a Python server on a loaded
	// machine) answers server/discover after the short wait, and may then
	// refuse initialize on a connection it serves statelessly: whichever
	// handshake the server completes decides the era.
	if discover != nil {
		select {
		case <-discover.done:
		case <-p.done:
			if !p.answered || p.errText != "" {
				<-discover.done // bounded by its own deadline
			}
		}
		if c, ok := s.offersStateless(discover, out); ok {
			return c, nil
		}
	}
	s.era, out.Era = EraStateful, EraStateful
	<-p.done
	if !p.answered || p.errText != "" {
		return caps, s.notInitialized("initialize: " + p.errText)
	}
	if p.result == nil {
		return caps, s.notInitialized("initialize: empty result")
	}
	var r struct {
		ProtocolVersion string             `json:"protocolVersion"`
		Capabilities    serverCapabilities `json:"capabilities"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(p.result, &r); err != nil {
		return caps, s.notInitialized("unreadable initialize result: " + err.Error())
	}
	out.ProtocolVersion, out.ServerName = r.ProtocolVersion, r.ServerInfo.Name
	if err := s.notify("notifications/initialized", nil); err != nil {
		return caps, s.notInitialized("sending notifications/initialized: " + err.Error())
	}
	out.Initialized = true
	return r.Capabilities, nil
}

// offersStateless settles the stateless era when the answer to server/discover p
// offers it.
func (s *session) offersStateless(p *pending, out *Outcome) (serverCapabilities, bool) {
	select {
	case <-p.done:
	default:
		return serverCapabilities{}, false
	}
	if !p.answered || p.result == nil {
		return serverCapabilities{}, false
	}
	var r struct {
		SupportedVersions []string           `json:"supportedVersions"`
		Capabilities      serverCapabilities `json:"capabilities"`
		Meta              map[string]struct {
			Name string `json:"name"`
		} `json:"_meta"`
	}
	if json.Unmarshal(p.result, &r) != nil || !slices.Contains(r.SupportedVersions, StatelessVersion) {
		return serverCapabilities{}, false
	}
	s.era = EraStateless
	out.Era, out.ProtocolVersion, out.Initialized = EraStateless, StatelessVersion, true
	out.ServerName = r.Meta[metaServerInfo].Name
	return r.Capabilities, true
}

func (s *session) notInitialized(why string) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("probe: %w: %w", ErrNotInitialized, err)
	}
	return fmt.Errorf("probe: %w: %s", ErrNotInitialized, why)
}

func (s *session) clientInfo() map[string]string {
	return map[string]string{"name": s.cfg.ClientName, "version": clientVersion}
}

// params builds a request's params: fields, plus _meta made of meta and, in
// the stateless era, the protocol metadata every request must carry. It is
// nil (no params member) when there is nothing to send.
func (s *session) params(fields, meta map[string]any, stateless bool) any {
	if stateless {
		meta = merged(meta, map[string]any{
			metaProtocolVersion:    StatelessVersion,
			metaClientInfo:         s.clientInfo(),
			metaClientCapabilities: clientCapabilities,
		})
	}
	if len(meta) > 0 {
		fields = merged(fields, map[string]any{"_meta": meta})
	}
	if len(fields) == 0 {
		return nil
	}
	return fields
}

func merged(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// roundTrip sends a request and waits for it to be settled, which the
// request's watcher bounds. It returns the result when there is one.
func (s *session) roundTrip(method string, fields map[string]any, target string) (json.RawMessage, bool) {
	result, _ := s.roundTripAnswered(method, fields, target)
	return result, result != nil
}

// roundTripAnswered is roundTrip that also says whether an answer came at
// all: an error answer is an answer, a request given up on is not.
//
// Once a request has gone unanswered, it sends nothing but ping (see goOn).
func (s *session) roundTripAnswered(method string, fields map[string]any, target string) (json.RawMessage, bool) {
	if method != "ping" && !s.goOn(method) {
		return nil, false
	}
	p, err := s.request(method, s.params(fields, nil, s.stateless()), target)
	if err != nil {
		return nil, false
	}
	<-p.done
	if !p.answered || p.errText != "" || p.result == nil {
		return nil, p.answered
	}
	return p.result, true
}

func (s *session) stateless() bool {
	return s.era == EraStateless
}

// listTools follows tools/list pages. complete says the listing reached its
// end, so that a tool missing from it is really missing.
func (s *session) listTools() ([]listedTool, bool) {
	var tools []listedTool
	end := s.listPages("tools/list", func(result json.RawMessage) {
		var page struct {
			Tools []listedTool `json:"tools"`
		}
		if json.Unmarshal(result, &page) == nil {
			tools = append(tools, page.Tools...)
		}
	})
	return tools, end == listComplete
}

// plan decides the plain tool calls. Explicit calls are checked against a
// complete listing only: when the listing failed (perhaps under a fault) the
// calls are made anyway, since the server may still know the tools. An
// explicit call of a tool that must be called as a task is made as a task
// when the server takes task-augmented calls (asTasks), and as given
// otherwise: the user asked for it.
func (s *session) plan(tools []listedTool, out *Outcome, complete, asTasks bool) ([]Call, error) {
	names := out.Tools
	skip := func(name string) bool { return slices.Contains(s.cfg.SkipTools, name) }
	taskOnly := func(name string) bool {
		return slices.ContainsFunc(tools, func(t listedTool) bool { return t.Name == name && t.taskOnly() })
	}
	var calls []Call
	if s.cfg.Calls != nil {
		for _, c := range s.cfg.Calls {
			if complete && !slices.Contains(names, c.Tool) {
				return nil, &UnknownToolError{Tool: c.Tool, Known: slices.Clone(names)}
			}
		}
		for _, c := range s.cfg.Calls {
			switch {
			case skip(c.Tool):
			case asTasks && taskOnly(c.Tool):
				// Made as a task, with these arguments (planTasks).
			default:
				calls = append(calls, c)
			}
		}
		return s.fill(calls), nil
	}
	for _, t := range tools {
		switch {
		case skip(t.Name):
		case t.taskOnly():
			out.TaskOnlyTools = append(out.TaskOnlyTools, t.Name)
		default:
			calls = append(calls, Call{Tool: t.Name, Args: s.arguments(t.InputSchema)})
		}
	}
	return s.fill(calls), nil
}

// fill repeats the calls in order until there are at least MinCalls.
func (s *session) fill(calls []Call) []Call {
	for i := 0; len(calls) > 0 && len(calls) < s.cfg.MinCalls; i++ {
		calls = append(calls, calls[i])
	}
	return calls
}

// callTools makes the calls, Concurrency at a time, each with its own
// progress token so that servers send progress and the transport can inject
// progress for it. alongside, if not nil, runs beside the calls once the
// first of them are on their way, and callTools returns when both are done.
func (s *session) callTools(calls []Call, alongside func()) {
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	var started sync.Once
	begin := func() {
		started.Do(func() {
			if alongside != nil {
				inFlight.Go(alongside)
			}
		})
	}
	// The first Concurrency calls are one batch: the writer sends them in
	// one write (see session.batch).
	batched := make(chan struct{})
	s.batch.Store(&batched)
	var endBatch sync.Once
	closeBatch := func() {
		endBatch.Do(func() {
			s.batch.Store(nil)
			close(batched)
		})
		begin()
	}
	defer closeBatch()
	slots := make(chan struct{}, s.cfg.Concurrency)
	for i, c := range calls {
		if i == s.cfg.Concurrency {
			closeBatch()
		}
		select {
		case slots <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		token := s.progressToken(i + 1)
		p, err := s.callTool(c, token, nil)
		if err != nil {
			// The server can no longer be reached; the calls not made are
			// simply absent from the outcome.
			<-slots
			return
		}
		inFlight.Go(func() {
			s.completeCall(c, token, p)
			<-slots
		})
	}
}

// progressToken is the token of the session's nth tool call: the marker's
// in a run of several sessions, so that a progress notification delivered
// to another session names the session it belongs to.
func (s *session) progressToken(n int) string {
	return cmp.Or(s.cfg.Marker, "mcpchaos") + "-progress-" + strconv.Itoa(n)
}

// arguments are the generated arguments of a tool with this inputSchema,
// marked with the session's marker when it has one.
func (s *session) arguments(schema json.RawMessage) json.RawMessage {
	if s.cfg.Marker == "" {
		return Arguments(schema)
	}
	return MarkedArguments(schema, s.cfg.Marker)
}

// maxInputRounds bounds the retries of one stateless tool call, so a server
// that keeps asking for input cannot keep a slot for ever.
const maxInputRounds = 3

func (s *session) callTool(c Call, token string, retry map[string]any) (*pending, error) {
	fields := merged(retry, map[string]any{"name": c.Tool, "arguments": c.Args})
	meta := map[string]any{"progressToken": token}
	return s.requestWithToken("tools/call", s.params(fields, meta, s.stateless()), c.Tool, strconv.Quote(token))
}

// completeCall waits for a call and, in the stateless era, answers an
// input_required result by retrying the call with the answers a
// server-to-client request would have got, the way the stateless revision
// replaces those requests. Each retry is a request of its own.
func (s *session) completeCall(c Call, token string, p *pending) {
	for range maxInputRounds {
		<-p.done
		retry := inputRetry(p.result)
		if retry == nil {
			return
		}
		next, err := s.callTool(c, token, retry)
		if err != nil {
			return
		}
		p = next
	}
	<-p.done
}

// inputRetry returns the params members of the retry an input_required result
// asks for, or nil when the result is final.
func inputRetry(result json.RawMessage) map[string]any {
	var r struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
		RequestState json.RawMessage `json:"requestState"`
	}
	if result == nil || json.Unmarshal(result, &r) != nil || r.ResultType != "input_required" {
		return nil
	}
	answers := make(map[string]any, len(r.InputRequests))
	for key, req := range r.InputRequests {
		if answer, ok := serverRequestResults[req.Method]; ok {
			answers[key] = answer
		}
	}
	retry := map[string]any{"inputResponses": answers}
	if declared(r.RequestState) {
		// Opaque to the client: echoed back exactly.
		retry["requestState"] = r.RequestState
	}
	return retry
}
