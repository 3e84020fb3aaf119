#!/usr/bin/env node
// The FIXED twin of ../planted/server.mjs: the same server, but its handler
// for notifications/roots/list_changed logs with console.error, to stderr.
// On stdio, stdout carries the JSON-RPC messages and nothing else; logging
// belongs on stderr (MCP, Basic › Transports › stdio).
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
  console.error('roots changed: cache cleared'); // FIXED: logs go to stderr
});

server.registerTool('roots', { description: 'How many roots the client has.' }, async () => {
  roots ??= (await server.server.listRoots()).roots;
  return { content: [{ type: 'text', text: `${roots.length} roots` }] };
});

await server.connect(new StdioServerTransport());
console.error(`node-test-example: serving on stdio, pid ${process.pid}`);
