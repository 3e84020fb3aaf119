#!/usr/bin/env node
'use strict';
// `npx mcpchaos ...`: runs the Go binary of this platform's package with the
// same arguments and stdio, and exits as it does.
//
// The child is spawned, not exec'd (Node cannot exec), so this process stays
// in between: it forwards SIGINT and SIGTERM (a CI runner's cancel, or
// `timeout`, signals this process only) and then ends the way the child did,
// with its status or by its signal, so that a caller sees no difference.
// mcpchaos handles a repeated SIGINT (one from the terminal, one from us) as
// one: its shutdown runs once.

const { spawn } = require('node:child_process');
const { binaryPath, McpChaosBinaryError } = require('../lib/binary.js');

/** Exit status for a usage or set-up error, as mcpchaos itself uses. */
const SETUP_ERROR = 2;

let exe;
try {
  exe = binaryPath();
} catch (err) {
  if (!(err instanceof McpChaosBinaryError)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(SETUP_ERROR);
}

const child = spawn(exe, process.argv.slice(2), { stdio: 'inherit', windowsHide: false });

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const forward = (signal) => {
  // The child may have exited a moment ago; then there is no one to tell.
  try {
    child.kill(signal);
  } catch {}
};
for (const signal of FORWARDED) process.on(signal, forward);

child.on('error', (err) => {
  process.stderr.write(`mcpchaos: cannot run ${exe}: ${err.message}\n`);
  process.exit(SETUP_ERROR);
});

child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal, so that a shell reports 128+N as it would for
    // the binary. Our handlers go first, or the signal would only be caught.
    for (const s of FORWARDED) process.off(s, forward);
    try {
      process.kill(process.pid, signal);
    } catch {}
    // Still here a moment later (a signal Node cannot raise on this platform,
    // e.g. on Windows): the conventional status instead.
    const number = require('node:os').constants.signals[signal] ?? 0;
    setTimeout(() => process.exit(128 + number), 500);
    return;
  }
  process.exit(code ?? 1);
});
