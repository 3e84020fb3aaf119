package everything

import (
	"context"
	"fmt"
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

// bigPattern is repeated to build big's result; 16 bytes divides a KiB.
const bigPattern = "0123456789abcdef"

// tools holds what handlers need to send notifications and requests to the
// client of the call they are serving.
type tools struct {
	s *server.MCPServer
	// write, when not nil, writes a notification to the client's stream
	// before returning, instead of queueing it with mcp-go.
	write func(mcp.JSONRPCNotification) error
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
	ms, steps := req.GetInt("ms", 200), req.GetInt("steps", 5)
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

func (t tools) big(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	kib := req.GetInt("kib", 256)
	if kib < 0 || kib > maxBigKiB {
		return mcp.NewToolResultErrorf("kib must be between 0 and %d, got %d", maxBigKiB, kib), nil
	}
	return mcp.NewToolResultText(strings.Repeat(bigPattern, kib*1024/len(bigPattern))), nil
}
