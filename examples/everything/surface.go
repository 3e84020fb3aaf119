package everything

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ItemTemplate is the resource template the server lists: items by id.
const ItemTemplate = "example://items/{id}"

// styles are the values of the summarize prompt's style argument, offered
// by completion/complete.
var styles = []string{"brief", "detailed"}

// renderTime is how long the summarize prompt and an item take to make, as
// a prompt or resource that reads a file or a database does. It is what
// lets eof-surface and cut-surface do what they are for on this server: the
// probe sends its prompts/get and resources/read together, and handlers
// that answered at once could all be done before the last of them arrived
// (seen on a loaded machine over HTTP, where each is its own POST), so the
// two were never in flight at once and the scenario could not fire.
const renderTime = 100 * time.Millisecond

// render waits renderTime, or until the request is cancelled.
func render(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(renderTime):
		return nil
	}
}

// researchSteps and researchStep shape the research tool's work.
const (
	researchSteps = 3
	researchStep  = 100 * time.Millisecond
)

// subscriptions tracks, per session, the resources its client subscribed
// to: mcp-go acknowledges resources/subscribe and leaves the bookkeeping to
// the server, through hooks.
type subscriptions struct {
	mu sync.Mutex
	m  map[string]map[string]bool // session id -> URIs
}

func sessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// maxTaskTTL caps the lifetime of the tasks the server keeps, as a receiver
// may (MCP 2025-11-25, Tasks: "Receivers MAY override the requested ttl"):
// mcp-go forgets a task from a goroutine that sleeps its ttl out, and a
// server run inside a test must not leave those behind for a minute.
const maxTaskTTL = 4000

func (s *subscriptions) hooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddBeforeCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest) {
		if t := req.Params.Task; t != nil && (t.TTL == nil || *t.TTL > maxTaskTTL) {
			ttl := int64(maxTaskTTL)
			t.TTL = &ttl
		}
	})
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		s.mu.Lock()
		defer s.mu.Unlock()
		id := sessionID(ctx)
		if s.m[id] == nil {
			s.m[id] = map[string]bool{}
		}
		s.m[id][req.Params.URI] = true
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.m[sessionID(ctx)], req.Params.URI)
	})
	return h
}

func (s *subscriptions) has(ctx context.Context, uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[sessionID(ctx)][uri]
}

// completer offers the values the server knows: the summarize prompt's
// styles and a few item ids.
type completer struct{}

func (completer) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if prompt != "summarize" || arg.Name != "style" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return &mcp.Completion{Values: withPrefix(styles, arg.Value)}, nil
}

func (completer) CompleteResourceArgument(_ context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if uri != ItemTemplate || arg.Name != "id" {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return &mcp.Completion{Values: withPrefix([]string{"1", "2", "3"}, arg.Value)}, nil
}

func withPrefix(values []string, prefix string) []string {
	out := []string{}
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// addSurface registers what the server offers beyond its tools' calls: a
// prompt with a completable argument, a resource template, and the tools
// that exercise tasks, logging and subscriptions.
func addSurface(s *server.MCPServer, t tools, subs *subscriptions, harmless func(...mcp.ToolOption) []mcp.ToolOption) {
	s.AddPrompt(mcp.NewPrompt("summarize",
		mcp.WithPromptDescription("Asks for a summary of the hello resource in the given style."),
		mcp.WithArgument("style", mcp.RequiredArgument(), mcp.ArgumentDescription("brief or detailed (completion/complete offers them)")),
	), summarize)
	s.AddResourceTemplate(mcp.NewResourceTemplate(ItemTemplate, "item",
		mcp.WithTemplateDescription("An item by id."),
		mcp.WithTemplateMIMEType("text/plain"),
	), item)
	s.AddTool(mcp.NewTool("research", harmless(
		mcp.WithDescription("Researches a topic in three steps, reporting progress; may run as a task (execution.taskSupport optional)."),
		mcp.WithString("topic", mcp.Description("What to research; defaults to \"mcp\".")),
		mcp.WithTaskSupport(mcp.TaskSupportOptional),
	)...), t.research)
	s.AddTool(mcp.NewTool("log", harmless(
		mcp.WithDescription("Logs a debug, an info and a warning message; the server sends those at or above the level the client set."),
	)...), t.log)
	s.AddTool(mcp.NewTool("touch", harmless(
		mcp.WithDescription("Changes the hello resource: a client subscribed to it gets notifications/resources/updated."),
	)...), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !subs.has(ctx, HelloURI) {
			return mcp.NewToolResultText("changed; nobody is subscribed to " + HelloURI), nil
		}
		if err := t.notify(ctx, "notifications/resources/updated", map[string]any{"uri": HelloURI}); err != nil {
			return mcp.NewToolResultError("changed, but the update could not be sent: " + err.Error()), nil
		}
		return mcp.NewToolResultText("changed; the subscriber was told"), nil
	})
}

func summarize(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	style := req.Params.Arguments["style"]
	if style == "" {
		return nil, fmt.Errorf("style is required (%s)", strings.Join(styles, " or "))
	}
	if err := render(ctx); err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult("A summary request", []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf("Give a %s summary of %s.", style, HelloURI))),
	}), nil
}

func item(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id := strings.TrimPrefix(req.Params.URI, "example://items/")
	if id == "" || strings.Contains(id, "/") {
		return nil, fmt.Errorf("no item at %s", req.Params.URI)
	}
	if err := render(ctx); err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "Item " + id + "."}}, nil
}

// research works in steps, with progress when the call carries a token; as
// a task, mcp-go runs it in the background and keeps its result for
// tasks/result.
func (t tools) research(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// mcp-go v1.2.1 runs a task under the context of the request that
	// created it, which ends once the CreateTaskResult is sent
	// (mark3labs/mcp-go #897): the work would be cancelled at once, and the
	// task with it. The work is short, so it runs to its end whatever the
	// context says; tasks/cancel still marks the task cancelled.
	ctx = context.WithoutCancel(ctx)
	topic := req.GetString("topic", "mcp")
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i := 1; i <= researchSteps; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(researchStep):
		}
		if token != nil {
			_ = t.notify(ctx, "notifications/progress", map[string]any{"progressToken": token, "progress": i, "total": researchSteps})
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("Research on %s: %d sources read.", topic, researchSteps)), nil
}

// log sends one message per level; mcp-go drops those below the session's
// level (logging/setLevel), or the request's in the 2026-07-28 revision.
func (t tools) log(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for _, l := range []mcp.LoggingLevel{mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelWarning} {
		_ = t.s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(l, Name, "a "+string(l)+" message"))
	}
	return mcp.NewToolResultText("logged"), nil
}
