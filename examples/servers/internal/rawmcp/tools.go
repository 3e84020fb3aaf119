package rawmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrStateless is the error of a server-to-client request made while handling
// a stateless-era request: that era has no server-to-client requests.
var ErrStateless = errors.New("rawmcp: no server-to-client requests in the stateless era")

// Tool is one tool. Run's text is the result's one text content; an error
// becomes a result with isError set, as MCP reports tool failures.
type Tool struct {
	Name        string
	Description string
	InputSchema map[string]any // nil means {"type":"object"}
	// TaskSupport is execution.taskSupport: "" (forbidden), "optional"
	// or "required" (MCP 2025-11-25, Tasks).
	TaskSupport string
	Run         func(ctx context.Context, c *Call) (string, error)
}

func (t Tool) listing() map[string]any {
	schema := t.InputSchema
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	l := map[string]any{"name": t.Name, "description": t.Description, "inputSchema": schema}
	if t.TaskSupport != "" {
		l["execution"] = map[string]any{"taskSupport": t.TaskSupport}
	}
	return l
}

// Call is one tools/call being handled.
type Call struct {
	Era           Era
	Arguments     json.RawMessage
	ProgressToken json.RawMessage // nil when the request had none
	srv           *Server
}

// Decode decodes the call's arguments into v; absent arguments leave v as is.
func (c *Call) Decode(v any) error {
	if len(c.Arguments) == 0 || string(c.Arguments) == "null" {
		return nil
	}
	if err := json.Unmarshal(c.Arguments, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// Progress sends notifications/progress for the call's progress token; it does
// nothing when the request carried none.
func (c *Call) Progress(progress, total float64) error {
	if c.ProgressToken == nil {
		return nil
	}
	return c.srv.Notify("notifications/progress", map[string]any{
		"progressToken": c.ProgressToken,
		"progress":      progress,
		"total":         total,
	})
}

// Request sends a request to the client and waits for the answer (see
// Server.Request); in the stateless era it fails with ErrStateless.
func (c *Call) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if c.Era == Stateless {
		return nil, ErrStateless
	}
	return c.srv.Request(ctx, method, params)
}

func (s *Server) callTool(ctx context.Context, era Era, params json.RawMessage) (map[string]any, *Error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid tools/call params: " + err.Error()}
	}
	for _, t := range s.Tools {
		if t.Name != p.Name {
			continue
		}
		text, err := t.Run(ctx, &Call{Era: era, Arguments: p.Arguments, ProgressToken: p.Meta.ProgressToken, srv: s})
		if err != nil {
			return map[string]any{"content": textContent(err.Error()), "isError": true}, nil
		}
		return map[string]any{"content": textContent(text)}, nil
	}
	return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
}

func textContent(text string) []map[string]any {
	return []map[string]any{{"type": "text", "text": text}}
}

// Echo is the tool every example has: it answers its text argument.
func Echo() Tool {
	return Tool{
		Name:        "echo",
		Description: "Answers its text argument.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"text": map[string]any{"type": "string"}},
		},
		Run: func(_ context.Context, c *Call) (string, error) {
			var args struct {
				Text string `json:"text"`
			}
			if err := c.Decode(&args); err != nil {
				return "", err
			}
			return args.Text, nil
		},
	}
}

// Slow is the other tool every example has: it takes ms milliseconds (300 by
// default), sending three notifications/progress on the way when the request
// carries a progress token, then answers.
func Slow() Tool {
	return Tool{
		Name:        "slow",
		Description: "Takes ms milliseconds (default 300), reporting progress three times, then answers.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"ms": map[string]any{"type": "integer", "default": 300}},
		},
		Run: func(ctx context.Context, c *Call) (string, error) {
			args := struct {
				MS int `json:"ms"`
			}{MS: 300}
			if err := c.Decode(&args); err != nil {
				return "", err
			}
			step := time.Duration(args.MS) * time.Millisecond / 3
			for i := 1; i <= 3; i++ {
				select {
				case <-time.After(step):
				case <-ctx.Done():
					return "", ctx.Err()
				}
				_ = c.Progress(float64(i), 3)
			}
			return fmt.Sprintf("slept %dms", args.MS), nil
		},
	}
}
