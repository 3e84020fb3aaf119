#!/usr/bin/env node
// A stdio MCP server on the official TypeScript SDK (@modelcontextprotocol/sdk,
// the exact version pinned in package.json), written the way the SDK's README
// shows it: McpServer + StdioServerTransport, nothing else. Plain JavaScript,
// no build step: `node examples/typescript/server.mjs` after install.sh.
//
// Tools:
//   echo  {text}   returns text.
//   slow  {ms?}    waits ms milliseconds (default 1000, so that the calls of a
//                  probe that sets required arguments only are still in flight
//                  when a fault strikes); when the request carries a progress
//                  token it sends PROGRESS_STEPS notifications/progress along
//                  the way, then answers.
//   roots {}       asks the client for its roots (a server-to-client
//                  roots/list request, tied to the call) and returns the count.
//
// It is what `mcpchaos test` probes in row 4 of issue 4; see README.md here.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ListRootsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

// The SDK's package.json is not among its exports; read it from node_modules.
const SDK_VERSION = JSON.parse(
  readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;

const PROGRESS_STEPS = 4;
const MAX_MS = 10 * 60 * 1000;

const server = new McpServer({ name: 'mcpchaos-ts-server', version: SDK_VERSION });

server.registerTool(
  'echo',
  {
    description: 'Return the text it is given.',
    inputSchema: { text: z.string() },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason ?? new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

server.registerTool(
  'slow',
  {
    description: `Wait ms milliseconds (default 1000); with a progress token, report progress ${PROGRESS_STEPS} times on the way.`,
    inputSchema: { ms: z.number().int().min(0).max(MAX_MS).optional() },
  },
  async ({ ms = 1000 }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= PROGRESS_STEPS; step++) {
      // extra.signal aborts when the client cancels the call or the
      // connection closes.
      await sleep(ms / PROGRESS_STEPS, extra.signal);
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: step, total: PROGRESS_STEPS, message: `step ${step} of ${PROGRESS_STEPS}` },
        });
      }
    }
    return { content: [{ type: 'text', text: `done after ${ms} ms` }] };
  },
);

server.registerTool(
  'roots',
  {
    description: 'Ask the client for its roots (a server-to-client roots/list request) and return how many it has.',
  },
  async (extra) => {
    // extra.sendRequest ties the request to the call (relatedRequestId); the
    // SDK's default request timeout (60 s) applies, as for any request.
    const result = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
    return { content: [{ type: 'text', text: `${result.roots.length} roots` }] };
  },
);

await server.connect(new StdioServerTransport());
console.error(`mcpchaos-ts-server: @modelcontextprotocol/sdk ${SDK_VERSION} on stdio, pid ${process.pid}`);
