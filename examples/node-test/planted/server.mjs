#!/usr/bin/env node
// A stdio MCP server on the TypeScript SDK with a PLANTED BUG: when the client
// says its roots changed, the handler logs with console.log, which writes to
// stdout, the very stream that carries the JSON-RPC messages. A client that
// never sends notifications/roots/list_changed never sees it; mcpchaos's
// burst-c2s scenario sends a hundred, and each puts a line that is not JSON
// on the wire: finding protocol-violation, rule not-an-mcp-message, an error.
// The fixed twin (../fixed/server.mjs) differs in that one line.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

const server = new McpServer({ name: 'node-test-example', version: '1.0.0' });

server.registerTool(
  'echo',
  { description: 'Return the text it is given.', inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

server.registerTool(
  'slow',
  { description: 'Wait ms milliseconds (default 500).', inputSchema: { ms: z.number().int().min(0).max(60_000).optional() } },
  async ({ ms = 500 }, { signal }) => {
    await sleep(ms, undefined, { signal });
    return { content: [{ type: 'text', text: `done after ${ms} ms` }] };
  },
);

// The roots the client last reported, fetched again when they change.
let roots;
server.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
  roots = undefined;
  console.log('roots changed: cache cleared'); // BUG: stdout is the protocol stream
});

server.registerTool('roots', { description: 'How many roots the client has.' }, async () => {
  roots ??= (await server.server.listRoots()).roots;
  return { content: [{ type: 'text', text: `${roots.length} roots` }] };
});

await server.connect(new StdioServerTransport());
console.error(`node-test-example: serving on stdio, pid ${process.pid}`);
