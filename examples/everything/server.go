package everything

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Name is the server name reported in serverInfo.
const Name = "mcpchaos-everything"

// Version is the server version reported in serverInfo.
const Version = "0.1.0"

// HelloURI is the URI of the one text resource.
const HelloURI = "example://hello"

// HelloText is the content of the HelloURI resource.
const HelloText = "Hello from mcpchaos-everything."

// New returns the server with its tools, prompt and resource registered, for
// use with any mcp-go transport. Notifications sent from tools go through
// mcp-go's per-session queue, which may deliver them after the response of the
// call that sent them; ServeStdio does not have that problem.
func New() *server.MCPServer {
	return newServer(nil, nil)
}

// newServer builds the server. write, when not nil, sends a notification to
// the client before returning; ping, when not nil, pings the client and waits
// for its answer. See ServeStdio.
//
// List-changed is advertised for tools, prompts and resources because the
// list_changed tool sends all three notifications, and a well-behaved server
// only sends notifications its capabilities announce.
func newServer(write func(mcp.JSONRPCNotification) error, ping func(context.Context) error) *server.MCPServer {
	subs := &subscriptions{m: map[string]map[string]bool{}}
	s := server.NewMCPServer(Name, Version,
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{}),
		server.WithResourceCompletionProvider(completer{}),
		server.WithTaskCapabilities(true, true, true),
		server.WithHooks(subs.hooks()),
		server.WithRecovery(),
		server.WithInstructions("A test server for mcpchaos: every tool exercises one protocol feature."),
	)
	t := tools{s: s, write: write, ping: ping}

	// mcp-go's defaults describe a tool that may destroy things in the
	// outside world; none of these touch anything.
	harmless := func(opts ...mcp.ToolOption) []mcp.ToolOption {
		return append(opts,
			mcp.WithReadOnlyHintAnnotation(true),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithOpenWorldHintAnnotation(false),
		)
	}

	s.AddTool(mcp.NewTool("echo", harmless(
		mcp.WithDescription("Returns the given text."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to return.")),
	)...), t.echo)
	s.AddTool(mcp.NewTool("slow", harmless(
		mcp.WithDescription("Waits ms milliseconds in steps, sending a progress notification per step when the request carries a progress token."),
		mcp.WithInteger("ms", mcp.DefaultNumber(200), mcp.Min(0), mcp.Max(maxSlowMS), mcp.Description("Total time to take.")),
		mcp.WithInteger("steps", mcp.DefaultNumber(5), mcp.Min(1), mcp.Max(maxSlowSteps), mcp.Description("Number of progress notifications.")),
	)...), t.slow)
	s.AddTool(mcp.NewTool("list_changed", harmless(
		mcp.WithDescription("Sends tools, prompts and resources list_changed notifications, then returns."),
	)...), t.listChanged)
	s.AddTool(mcp.NewTool("roots", harmless(
		mcp.WithDescription("Asks the client for its roots and returns how many it has."),
	)...), t.roots)
	s.AddTool(mcp.NewTool("sample", harmless(
		mcp.WithDescription("Asks the client's model for a short reply (sampling/createMessage) and returns its text."),
	)...), t.sample)
	s.AddTool(mcp.NewTool("elicit", harmless(
		mcp.WithDescription("Asks the client's user for a name (elicitation/create) and returns their action: accept, decline or cancel."),
	)...), t.elicit)
	s.AddTool(mcp.NewTool("ping_client", harmless(
		mcp.WithDescription("Pings the client and returns pong once it answers."),
	)...), t.pingClient)
	s.AddTool(mcp.NewTool("big", harmless(
		mcp.WithDescription("Returns a text result of the given size."),
		mcp.WithInteger("kib", mcp.DefaultNumber(256), mcp.Min(0), mcp.Max(maxBigKiB), mcp.Description("Size of the text in KiB.")),
	)...), t.big)

	s.AddPrompt(mcp.NewPrompt("greet",
		mcp.WithPromptDescription("A greeting for the given name."),
		mcp.WithArgument("name", mcp.ArgumentDescription("Who to greet; defaults to \"world\".")),
	), greet)

	s.AddResource(mcp.NewResource(HelloURI, "hello",
		mcp.WithResourceDescription("A short text resource."),
		mcp.WithMIMEType("text/plain"),
	), hello)
	addSurface(s, t, subs, harmless)

	return s
}

func greet(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Arguments["name"]
	if name == "" {
		name = "world"
	}
	return mcp.NewGetPromptResult("A greeting", []mcp.PromptMessage{
		mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf("Hello, %s!", name))),
	}), nil
}

func hello(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	return []mcp.ResourceContents{mcp.TextResourceContents{
		URI:      HelloURI,
		MIMEType: "text/plain",
		Text:     HelloText,
	}}, nil
}
