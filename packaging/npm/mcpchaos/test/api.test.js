'use strict';
// The Node API against the real binary: a clean run, a planted bug, a server
// that cannot start, a run that outlives its timeout; and assertNoFindings on
// reports made by hand.
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { pkg, binary } = require('./helpers.js');
const {
  runTest,
  runTestClient,
  testServer,
  assertNoFindings,
  McpChaosError,
  McpChaosSetupError,
  McpChaosTimeoutError,
  McpChaosFindingsError,
} = pkg;

let exe;
before(() => {
  exe = binary();
  if (exe instanceof Error) throw exe;
});

/**
 * The planted crash server, examples/servers/crash (a Go panic when stdin
 * closes with calls in flight, scenario eof-inflight): $MCPCHAOS_CRASH_SERVER
 * when the caller built it, else built here when Go and the repository are at
 * hand, else undefined.
 */
function crashServer() {
  if (process.env.MCPCHAOS_CRASH_SERVER) return process.env.MCPCHAOS_CRASH_SERVER;
  const repo = path.resolve(__dirname, '..', '..', '..', '..');
  if (!fs.existsSync(path.join(repo, 'examples', 'servers', 'crash'))) return undefined;
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcpchaos-crash-')), 'crash');
  const r = spawnSync('go', ['build', '-o', out, './examples/servers/crash'], { cwd: repo, encoding: 'utf8' });
  if (r.error?.code === 'ENOENT') return undefined;
  assert.equal(r.status, 0, `go build ./examples/servers/crash: ${r.stderr}`);
  return out;
}

test('runTest on the bundled server: a clean report, its files written', async () => {
  const report = await runTest({ command: [exe, 'serve'], scenarios: ['eof-inflight'], seed: 1 });
  assert.equal(report.schema, 'mcpchaos.report/v1');
  assert.equal(report.outcome, 'pass');
  assert.equal(report.seed, 1);
  assert.deepEqual(report.target.command, [exe, 'serve']);
  assert.deepEqual(report.scenarios.map((s) => s.name), ['eof-inflight']);
  assert.deepEqual(report.findings, []);
  assert.equal(report.exitCode, 0);
  assert.ok(fs.existsSync(report.reportPath), report.reportPath);
  assert.ok(report.htmlPath && fs.readFileSync(report.htmlPath, 'utf8').includes('<html'), 'no HTML report');
  // The extra properties stay out of the JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(report)), JSON.parse(fs.readFileSync(report.reportPath, 'utf8')));
  assertNoFindings(report);
});

test('runTest over HTTP with {port}: each run\'s server on a port of its own', async () => {
  const report = await runTest({
    command: [exe, 'serve', '--http', '127.0.0.1:{port}'],
    url: 'http://127.0.0.1:{port}/mcp',
    scenarios: ['cut-inflight', 'unknown-session'],
    seed: 1,
  });
  assert.equal(report.outcome, 'pass');
  assert.equal(report.target.url, 'http://127.0.0.1:{port}/mcp');
  assert.deepEqual(report.scenarios.map((s) => s.name), ['cut-inflight', 'unknown-session']);
});

test('testServer resolves on a clean server; reportDir keeps each run\'s files apart', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpchaos-reports-'));
  const a = await testServer({ command: [exe, 'serve'], scenarios: 'eof-inflight', reportDir: dir });
  const b = await testServer({ command: [exe, 'serve'], scenarios: 'eof-inflight', reportDir: dir, reportName: 'named' });
  assert.equal(path.dirname(a.reportPath), dir);
  assert.equal(b.reportPath, path.join(dir, 'named.json'));
  assert.notEqual(a.reportPath, b.reportPath);
  assert.ok(Number.isSafeInteger(a.seed), `seed ${a.seed}`);
});

test('a planted bug: runTest resolves with the finding, testServer rejects with its text', async (t) => {
  const crash = crashServer();
  if (!crash) return t.skip('no crash server: set MCPCHAOS_CRASH_SERVER (go build -o X ./examples/servers/crash)');
  const options = { command: [crash], scenarios: ['eof-inflight'], seed: 3 };

  const report = await runTest(options);
  assert.equal(report.outcome, 'fail');
  assert.equal(report.exitCode, 1);
  const crashFinding = report.findings.find((f) => f.kind === 'crash' && f.severity === 'error');
  assert.ok(crashFinding, JSON.stringify(report.findings, null, 2));
  assert.equal(crashFinding.signature, 'go:panic');
  assert.equal(crashFinding.scenario, 'eof-inflight');

  await assert.rejects(testServer(options), (err) => {
    assert.ok(err instanceof McpChaosFindingsError);
    assert.equal(err.name, 'McpChaosFindingsError');
    assert.equal(err.report.outcome, 'fail');
    assert.ok(err.findings.every((f) => f.severity === 'error'));
    assert.match(err.message, /crash error go:panic \[eof-inflight\]/);
    assert.match(err.message, /Go panic: send on closed channel/);
    assert.match(err.message, /evidence: stderr at \d+ms\n\s+\| panic: send on closed channel/);
    assert.match(err.message, /repro: mcpchaos test --scenario eof-inflight --seed 3 -- /);
    assert.match(err.message, /report: .*\.json \(html: .*\.html\)/);
    return true;
  });
});

test('a server that cannot start: McpChaosSetupError with mcpchaos\'s stderr', async () => {
  const missing = path.join(os.tmpdir(), 'no-such-mcp-server');
  await assert.rejects(runTest({ command: [missing], scenarios: ['eof-inflight'] }), (err) => {
    assert.ok(err instanceof McpChaosSetupError);
    assert.ok(err instanceof McpChaosError);
    assert.equal(err.exitCode, 2);
    assert.match(err.stderr, /cannot start/);
    assert.match(err.message, /could not test its target/);
    return true;
  });
  // One that starts but dies before initializing: its stderr comes through.
  const dies = [process.execPath, '-e', 'console.error("boom: no config file"); process.exit(3)'];
  await assert.rejects(testServer({ command: dies, scenarios: ['eof-inflight'] }), (err) => {
    assert.ok(err instanceof McpChaosSetupError);
    assert.match(err.stderr, /boom: no config file/);
    return true;
  });
});

test('a run that outlives its timeout is stopped: McpChaosTimeoutError', async () => {
  const started = Date.now();
  // stall-s2c takes over two seconds on any server.
  await assert.rejects(runTest({ command: [exe, 'serve'], scenarios: ['stall-s2c'], timeout: 300 }), (err) => {
    assert.ok(err instanceof McpChaosTimeoutError, err.stack);
    assert.equal(err.timeout, 300);
    assert.match(err.message, /still running after 300 ms/);
    return true;
  });
  assert.ok(Date.now() - started < 15_000);
});

test('an AbortSignal stops the run and rejects with its reason', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('test over')), 300);
  await assert.rejects(runTest({ command: [exe, 'serve'], scenarios: ['stall-s2c'], signal: controller.signal }), /test over/);
});

test('runTestClient runs a client program against the bundled server', async () => {
  const report = await runTestClient({
    command: [process.execPath, path.join(__dirname, 'raw-client.cjs')],
    server: [exe, 'serve'],
    scenarios: ['server-eof'],
    seed: 2,
  });
  assert.equal(report.target.role, 'client');
  assert.deepEqual(report.target.server, [exe, 'serve']);
  assert.deepEqual(report.scenarios.map((s) => s.name), ['server-eof']);
  assert.equal(report.exitCode, report.outcome === 'pass' ? 0 : 1);
});

test('bad options are a TypeError, before anything runs', async () => {
  await assert.rejects(runTest({ command: 'node server.js' }), TypeError);
  await assert.rejects(runTest({ seed: -1 }), TypeError);
  await assert.rejects(runTest({ parallel: 0 }), TypeError);
  await assert.rejects(runTestClient({}), TypeError);
});

function report(findings, extra = {}) {
  return { schema: 'mcpchaos.report/v1', tool: { name: 'mcpchaos', version: 'x' }, target: { command: ['srv'] }, seed: 7, outcome: 'fail', scenarios: [], findings, ...extra };
}
const warning = { kind: 'zombie', severity: 'warning', rule: 'shutdown-needed-sigterm', scenario: 'eof-inflight', seed: 7, message: 'slow to exit', repro: 'mcpchaos test --scenario eof-inflight --seed 7 -- srv' };
const error = { kind: 'hang', severity: 'error', rule: 'unanswered-request', scenario: 'burst-c2s', seed: 7, message: 'tools/call (id 3) unanswered', evidence: [{ seq: 4, t_us: 12000, type: 'received', dir: 'c2s', excerpt: '{"id":3}' }], repro: 'mcpchaos test --scenario burst-c2s --seed 7 -- srv' };

test('assertNoFindings: warnings pass unless strict, expected findings never fail', () => {
  assertNoFindings(report([]));
  assertNoFindings(report([warning]));
  assertNoFindings(report([{ ...error, expected: true, baselined: true }]));
  assert.throws(() => assertNoFindings(report([warning]), { strict: true }), McpChaosFindingsError);
  assert.throws(() => assertNoFindings({ findings: [] }), TypeError);
});

test('assertNoFindings: the message lists each failing finding, its evidence, repro and the report path', () => {
  assert.throws(
    () => assertNoFindings(report([warning, error]), { reportPath: '/tmp/r.json' }),
    (err) => {
      assert.deepEqual(err.findings, [error]);
      assert.equal(
        err.message,
        [
          'mcpchaos found 1 error finding in srv (seed 7):',
          'hang error [burst-c2s]\n  tools/call (id 3) unanswered\n  rule: unanswered-request\n  evidence: received c2s at 12ms\n    | {"id":3}\n  repro: mcpchaos test --scenario burst-c2s --seed 7 -- srv',
          'report: /tmp/r.json',
        ].join('\n\n'),
      );
      return true;
    },
  );
});

test('assertNoFindings: a stale baseline entry fails, as it fails the CLI', () => {
  const stale = report([], { baseline_file: 'mcpchaos-baseline.yaml', stale_baseline: [{ kind: 'crash', signature: 'go:panic', scenario: 'eof-inflight' }] });
  assert.throws(() => assertNoFindings(stale), /stale baseline entry: crash go:panic eof-inflight no longer fails \(remove it from mcpchaos-baseline\.yaml\)/);
});
