#!/usr/bin/env node
// An MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk, the
// version pinned in package.json) for the client scenarios of the MCP
// conformance suite (@modelcontextprotocol/conformance): the suite starts a
// scenario server and runs this program with the server's URL as its last
// argument and the scenario's name in MCP_CONFORMANCE_SCENARIO. It does what
// each scenario asks of a client, as the SDK's README shows it:
//   initialize                            connect (initialize), list tools
//   tools_call                            call every listed tool with numbers
//                                         for its number arguments
//   elicitation-sep1034-client-defaults   accept the server's form
//                                         elicitation with an empty answer,
//                                         the SDK filling in the defaults
//                                         (elicitation.form.applyDefaults)
//   sse-retry                             call the tool whose stream the
//                                         server closes, which the SDK
//                                         resumes after the event's retry:
// and closes. Exit 0 when the session went through, 1 when it failed (the
// error on stderr), 2 on a usage error. proof/conformance_test.go runs it
// directly and through `mcpchaos proxy`, and compares the suite's checks.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TIMEOUT_MS = 20 * 1000;

async function main() {
  const url = process.argv[process.argv.length - 1];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (process.argv.length < 3 || !/^https?:\/\//.test(url)) {
    const err = new Error('usage: conformance_client.mjs URL (the conformance suite appends the URL)');
    err.usage = true;
    throw err;
  }
  const client = new Client(
    { name: 'mcpchaos-conformance-client', version: '0' },
    { capabilities: { elicitation: { form: { applyDefaults: true } } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport, { timeout: TIMEOUT_MS });
  try {
    const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
    if (scenario !== 'initialize') {
      for (const tool of tools) {
        const args = {};
        for (const [name, schema] of Object.entries(tool.inputSchema?.properties ?? {})) {
          if (schema.type === 'number' || schema.type === 'integer') {
            args[name] = Object.keys(args).length + 2;
          }
        }
        const result = await client.callTool({ name: tool.name, arguments: args }, undefined, { timeout: TIMEOUT_MS });
        console.log(`${tool.name}: ${JSON.stringify(result.content)}`);
      }
    }
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

try {
  await main();
  process.exitCode = 0;
} catch (err) {
  console.error(`conformance-client: ${err?.usage ? '' : 'the session failed: '}${err?.message ?? err}`);
  process.exitCode = err?.usage ? 2 : 1;
}
