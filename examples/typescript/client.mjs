#!/usr/bin/env node
// An MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk, the
// exact version pinned in package.json), following the contract of
// `mcpchaos test-client`: it launches the server given in
// MCPCHAOS_SERVER_COMMAND (a JSON array of argv) over stdio with
// StdioClientTransport, connects (initialize), lists tools, calls `echo` with
// a progress token and an onprogress handler, prints each step, closes, and
// exits
//   0  the call returned a result
//   1  the session failed (the error and its stack on stderr)
//   2  usage error (MCPCHAOS_SERVER_COMMAND missing or malformed, no such tool)
// It sets process.exitCode and lets Node exit when nothing is left to do, so a
// handle the SDK leaks would show as a hang, not be hidden by process.exit().
//
// Plain JavaScript, no build step: `node examples/typescript/client.mjs` after
// install.sh. See README.md here for what mcpchaos finds.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

// The SDK's package.json is not among its exports; read it from node_modules.
const SDK_VERSION = JSON.parse(
  readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
).version;

// The SDK's default request timeout (DEFAULT_REQUEST_TIMEOUT_MSEC) is 60 s.
// Every request below passes this longer one instead, so that the client has
// no timeout of its own that could end a session before mcpchaos's deadline
// judges it: a stuck client must show as a hang, not as a clean timeout.
const REQUEST_TIMEOUT_MS = 5 * 60 * 1000;

const t0 = performance.now();
function log(msg) {
  console.log(`[ts-client ${((performance.now() - t0) / 1000).toFixed(3).padStart(7)}s] ${msg}`);
}

function serverArgv() {
  const raw = process.env.MCPCHAOS_SERVER_COMMAND;
  let argv;
  try {
    argv = raw ? JSON.parse(raw) : undefined;
  } catch (err) {
    throw usage(`MCPCHAOS_SERVER_COMMAND is not JSON: ${err.message}`);
  }
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
    throw usage('MCPCHAOS_SERVER_COMMAND must be set to a non-empty JSON array of strings (the server argv)');
  }
  return argv;
}

function usage(msg) {
  const err = new Error(msg);
  err.usage = true;
  return err;
}

// Options, for exploring by hand (the test-client matrix runs the defaults):
//   --tool NAME   the tool to call (default echo)
//   --args JSON   its arguments (default {"text": ...} for echo, {} otherwise)
function options() {
  let values;
  try {
    ({ values } = parseArgs({ options: { tool: { type: 'string', default: 'echo' }, args: { type: 'string' } } }));
  } catch (err) {
    throw usage(err.message);
  }
  let toolArgs = values.tool === 'echo' ? { text: 'hello from the TypeScript SDK client' } : {};
  if (values.args !== undefined) {
    try {
      toolArgs = JSON.parse(values.args);
    } catch (err) {
      throw usage(`--args is not JSON: ${err.message}`);
    }
  }
  return { tool: values.tool, toolArgs };
}

async function main(session) {
  const { tool, toolArgs } = options();
  const [command, ...args] = serverArgv();
  // env: the whole environment, so the command runs exactly as given (the SDK
  // would otherwise pass only HOME, LOGNAME, PATH, SHELL, TERM and USER).
  // stderr: inherited (the SDK's default), so the server's stderr is ours.
  const transport = new StdioClientTransport({ command, args, env: { ...process.env } });
  const client = new Client(
    { name: 'mcpchaos-ts-client', version: SDK_VERSION },
    { capabilities: { roots: { listChanged: false } } },
  );
  // Declared and answered, so that a server that asks for roots gets them.
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    log('roots/list from the server: answering with no roots');
    return { roots: [] };
  });
  client.onerror = (err) => log(`onerror: ${err?.message ?? err}`);
  session.client = client;

  log(`@modelcontextprotocol/sdk ${SDK_VERSION}: launching ${JSON.stringify([command, ...args])}`);
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  const info = client.getServerVersion();
  log(`initialized: server ${info?.name} ${info?.version}`);

  const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
  const names = tools.map((t) => t.name);
  log(`tools/list: ${JSON.stringify(names)}`);
  if (!names.includes(tool)) {
    throw usage(`the server offers no ${tool} tool (${JSON.stringify(names)}); pass --tool`);
  }

  let progress = 0;
  // onprogress makes the SDK put _meta.progressToken (the request's id) on
  // the call and route notifications/progress for it here.
  log(`tools/call ${tool} ${JSON.stringify(toolArgs)} with a progress token ...`);
  const result = await client.callTool({ name: tool, arguments: toolArgs }, undefined, {
    timeout: REQUEST_TIMEOUT_MS,
    onprogress: (p) => {
      progress++;
      if (progress <= 3 || progress % 10 === 0) {
        log(`progress #${progress}: ${JSON.stringify(p)}`);
      }
    },
  });
  const out = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');
  log(`tools/call ${tool} returned (isError=${result.isError ?? false}) after ${progress} progress notifications: ${JSON.stringify(out.slice(0, 200))}`);

  await client.close();
  log('closed');
}

const session = {};
try {
  await main(session);
  process.exitCode = 0;
} catch (err) {
  // Close on failure too: a server process still running would keep Node's
  // event loop (and so this client) alive.
  await session.client?.close().catch(() => {});
  if (err?.usage) {
    console.error(`ts-client: ${err.message}`);
    process.exitCode = 2;
  } else {
    log(`FAILED: ${err?.name ?? 'Error'}: ${err?.message ?? err}`);
    // The stack on stderr, printed by us: Node's own uncaught-error report
    // (the one crash signatures match) is for errors nobody caught.
    console.error(err?.stack ?? String(err));
    process.exitCode = 1;
  }
}
