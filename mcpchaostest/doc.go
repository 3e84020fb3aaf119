// Package mcpchaostest runs an MCP server through mcpchaos's fault
// scenarios inside go test, and fails the test with each finding and the
// command that replays it.
//
// A server in Go is tested as a stdio command (Config.Command), as an
// mcp-go *server.MCPServer in the test's own process (Config.Server, served
// on streamable HTTP on a loopback port for the run), or as an HTTP server
// already running (Config.URL):
//
//	func TestServerUnderFaults(t *testing.T) {
//		mcpchaostest.Run(t, mcpchaostest.Config{Server: newMyServer()})
//	}
//
// The run is the one `mcpchaos test` makes: a no-fault baseline, then the
// default matrix of the transport (or Config.Scenarios), with a fixed seed
// so a failure replays. No process, goroutine or connection of the run
// outlives it.
package mcpchaostest
