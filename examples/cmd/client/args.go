package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/pflag"
)

const usageLine = "client [--call NAME=JSON]... [--timeout 20s] [--settle 200ms] [--protocol VERSION] (-- SERVER_CMD ARGS... | --url URL [--listen])"

const help = "usage: " + usageLine + `

Starts SERVER_CMD and speaks MCP to it over stdio, or with --url connects to an
MCP endpoint over streamable HTTP; calls tools and prints what it sees. Run by
mcpchaos test-client, it takes the server from MCPCHAOS_SERVER_COMMAND (stdio)
or MCPCHAOS_SERVER_URL (HTTP).

  --url URL            the server's MCP endpoint, over streamable HTTP
  --listen             over HTTP, open the GET stream for the server's own
                       messages (mcp-go's continuous listening, off by default)

  --call NAME=JSON     call tool NAME with the JSON object as arguments (repeatable;
                       default: echo, slow and list_changed)
  --timeout DURATION   deadline for the whole session (default 20s)
  --settle DURATION    keep listening this long after the last call for late
                       notifications (default 200ms)
  --protocol VERSION   pin the protocol revision, e.g. 2025-11-25 (default: newest)
`

// errHelp reports that --help was asked for.
var errHelp = errors.New("help requested")

// call is one tools/call to make.
type call struct {
	name string
	args map[string]any
}

type config struct {
	calls    []call
	timeout  time.Duration
	settle   time.Duration
	protocol string
	command  []string
	// url, instead of command, is an MCP endpoint over streamable HTTP;
	// listen opens its GET stream.
	url    string
	listen bool
}

// defaultCalls touch a plain reply, progress notifications and list_changed
// notifications, the traffic a chaos proxy most often gets wrong.
var defaultCalls = []call{
	{name: "echo", args: map[string]any{"text": "hello"}},
	{name: "slow", args: map[string]any{"ms": 300, "steps": 3}},
	{name: "list_changed", args: map[string]any{}},
}

func parseArgs(args []string) (config, error) {
	fs := pflag.NewFlagSet("client", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run, on one line
	specs := fs.StringArray("call", nil, "")
	cfg := config{}
	fs.DurationVar(&cfg.timeout, "timeout", 20*time.Second, "")
	fs.DurationVar(&cfg.settle, "settle", 200*time.Millisecond, "")
	fs.StringVar(&cfg.protocol, "protocol", "", "")
	fs.StringVar(&cfg.url, "url", "", "")
	fs.BoolVar(&cfg.listen, "listen", false, "")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return config{}, errHelp
		}
		return config{}, err
	}
	dash := fs.ArgsLenAtDash()
	if cfg.url == "" && dash < 0 && os.Getenv("MCPCHAOS_SERVER_COMMAND") == "" {
		cfg.url = os.Getenv("MCPCHAOS_SERVER_URL")
	}
	switch {
	case cfg.url != "" && dash >= 0:
		return config{}, errors.New(`give either --url or a server command after "--", not both`)
	case cfg.url != "":
		if !strings.HasPrefix(cfg.url, "http://") && !strings.HasPrefix(cfg.url, "https://") {
			return config{}, fmt.Errorf("--url %q is not an http:// or https:// URL", cfg.url)
		}
		fs = nil
	case dash < 0 && os.Getenv("MCPCHAOS_SERVER_COMMAND") != "":
		// Run by mcpchaos test-client: the server to launch is given as JSON argv.
		if err := json.Unmarshal([]byte(os.Getenv("MCPCHAOS_SERVER_COMMAND")), &cfg.command); err != nil || len(cfg.command) == 0 {
			return config{}, fmt.Errorf("MCPCHAOS_SERVER_COMMAND is not a JSON array of argv: %q", os.Getenv("MCPCHAOS_SERVER_COMMAND"))
		}
		fs = nil
	case dash < 0:
		return config{}, errors.New(`missing "--" before the server command (or --url, MCPCHAOS_SERVER_COMMAND, MCPCHAOS_SERVER_URL)`)
	case dash > 0:
		return config{}, fmt.Errorf("unexpected %q before \"--\"", fs.Args()[0])
	case len(fs.Args()) == 0:
		return config{}, errors.New(`no server command after "--"`)
	}
	if fs != nil {
		cfg.command = fs.Args()
	}
	if cfg.listen && cfg.url == "" {
		return config{}, errors.New("--listen opens the GET stream of streamable HTTP: give --url (or MCPCHAOS_SERVER_URL)")
	}

	if cfg.timeout <= 0 {
		return config{}, fmt.Errorf("--timeout must be positive, got %v", cfg.timeout)
	}
	if cfg.settle < 0 {
		return config{}, fmt.Errorf("--settle must not be negative, got %v", cfg.settle)
	}
	if cfg.protocol != "" && !mcp.IsValidProtocolVersion(cfg.protocol) {
		return config{}, fmt.Errorf("unknown --protocol %q, want one of %s", cfg.protocol, strings.Join(mcp.ValidProtocolVersions, ", "))
	}

	cfg.calls = defaultCalls
	if len(*specs) > 0 {
		cfg.calls = nil
		for _, spec := range *specs {
			c, err := parseCall(spec)
			if err != nil {
				return config{}, err
			}
			cfg.calls = append(cfg.calls, c)
		}
	}
	return cfg, nil
}

// parseCall parses NAME=JSON, or a bare NAME meaning no arguments.
func parseCall(spec string) (call, error) {
	name, raw, hasArgs := strings.Cut(spec, "=")
	if name == "" {
		return call{}, fmt.Errorf("--call %q has no tool name, want NAME=JSON", spec)
	}
	c := call{name: name, args: map[string]any{}}
	if hasArgs {
		if err := json.Unmarshal([]byte(raw), &c.args); err != nil || c.args == nil {
			return call{}, fmt.Errorf("--call %s: arguments must be a JSON object, got %q", name, raw)
		}
	}
	return c, nil
}
