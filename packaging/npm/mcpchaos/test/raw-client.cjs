'use strict';
// A minimal MCP client for runTestClient's test, on no SDK: it launches the
// server in $MCPCHAOS_SERVER_COMMAND, initializes, lists the tools, closes
// stdin and exits 0 once the server has exited (1 on any failure).
const { spawn } = require('node:child_process');
const readline = require('node:readline');

const [cmd, ...args] = JSON.parse(process.env.MCPCHAOS_SERVER_COMMAND);
const server = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = new Map();
readline.createInterface({ input: server.stdout }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id !== undefined && waiting.has(msg.id)) waiting.get(msg.id)(msg);
});
let nextId = 1;
const request = (method, params = {}) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, (msg) => (msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result)));
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });

(async () => {
  await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-client', version: '1' } });
  server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const { tools } = await request('tools/list');
  console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);
  server.stdin.end();
  server.on('exit', () => process.exit(0));
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
