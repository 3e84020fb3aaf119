'use strict';
// The launcher, bin/mcpchaos.js: how it finds the binary, what it says when
// it cannot, and that it exits as the binary does.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { PACKAGE_DIR, LAUNCHER, pkg, binary, envWithoutOverride } = require('./helpers.js');

const STUB = path.join(__dirname, 'stub-platform.cjs');
const HOST = `${process.platform}-${process.arch}`;

function launch(args, { env = process.env, launcher = LAUNCHER, stub = false } = {}) {
  const node = stub ? ['--require', STUB] : [];
  const r = spawnSync(process.execPath, [...node, launcher, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** No JavaScript stack in what a user sees. */
function assertNoStack(text) {
  assert.doesNotMatch(text, /^\s+at .+:\d+:\d+\)?$/m, `a stack trace in:\n${text}`);
  assert.doesNotMatch(text, /node:internal|Error:/);
}

/**
 * A node_modules tree holding a copy of this package and a platform package
 * of `version` for `key`, its binary a copy of the real one: the layout npm
 * makes, built by hand.
 */
function installTree(key, version) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpchaos-launcher-'));
  const mine = path.join(root, 'node_modules', 'mcpchaos');
  for (const entry of ['package.json', 'bin', 'lib']) {
    fs.cpSync(path.join(PACKAGE_DIR, entry), path.join(mine, entry), { recursive: true });
  }
  const platformDir = path.join(root, 'node_modules', '@mcpchaos', key);
  fs.mkdirSync(path.join(platformDir, 'bin'), { recursive: true });
  const [os_, cpu] = key.split('-');
  fs.writeFileSync(
    path.join(platformDir, 'package.json'),
    JSON.stringify({ name: `@mcpchaos/${key}`, version, os: [os_], cpu: [cpu], preferUnplugged: true }),
  );
  const exe = binary();
  if (!(exe instanceof Error)) {
    fs.copyFileSync(exe, path.join(platformDir, 'bin', os_ === 'win32' ? 'mcpchaos.exe' : 'mcpchaos'));
  }
  return { root, launcher: path.join(mine, 'bin', 'mcpchaos.js') };
}

test('a platform without a prebuilt binary: the platforms there are, how to build from source, exit 2', () => {
  const r = launch(['version'], { env: envWithoutOverride({ STUB_PLATFORM: 'linux', STUB_ARCH: 'ia32' }), stub: true });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /no prebuilt binary for linux-ia32/);
  for (const p of pkg.PLATFORMS) assert.ok(r.stderr.includes(p), `${p} not listed:\n${r.stderr}`);
  assert.match(r.stderr, /go install github\.com\/mcpchaos\/mcpchaos\/cmd\/mcpchaos@\S+/);
  assert.match(r.stderr, /MCPCHAOS_BINARY/);
  assertNoStack(r.stderr);
  assert.equal(r.stdout, '');
});

test('a platform whose package is not installed (optional dependencies left out): how to reinstall, exit 2', () => {
  // A supported platform other than this one: npm installs only this one's.
  const other = pkg.PLATFORMS.find((p) => p !== HOST);
  const [platform, arch] = other.split('-');
  const r = launch(['version'], { env: envWithoutOverride({ STUB_PLATFORM: platform, STUB_ARCH: arch }), stub: true });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`the package @mcpchaos/${other}, .* is not installed`));
  assert.match(r.stderr, /--omit=optional/);
  assert.match(r.stderr, /npm install mcpchaos@/);
  assert.match(r.stderr, /go install /);
  assertNoStack(r.stderr);
});

test('MCPCHAOS_BINARY naming a file that is not there: said plainly, exit 2', () => {
  const r = launch(['version'], { env: { ...process.env, MCPCHAOS_BINARY: path.join(os.tmpdir(), 'no-such-mcpchaos') } });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /MCPCHAOS_BINARY is set to .*no-such-mcpchaos, which does not exist/);
  assertNoStack(r.stderr);
});

test('a platform package of another version: both versions named, how to fix, exit 2', { skip: !pkg.PLATFORMS.includes(HOST) && `no package for ${HOST}` }, () => {
  const { root, launcher } = installTree(HOST, '9.9.9');
  try {
    const r = launch(['version'], { env: envWithoutOverride(), launcher });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`mcpchaos is ${pkg.VERSION.replace(/\./g, '\\.')} but @mcpchaos/${HOST} is 9\\.9\\.9`));
    assert.match(r.stderr, /npm install/);
    assertNoStack(r.stderr);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('the platform package of the same version: the launcher runs its binary', { skip: !pkg.PLATFORMS.includes(HOST) && `no package for ${HOST}` }, () => {
  const exe = binary();
  if (exe instanceof Error) throw exe;
  const { root, launcher } = installTree(HOST, pkg.VERSION);
  try {
    const r = launch(['version'], { env: envWithoutOverride(), launcher });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^mcpchaos \S+/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('the launcher passes the arguments and exits with the binary\'s status', () => {
  const exe = binary();
  if (exe instanceof Error) throw exe;
  const ok = launch(['version']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^mcpchaos /);
  const usage = launch(['test', '--no-such-flag']);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /unknown flag: --no-such-flag/);
});

test('SIGTERM to the launcher reaches mcpchaos, and the launcher exits as it does', { skip: process.platform === 'win32' && 'POSIX signals' }, async () => {
  const exe = binary();
  if (exe instanceof Error) throw exe;
  const { spawn } = require('node:child_process');
  // `serve` waits on stdin (kept open here) until a signal ends it cleanly.
  const child = spawn(process.execPath, [LAUNCHER, 'serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  await new Promise((resolve) => setTimeout(resolve, 500));
  child.kill('SIGTERM');
  const [code, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  // serve exits 0 on SIGTERM; had the launcher not forwarded it, it would
  // have died of it itself (signal SIGTERM) and left serve running.
  assert.deepEqual([code, signal], [0, null], stderr);
});
