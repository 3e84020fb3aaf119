#!/usr/bin/env node
// A client on the TypeScript SDK written as a short script is: it connects
// to the server mcpchaos test-client gives it (the command in
// MCPCHAOS_SERVER_COMMAND over stdio, or MCPCHAOS_SERVER_URL over
// streamable HTTP), lists the tools, calls echo and closes. It catches
// nothing: when a call fails, the SDK's error (McpError, StreamableHTTPError,
// fetch's TypeError) ends it uncaught, with its stack and status 1, which is
// how such a script reports a failure (go test ./proof -run
// TestUncaughtClientsFailCleanly).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.env.MCPCHAOS_SERVER_URL;
let transport;
if (url) {
  transport = new StreamableHTTPClientTransport(new URL(url));
} else {
  const argv = JSON.parse(process.env.MCPCHAOS_SERVER_COMMAND);
  transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1) });
}
const client = new Client({ name: 'mcpchaos-uncaught-client', version: '0' });
await client.connect(transport);
const { tools } = await client.listTools();
console.log(`tools: ${tools.map((t) => t.name).join(' ')}`);
const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
console.log(`result: ${JSON.stringify(result.content)}`);
await client.close();
