// A streamable-HTTP MCP server on the TypeScript SDK (@modelcontextprotocol/sdk)
// written as the SDK's README shows one ("Streamable HTTP", "With Session
// Management" and "Without Session Management (Stateless)" of the 1.16.0
// README; the same shape as src/examples/server/simpleStreamableHttp.ts and
// simpleStatelessStreamableHttp.ts of 1.32.2): an express app, POST, GET and
// DELETE on /mcp, a map of transports by session id, isInitializeRequest to
// start a session, sessionIdGenerator: () => randomUUID(), and
// onsessioninitialized storing the transport.
//
//   node ts_server.mjs PORT MODE
//
// serves http://127.0.0.1:PORT/mcp and writes "listening on port PORT" to
// stderr when ready. MODE is one of
//
//   shared                 ONE McpServer, built at module top level, connected
//                          to each new session's transport (the pattern of
//                          GHSA-345p-7cg4-v4c7: before 1.26.0 whatever a
//                          handler sends goes to the last connected
//                          transport, and so does its response, except, from
//                          1.17.1 (PR #820), for a request that arrived before
//                          the other session connected; from 1.26.0 the
//                          second connect throws "Already connected to a
//                          transport").
//   per-session            a new McpServer from getServer() for each session
//                          (the README's pattern, the fix).
//   stateless-shared       sessionIdGenerator: undefined, ONE transport and ONE
//                          server, connected at start-up, for every request
//                          (1.26.0 and later throw "Stateless transport cannot
//                          be reused across requests" from the second request,
//                          which the SDK's own Node adapter answers 500 with
//                          an empty body, logging nothing).
//   stateless-per-request  sessionIdGenerator: undefined, a new transport and
//                          server for each POST, closed when the response
//                          closes (the README's stateless example).
//
// Tools: echo {message} waits ~100 ms (so that the calls of two sessions
// overlap), then sends, through the handler's extra.sendNotification, one
// notifications/progress when the request's _meta.progressToken is set and
// one notifications/message (logging, level info, data "echo MESSAGE"), then
// answers the message as text; add {a, b} answers a+b as text. The
// environment variable ECHO_DELAY_MS sets the wait (default 100). Errors the
// SDK reports through the server's onerror (a response or notification that
// finds no stream) are logged to stderr.
//
// The stateful POST handler has no try/catch, as the README's: an error
// (such as connect's "Already connected to a transport") rejects the handler,
// and express 5 answers it with its default 500 and logs the stack to stderr.
// The stateless handlers catch as the README's stateless example does: 500,
// JSON-RPC error -32603 "Internal server error".
//
// Runs unchanged on 1.16.0 and 1.32.2: both have McpServer.registerTool,
// StreamableHTTPServerTransport, isInitializeRequest and the handler's
// extra.sendNotification (TS_APP=mcp needs 1.24.0 or later); zod is whichever the SDK installed beside it
// (3.25 for 1.16.0, 4 for 1.32.2), imported as "zod". Logs go to stderr,
// never stdout. SIGTERM closes the HTTP server and exits 0.
//
// proof tests copy it beside each pinned SDK release in .corpus
// (.corpus/ts-client-VERSION, scripts/install-corpus) so that its imports
// resolve to that release.
import express from "express";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const MODES = ["shared", "per-session", "stateless-shared", "stateless-per-request"];
const [portArg, mode] = process.argv.slice(2);
const PORT = Number(portArg);
if (!Number.isInteger(PORT) || PORT <= 0 || !MODES.includes(mode)) {
  console.error(`usage: node ts_server.mjs PORT ${MODES.join("|")}`);
  process.exit(2);
}

// ECHO_DELAY_MS (default 100) is how long echo waits before it notifies and
// answers: a wider window for runs on a loaded machine.
const ECHO_DELAY_MS = Number(process.env.ECHO_DELAY_MS ?? 100);
const log = (...args) => console.error(`ts_server[${mode}]:`, ...args);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// getServer builds an McpServer with the two tools.
const getServer = () => {
  const server = new McpServer(
    { name: "mcpchaos-ts-server", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  // Not in the README: errors the SDK would otherwise drop (a response or
  // notification that finds no stream), logged so that a run shows them.
  server.server.onerror = (error) => log("server error:", error?.message ?? error);

  server.registerTool(
    "echo",
    {
      title: "Echo",
      description: "Echoes the message back after ~100 ms, with one progress notification and one log message",
      inputSchema: { message: z.string() },
    },
    async ({ message }, extra) => {
      await sleep(ECHO_DELAY_MS);
      if (extra._meta?.progressToken !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: extra._meta.progressToken, progress: 1, total: 1, message: `echo ${message}` },
        });
      }
      await extra.sendNotification({
        method: "notifications/message",
        params: { level: "info", logger: "echo", data: `echo ${message}` },
      });
      return { content: [{ type: "text", text: message }] };
    },
  );

  server.registerTool(
    "add",
    {
      title: "Add",
      description: "Adds two numbers",
      inputSchema: { a: z.number(), b: z.number() },
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );

  return server;
};

// TS_APP=mcp builds the app with createMcpExpressApp() (1.24.0 and later),
// as the SDK's examples do since its DNS-rebinding advisory
// (GHSA-w48q-cv73-mx4w): it validates the Host header of a server bound to
// 127.0.0.1.
const app =
  process.env.TS_APP === "mcp"
    ? (await import("@modelcontextprotocol/sdk/server/express.js")).createMcpExpressApp()
    : express();
app.use(express.json());

if (mode === "shared" || mode === "per-session") {
  // shared: one server for every session, built once at start-up.
  const sharedServer = mode === "shared" ? getServer() : undefined;

  // Map to store transports by session ID
  const transports = {};

  // Handle POST requests for client-to-server communication
  app.post("/mcp", async (req, res) => {
    // Check for existing session ID
    const sessionId = req.headers["mcp-session-id"];
    let transport;

    if (sessionId && transports[sessionId]) {
      // Reuse existing transport
      transport = transports[sessionId];
    } else if (!sessionId && isInitializeRequest(req.body)) {
      // New initialization request
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          // Store the transport by session ID
          log(`session initialized: ${sessionId}`);
          transports[sessionId] = transport;
        },
      });

      // Clean up transport when closed
      transport.onclose = () => {
        if (transport.sessionId) {
          log(`session closed: ${transport.sessionId}`);
          delete transports[transport.sessionId];
        }
      };

      // Connect to the MCP server
      const server = sharedServer ?? getServer();
      await server.connect(transport);
    } else {
      // Invalid request
      res.status(400).json({
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message: "Bad Request: No valid session ID provided",
        },
        id: null,
      });
      return;
    }

    // Handle the request
    await transport.handleRequest(req, res, req.body);
  });

  // Reusable handler for GET and DELETE requests
  const handleSessionRequest = async (req, res) => {
    const sessionId = req.headers["mcp-session-id"];
    if (!sessionId || !transports[sessionId]) {
      res.status(400).send("Invalid or missing session ID");
      return;
    }
    const transport = transports[sessionId];
    await transport.handleRequest(req, res);
  };

  // Handle GET requests for server-to-client notifications via SSE
  app.get("/mcp", handleSessionRequest);

  // Handle DELETE requests for session termination
  app.delete("/mcp", handleSessionRequest);
} else {
  // stateless-shared: one transport and one server for every request.
  let sharedTransport;
  if (mode === "stateless-shared") {
    const server = getServer();
    sharedTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(sharedTransport);
  }

  app.post("/mcp", async (req, res) => {
    try {
      if (sharedTransport) {
        await sharedTransport.handleRequest(req, res, req.body);
        return;
      }
      // In stateless mode, create a new instance of transport and server for each request
      // to ensure complete isolation. A single instance would cause request ID collisions
      // when multiple clients connect concurrently.
      const server = getServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
      });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      log("Error handling MCP request:", error);
      if (!res.headersSent) {
        res.status(500).json({
          jsonrpc: "2.0",
          error: {
            code: -32603,
            message: "Internal server error",
          },
          id: null,
        });
      }
    }
  });

  // SSE notifications not supported in stateless mode
  // Session termination not needed in stateless mode
  const methodNotAllowed = async (req, res) => {
    res.writeHead(405).end(
      JSON.stringify({
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message: "Method not allowed.",
        },
        id: null,
      }),
    );
  };
  app.get("/mcp", methodNotAllowed);
  app.delete("/mcp", methodNotAllowed);
}

const httpServer = app.listen(PORT, "127.0.0.1", (error) => {
  if (error) {
    log("Failed to start server:", error);
    process.exit(1);
  }
  log(`listening on port ${PORT}`);
});

process.on("SIGTERM", () => {
  log("SIGTERM: closing");
  httpServer.close(() => process.exit(0));
  // Open SSE streams would keep close() waiting.
  httpServer.closeAllConnections?.();
  setTimeout(() => process.exit(0), 2000).unref();
});
