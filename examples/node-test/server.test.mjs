import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { testServer } from 'mcpchaos';

// fixed/server.mjs, or planted/server.mjs with SERVER=planted.
const server = fileURLToPath(new URL(`${process.env.SERVER ?? 'fixed'}/server.mjs`, import.meta.url));

test('server survives mcpchaos faults', async () => {
  await testServer({ command: ['node', server] });
});
