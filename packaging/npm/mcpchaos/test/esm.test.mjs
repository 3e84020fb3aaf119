// The package imported from ESM: named exports, and the same classes as
// require gives (one module instance, so instanceof holds across both).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import helpers from './helpers.js';

const entry = createRequire(import.meta.url).resolve(helpers.PACKAGE_DIR);

test('named exports from ESM, the same objects as from require', async () => {
  const esm = await import(pathToFileURL(entry).href);
  for (const name of ['runTest', 'runTestClient', 'testServer', 'testClient', 'assertNoFindings', 'McpChaosFindingsError', 'McpChaosSetupError', 'McpChaosTimeoutError', 'McpChaosError', 'McpChaosBinaryError', 'binaryPath']) {
    assert.equal(typeof esm[name], 'function', name);
    assert.equal(esm[name], helpers.pkg[name], name);
  }
});
