#!/usr/bin/env node
// An MCP client on the official TypeScript SDK (the version pinned in
// package.json) that uses the server surface beyond a plain call, following
// the contract of `mcpchaos test-client` (it launches MCPCHAOS_SERVER_COMMAND
// over stdio): it subscribes to the bundled server's example://hello, calls
// the research tool as a task with the SDK's experimental task API
// (client.experimental.tasks.callToolStream: the SDK polls tasks/get and
// fetches tasks/result), calls touch (an update for the subscription),
// unsubscribes, closes, and exits
//   0  the task completed and its result came
//   1  the session failed (the error and its stack on stderr)
//   2  usage error
// `go test ./proof -run TestTypeScriptTaskClient` keeps what mcpchaos finds.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';

const SDK_VERSION = JSON.parse(
  readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;
// Longer than any mcpchaos deadline: a stuck client must show as a hang.
const REQUEST_TIMEOUT_MS = 5 * 60 * 1000;
const RESOURCE = 'example://hello';

const t0 = performance.now();
function log(msg) {
  console.log(`[ts-task-client ${((performance.now() - t0) / 1000).toFixed(3).padStart(7)}s] ${msg}`);
}

function serverArgv() {
  let argv;
  try {
    argv = JSON.parse(process.env.MCPCHAOS_SERVER_COMMAND ?? '');
  } catch {
    argv = undefined;
  }
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
    const err = new Error('MCPCHAOS_SERVER_COMMAND must be set to a non-empty JSON array of strings (the server argv)');
    err.usage = true;
    throw err;
  }
  return argv;
}

async function main(session) {
  const [command, ...args] = serverArgv();
  const transport = new StdioClientTransport({ command, args, env: { ...process.env } });
  const client = new Client({ name: 'mcpchaos-ts-task-client', version: SDK_VERSION }, { capabilities: {} });
  client.onerror = (err) => log(`onerror: ${err?.message ?? err}`);
  let updates = 0;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates++;
    if (updates <= 3) log(`resources/updated ${n.params.uri}`);
  });
  session.client = client;

  log(`@modelcontextprotocol/sdk ${SDK_VERSION}: launching ${JSON.stringify([command, ...args])}`);
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  await client.subscribeResource({ uri: RESOURCE }, { timeout: REQUEST_TIMEOUT_MS });
  log(`subscribed to ${RESOURCE}`);

  let result;
  const stream = client.experimental.tasks.callToolStream(
    { name: 'research', arguments: { topic: 'chaos' } },
    undefined,
    { timeout: REQUEST_TIMEOUT_MS, task: { ttl: 60000 } },
  );
  for await (const message of stream) {
    switch (message.type) {
      case 'taskCreated':
        log(`task created: ${message.task.taskId}`);
        break;
      case 'taskStatus':
        log(`task status: ${message.task.status}`);
        break;
      case 'result':
        result = message.result;
        break;
      case 'error':
        throw message.error;
    }
  }
  const text = (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');
  log(`research returned: ${JSON.stringify(text)}`);
  if (!text) throw new Error('the task ended without a result');

  await client.callTool({ name: 'touch', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT_MS });
  await client.unsubscribeResource({ uri: RESOURCE }, { timeout: REQUEST_TIMEOUT_MS });
  log(`unsubscribed after ${updates} updates`);
  await client.close();
  log('closed');
}

const session = {};
try {
  await main(session);
  process.exitCode = 0;
} catch (err) {
  await session.client?.close().catch(() => {});
  if (err?.usage) {
    console.error(`ts-task-client: ${err.message}`);
    process.exitCode = 2;
  } else {
    log(`FAILED: ${err?.name ?? 'Error'}: ${err?.message ?? err}`);
    console.error(err?.stack ?? String(err));
    process.exitCode = 1;
  }
}
