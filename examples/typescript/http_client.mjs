#!/usr/bin/env node
// An MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk, the
// version pinned in package.json) over streamable HTTP, following the
// contract of `mcpchaos test-client --server-url`: it connects to the MCP
// endpoint in MCPCHAOS_SERVER_URL with StreamableHTTPClientTransport
// (initialize), lists tools, calls `echo` and then `slow` with an onprogress
// handler, prints each step, closes (DELETE), and exits
//   0  both calls returned a result
//   1  the session failed (the error on stderr, one line)
//   2  usage error (MCPCHAOS_SERVER_URL missing)
// It sets process.exitCode and lets Node exit when nothing is left to do, so
// a handle the SDK leaks (a reconnection timer, an open stream) shows as a
// hang, not hidden by process.exit().
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// Longer than mcpchaos's deadline: a stuck client must show as a hang, not as
// the SDK's own timeout (60 s by default).
const REQUEST_TIMEOUT_MS = 5 * 60 * 1000;

const t0 = performance.now();
function log(msg) {
  console.log(`[ts-http-client ${((performance.now() - t0) / 1000).toFixed(3).padStart(7)}s] ${msg}`);
}

async function main(session) {
  const url = process.env.MCPCHAOS_SERVER_URL;
  if (!url) {
    const err = new Error('MCPCHAOS_SERVER_URL is not set (the server\'s MCP endpoint)');
    err.usage = true;
    throw err;
  }
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'mcpchaos-ts-http-client', version: '0' }, { capabilities: {} });
  client.onerror = (err) => log(`onerror: ${err?.message ?? err}`);
  session.client = client;
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  log(`initialized: server ${client.getServerVersion()?.name}`);
  const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
  log(`tools/list: ${JSON.stringify(tools.map((t) => t.name))}`);
  for (const [name, args] of [['echo', { text: 'hello' }], ['slow', { ms: 300, steps: 3 }]]) {
    let progress = 0;
    const result = await client.callTool({ name, arguments: args }, undefined, {
      timeout: REQUEST_TIMEOUT_MS,
      onprogress: () => { progress++; },
    });
    log(`tools/call ${name} returned (isError=${result.isError ?? false}) after ${progress} progress notifications`);
  }
  await transport.terminateSession().catch((err) => log(`terminateSession: ${err.message}`));
  await client.close();
  log('closed');
}

const session = {};
try {
  await main(session);
  process.exitCode = 0;
} catch (err) {
  await session.client?.close().catch(() => {});
  console.error(`ts-http-client: ${err?.usage ? '' : 'the session failed: '}${err?.message ?? err}`);
  process.exitCode = err?.usage ? 2 : 1;
}
