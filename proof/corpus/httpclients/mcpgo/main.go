// Command mcpgo is a client on mcp-go (github.com/mark3labs/mcp-go, the
// version go.mod requires) as its examples/simple_client writes one: a 30 s
// context for the session, transport.NewStreamableHTTP, Initialize,
// ListTools, then CallTool of the tool named by its first argument with the
// JSON arguments of its second, and log.Fatalf on any error (exit 1). It
// connects to $MCPCHAOS_SERVER_URL. (proof/httpclient_corpus_test.go)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatalf("usage: mcpgo TOOL ARGUMENTS_JSON")
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(os.Args[2]), &args); err != nil {
		log.Fatalf("arguments: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	httpTransport, err := transport.NewStreamableHTTP(os.Getenv("MCPCHAOS_SERVER_URL"))
	if err != nil {
		log.Fatalf("Failed to create HTTP transport: %v", err)
	}
	c := client.NewClient(httpTransport)
	defer c.Close()

	initRequest := mcp.InitializeRequest{}
	initRequest.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	initRequest.Params.ClientInfo = mcp.Implementation{Name: "MCP-Go Simple Client Example", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, initRequest); err != nil {
		log.Fatalf("Failed to initialize: %v", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		log.Fatalf("Failed to list tools: %v", err)
	}
	fmt.Printf("Server has %d tools available\n", len(tools.Tools))

	call := mcp.CallToolRequest{}
	call.Params.Name = os.Args[1]
	call.Params.Arguments = args
	result, err := c.CallTool(ctx, call)
	if err != nil {
		log.Fatalf("Failed to call tool: %v", err)
	}
	fmt.Printf("result: isError=%v, %d content items\n", result.IsError, len(result.Content))
}
