package everything

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Bounds on tool arguments, so a typo cannot make the server sleep for a day
// or allocate gigabytes.
const (
	maxSlowMS    = 10 * 60 * 1000
	maxSlowSteps = 1000
	maxBigKiB    = 16 * 1024
)

// rootsKey names the roots request inside a multi round-trip exchange.
const rootsKey = "roots"

// rootsTimeout bounds the wait for a client's roots/list answer, so a client
// that never answers turns into a tool error instead of a call that hangs.
const rootsTimeout = 10 * time.Second

// Keys of the sample and elicit requests inside a multi round-trip exchange.
const (
	sampleKey = "sample"
	elicitKey = "elicit"
)

// askTimeout bounds the wait for a client's answer to sampling/createMessage
// and elicitation/create. Both may wait on a person (approving the sampling,
// filling in the form), so it is longer than rootsTimeout; but a client that
// never answers must still turn into a tool error, not a call that hangs.
const askTimeout = 30 * time.Second

// pingTimeout bounds the wait for the client's answer to a ping. A ping needs
// no person, so it is as short as rootsTimeout.
const pingTimeout = rootsTimeout

// bigPattern is repeated to build big's result; 16 bytes divides a KiB.
const bigPattern = "0123456789abcdef"

// tools holds what handlers need to send notifications and requests to the
// client of the call they are serving.
type tools struct {
	s *server.MCPServer
	// write, when not nil, writes a notification to the client's stream
	// before returning, instead of queueing it with mcp-go.
	write func(mcp.JSONRPCNotification) error
	// ping, when not nil, pings the client and waits for its answer; mcp-go
	// has no way to send a server-to-client ping.
	ping func(context.Context) error
}

// notify sends a notification to the client of the call being served.
func (t tools) notify(ctx context.Context, method string, params map[string]any) error {
	if t.write == nil {
		return t.s.SendNotificationToClient(ctx, method, params)
	}
	// Keep mcp-go's rule: nothing is sent to a client that has not initialized.
	if session := server.ClientSessionFromContext(ctx); session == nil || !session.Initialized() {
		return server.ErrNotificationNotInitialized
	}
	return t.write(mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	})
}

func (t tools) echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(text), nil
}

func (t tools) slow(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ms, err := intArg(req, "ms", 200)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	steps, err := intArg(req, "steps", 5)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if ms < 0 || ms > maxSlowMS {
		return mcp.NewToolResultErrorf("ms must be between 0 and %d, got %d", maxSlowMS, ms), nil
	}
	if steps < 1 || steps > maxSlowSteps {
		return mcp.NewToolResultErrorf("steps must be between 1 and %d, got %d", maxSlowSteps, steps), nil
	}
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}

	interval := time.Duration(ms) * time.Millisecond / time.Duration(steps)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for step := 1; step <= steps; step++ {
		select {
		case <-ctx.Done():
			// Cancelled by notifications/cancelled, or stdin closed.
			return nil, ctx.Err()
		case <-timer.C:
		}
		timer.Reset(interval)
		if token == nil {
			continue
		}
		err := t.notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token,
			"progress":      step,
			"total":         steps,
		})
		if err != nil {
			// A dropped notification would look like a proxy fault; say so.
			return mcp.NewToolResultErrorf("sending progress %d of %d: %v", step, steps, err), nil
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("done after %d ms", ms)), nil
}

func (t tools) listChanged(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for _, method := range []string{
		mcp.MethodNotificationToolsListChanged,
		mcp.MethodNotificationPromptsListChanged,
		mcp.MethodNotificationResourcesListChanged,
	} {
		if err := t.notify(ctx, method, nil); err != nil {
			return mcp.NewToolResultErrorf("sending %s: %v", method, err), nil
		}
	}
	return mcp.NewToolResultText("sent"), nil
}

// roots asks the client for its roots in whichever way its protocol revision
// allows. Up to 2025-11-25 that is a roots/list request from server to client.
// From 2026-07-28 servers may no longer send requests (mcp-go refuses to), so
// the tool returns an input_required result; the client answers it and retries
// the call with the roots attached.
func (t tools) roots(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer := server.RootsResponse(req.Params.InputResponses, rootsKey); answer != nil {
		return rootsResult(answer), nil
	}
	if clientCapabilities(ctx).Roots == nil {
		return mcp.NewToolResultError("the client did not declare the roots capability, so it cannot be asked for roots"), nil
	}
	if server.IsModernRequest(ctx) {
		return server.NewInputRequestBuilder("").Roots(rootsKey).ToolResult(), nil
	}

	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	answer, err := t.s.RequestRoots(ctx, mcp.ListRootsRequest{
		Request: mcp.Request{Method: string(mcp.MethodListRoots)},
	})
	if err != nil {
		return mcp.NewToolResultErrorf("the client did not answer roots/list: %v", err), nil
	}
	return rootsResult(answer), nil
}

func rootsResult(answer *mcp.ListRootsResult) *mcp.CallToolResult {
	return mcp.NewToolResultText(strconv.Itoa(len(answer.Roots)))
}

// clientCapabilities returns what the client of this request declared: in the
// request's own _meta from 2026-07-28, at initialize before that.
func clientCapabilities(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern && info.ClientCapabilities != nil {
		return *info.ClientCapabilities
	}
	if session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return session.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// sampleParams is what sample asks the client's model.
var sampleParams = mcp.CreateMessageParams{
	Messages: []mcp.SamplingMessage{{
		Role:    mcp.RoleUser,
		Content: mcp.NewTextContent("Say hello to mcpchaos in five words or fewer."),
	}},
	MaxTokens: 32,
}

// sample asks the client's model for a reply the way roots asks for roots: a
// sampling/createMessage request up to 2025-11-25, an input_required result
// from 2026-07-28.
func (t tools) sample(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer := server.SamplingResponse(req.Params.InputResponses, sampleKey); answer != nil {
		return sampleResult(answer), nil
	}
	if clientCapabilities(ctx).Sampling == nil {
		return mcp.NewToolResultError("the client did not declare the sampling capability, so it cannot be asked for a message"), nil
	}
	if server.IsModernRequest(ctx) {
		return server.NewInputRequestBuilder("").Sample(sampleKey, sampleParams).ToolResult(), nil
	}

	wait, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	//lint:ignore SA1019 sampling is deprecated from 2026-07-28 only; this is the 2025-11-25 route.
	answer, err := t.s.RequestSampling(wait, mcp.CreateMessageRequest{
		Request:             mcp.Request{Method: string(mcp.MethodSamplingCreateMessage)},
		CreateMessageParams: sampleParams,
	})
	if ctx.Err() != nil {
		return nil, ctx.Err() // cancelled, like slow: no result is wanted
	}
	if err != nil {
		return mcp.NewToolResultErrorf("the client did not answer sampling/createMessage: %v", err), nil
	}
	return sampleResult(answer), nil
}

// sampleResult returns the text of the model's message, or a tool error when
// it has none.
func sampleResult(answer *mcp.CreateMessageResult) *mcp.CallToolResult {
	// The content arrives decoded on one route and as a JSON object on the
	// other; ParseSamplingContent makes both content values.
	content, err := mcp.ParseSamplingContent(answer.Content)
	if err != nil {
		return mcp.NewToolResultErrorf("unreadable sampling content: %v", err)
	}
	blocks := []any{content}
	if list, ok := content.([]mcp.Content); ok {
		blocks = blocks[:0]
		for _, block := range list {
			blocks = append(blocks, block)
		}
	}
	var texts []string
	for _, block := range blocks {
		switch c := block.(type) {
		case mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		}
	}
	if len(texts) == 0 {
		return mcp.NewToolResultError("the client's model answered without text")
	}
	return mcp.NewToolResultText(strings.Join(texts, "\n"))
}

// elicitParams is the form elicit asks the client's user to fill in.
var elicitParams = mcp.ElicitationParams{
	Mode:    mcp.ElicitationModeForm,
	Message: "mcpchaos would like to know your name.",
	RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "description": "Your name."},
		},
		"required": []string{"name"},
	},
}

// elicit asks the client's user to fill in a form the way roots asks for
// roots: an elicitation/create request up to 2025-11-25, an input_required
// result from 2026-07-28. It returns what the user did, not what they typed.
func (t tools) elicit(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer := server.ElicitationResponse(req.Params.InputResponses, elicitKey); answer != nil {
		return elicitResult(answer), nil
	}
	if clientCapabilities(ctx).Elicitation == nil {
		return mcp.NewToolResultError("the client did not declare the elicitation capability, so it cannot be asked to fill in a form"), nil
	}
	if server.IsModernRequest(ctx) {
		return server.NewInputRequestBuilder("").Elicit(elicitKey, elicitParams).ToolResult(), nil
	}

	wait, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	answer, err := t.s.RequestElicitation(wait, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  elicitParams,
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return mcp.NewToolResultErrorf("the client did not answer elicitation/create: %v", err), nil
	}
	return elicitResult(answer), nil
}

func elicitResult(answer *mcp.ElicitationResult) *mcp.CallToolResult {
	switch answer.Action {
	case mcp.ElicitationResponseActionAccept, mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
		return mcp.NewToolResultText(string(answer.Action))
	}
	return mcp.NewToolResultErrorf("the client answered elicitation/create with action %q, which is none of accept, decline, cancel", answer.Action)
}

// pingClient pings the client. Only up to 2025-11-25 can a server send a
// request, ping included; the 2026-07-28 revision has no server-to-client
// requests, and unlike roots, sampling and elicitation no input_required
// equivalent, so there the tool says so in a tool error.
func (t tools) pingClient(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if server.IsModernRequest(ctx) {
		return mcp.NewToolResultError("protocol revision 2026-07-28 has no server-to-client requests, so the client cannot be pinged"), nil
	}
	if t.ping == nil {
		return mcp.NewToolResultError("this transport cannot ping the client; serve with ServeStdio"), nil
	}
	wait, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	err := t.ping(wait)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return mcp.NewToolResultErrorf("the client did not answer ping: %v", err), nil
	}
	return mcp.NewToolResultText("pong"), nil
}

func (t tools) big(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	kib, err := intArg(req, "kib", 256)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if kib < 0 || kib > maxBigKiB {
		return mcp.NewToolResultErrorf("kib must be between 0 and %d, got %d", maxBigKiB, kib), nil
	}
	return mcp.NewToolResultText(strings.Repeat(bigPattern, kib*1024/len(bigPattern))), nil
}

// intArg reads the integer argument name, def when it is absent. Anything
// else its inputSchema refuses (a fraction, a string, null) is an error the
// tool answers with, where mcp-go's GetInt would take 0.5 for 0 and "x" for
// the default: a server must validate its tools' inputs.
func intArg(req mcp.CallToolRequest, name string, def int) (int, error) {
	v, ok := req.GetArguments()[name]
	if !ok {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		// What JSON decodes to: an integer only without a fraction.
		if n == math.Trunc(n) && math.Abs(n) <= 1<<53 {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("%s must be an integer, got %v", name, v)
}
