// Package chaos is the transport of mcpchaos: it starts the server process,
// frames both directions of an stdio MCP session into messages, relays them
// byte for byte, carries out what the fault plan decides (inject, stall, close
// a pipe), runs the stdio shutdown ladder, and records every event in the
// transcript that the judge reads.
package chaos
