'use strict';
// The Node API: run `mcpchaos test` / `test-client` from a test file and get
// the report back as an object, or have the test fail with the findings.
//
// Plain CommonJS with named exports, which ESM can import as well
// (`import { testServer } from 'mcpchaos'`): one module instance whichever way
// it is loaded, so `instanceof McpChaosFindingsError` holds in both. Only
// promises, no test-framework globals: node:test, Vitest and Jest all await
// a rejected promise as a failed test.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomBytes, randomInt } = require('node:crypto');

const { PLATFORMS, BINARY_ENV, VERSION, McpChaosBinaryError, binaryPath } = require('./binary.js');

/** A run that outlives this is killed: 15 minutes, ample for the default matrix of a slow server. */
const DEFAULT_TIMEOUT_MS = 15 * 60 * 1000;
/** After SIGTERM (mcpchaos then stops its servers), how long before SIGKILL. */
const KILL_GRACE_MS = 10 * 1000;
/** How much of the child's stdout and stderr is kept, each: the tail, where the reasons are. */
const OUTPUT_LIMIT = 1 << 20;

/** Anything that went wrong running mcpchaos, other than findings: the base class. */
class McpChaosError extends Error {
  constructor(message, details = {}) {
    super(message);
    this.name = 'McpChaosError';
    Object.assign(this, details);
  }
}

/**
 * mcpchaos exited 2: a usage or set-up error, typically a server that does not
 * start or does not initialize even without faults. `stderr` says why.
 */
class McpChaosSetupError extends McpChaosError {
  constructor(message, details) {
    super(message, details);
    this.name = 'McpChaosSetupError';
  }
}

/** The run took longer than `timeout` and was killed. */
class McpChaosTimeoutError extends McpChaosError {
  constructor(message, details) {
    super(message, details);
    this.name = 'McpChaosTimeoutError';
  }
}

/** The report has findings that fail the run: `findings` lists them, `report` is the whole report. */
class McpChaosFindingsError extends Error {
  constructor(message, report, findings) {
    super(message);
    this.name = 'McpChaosFindingsError';
    this.report = report;
    this.findings = findings;
  }
}

function stringList(value, option) {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) {
    throw new TypeError(`mcpchaos: option ${option} must be a string or an array of strings`);
  }
  return list;
}

/** A command is argv, never a string to split: `["node", "server.js"]`. */
function argvOption(value, option) {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new TypeError(`mcpchaos: option ${option} must be an argv array of strings, e.g. ["node", "server.js"]`);
  }
  return value;
}

/** A duration for a Go flag: a number is milliseconds, a string goes as written ("5s", "1m30s"). */
function duration(value, option) {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return `${value}ms`;
  if (typeof value === 'string' && value !== '') return value;
  throw new TypeError(`mcpchaos: option ${option} must be milliseconds or a Go duration string such as "5s"`);
}

/** Quotes argv for a flag that mcpchaos splits into words itself (test-client --server). */
function shellQuote(argv) {
  return argv.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The flags common to test and test-client. */
function commonFlags(options) {
  const flags = [];
  for (const name of stringList(options.scenarios, 'scenarios')) flags.push('--scenario', name);
  for (const spec of stringList(options.faults, 'faults')) flags.push('--fault', spec);
  // mcpchaos's own random seed is a uint64, which a JavaScript number cannot
  // hold exactly: the report's seed would not be the one its repro lines
  // name. So the API chooses one that fits when none is given.
  const seed = String(options.seed ?? randomInt(2 ** 48 - 1));
  if (!/^\d+$/.test(seed)) throw new TypeError('mcpchaos: option seed must be a non-negative integer');
  flags.push('--seed', seed);
  if (options.deadline !== undefined) flags.push('--deadline', duration(options.deadline, 'deadline'));
  if (options.parallel !== undefined) {
    if (!Number.isInteger(options.parallel) || options.parallel < 1) {
      throw new TypeError('mcpchaos: option parallel must be a positive integer');
    }
    flags.push('--parallel', String(options.parallel));
  }
  if (options.strict) flags.push('--strict');
  return flags;
}

/** Where this run's files go: a fresh temporary directory, or a unique name in `reportDir`. */
function reportFiles(options) {
  let dir;
  let base = options.reportName;
  if (options.reportDir) {
    dir = path.resolve(options.reportDir);
    fs.mkdirSync(dir, { recursive: true });
    // Several tests may share one reportDir: never overwrite another's report.
    base ??= `mcpchaos-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(3).toString('hex')}`;
  } else {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpchaos-'));
    base ??= 'report';
  }
  return {
    json: path.join(dir, `${base}.json`),
    html: path.join(dir, `${base}.html`),
    transcripts: path.join(dir, `${base}-transcripts`),
  };
}

/** Keeps the last `limit` characters of a stream. */
function tail(limit) {
  let text = '';
  return {
    add(chunk) {
      text += chunk;
      if (text.length > 2 * limit) text = text.slice(-limit);
    },
    get text() {
      return text.length > limit ? `…${text.slice(-limit)}` : text;
    },
  };
}

/**
 * Runs the binary with `args`; resolves to the parsed report when it exits 0
 * or 1 (1 means findings: the report holds them), rejects otherwise.
 */
function run(subcommand, args, options, files) {
  const exe = options.binary ?? binaryPath();
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
  const argv = [subcommand, ...args];
  const env = { ...process.env };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }

  return new Promise((resolve, reject) => {
    const child = spawn(exe, argv, {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const stdout = tail(OUTPUT_LIMIT);
    const stderr = tail(OUTPUT_LIMIT);
    for (const [stream, sink, echo] of [
      [child.stdout, stdout, process.stdout],
      [child.stderr, stderr, process.stderr],
    ]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        sink.add(chunk);
        if (options.verbose) echo.write(chunk);
      });
    }

    let stopped; // why we stopped it, if we did
    let killTimer;
    const stop = (why) => {
      if (stopped || child.exitCode !== null || child.signalCode !== null) return;
      stopped = why;
      // SIGTERM first: mcpchaos then shuts its servers down (stdin closed,
      // SIGTERM, SIGKILL) rather than leaving them running.
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    const timer = setTimeout(() => stop('timeout'), timeout);
    const onAbort = () => stop('abort');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();

    const details = () => ({
      exitCode: child.exitCode,
      signal: child.signalCode,
      stdout: stdout.text,
      stderr: stderr.text,
      command: [exe, ...argv],
    });
    const finish = () => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
    };

    child.on('error', (err) => {
      finish();
      reject(new McpChaosError(`mcpchaos: cannot run ${exe}: ${err.message}`, { ...details(), cause: err }));
    });

    // 'close', not 'exit': the output is all read by then.
    child.on('close', (code, signal) => {
      finish();
      if (stopped === 'timeout') {
        reject(
          new McpChaosTimeoutError(
            `mcpchaos ${subcommand} was still running after ${timeout} ms (the timeout option) and was stopped.` +
              ` Its last output:\n${lastLines(stderr.text, 20)}`,
            { ...details(), timeout },
          ),
        );
        return;
      }
      if (stopped === 'abort') {
        reject(options.signal.reason ?? new McpChaosError('mcpchaos: the run was aborted', details()));
        return;
      }
      if (code === 2) {
        reject(
          new McpChaosSetupError(
            `mcpchaos ${subcommand} could not test its target (exit status 2):\n${lastLines(stderr.text, 40)}`,
            details(),
          ),
        );
        return;
      }
      if (code !== 0 && code !== 1) {
        const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
        reject(new McpChaosError(`mcpchaos ${subcommand} ${how}:\n${lastLines(stderr.text, 40)}`, details()));
        return;
      }
      let report;
      try {
        report = parseReport(fs.readFileSync(files.json, 'utf8'));
      } catch (err) {
        reject(new McpChaosError(`mcpchaos ${subcommand} exited ${code} but its report ${files.json} cannot be read: ${err.message}`, details()));
        return;
      }
      // Not enumerable: the object serializes exactly as the report file.
      Object.defineProperties(report, {
        reportPath: { value: files.json },
        htmlPath: { value: fs.existsSync(files.html) ? files.html : undefined },
        exitCode: { value: code },
        stdout: { value: stdout.text },
        stderr: { value: stderr.text },
      });
      resolve(report);
    });
  });
}

/**
 * JSON.parse, but a seed beyond Number.MAX_SAFE_INTEGER (mcpchaos's seeds are
 * uint64) stays exact, as a string. Node 18 and 20 have no JSON.parse source
 * access; a key preceded by a backslash is inside a string, not a seed.
 */
function parseReport(text) {
  const exact = text.replace(/(?<!\\)("seed"\s*:\s*)(\d{16,})\b/g, (all, key, digits) =>
    Number.isSafeInteger(Number(digits)) ? all : `${key}"${digits}"`,
  );
  return JSON.parse(exact);
}

function lastLines(text, n) {
  const lines = text.trimEnd().split('\n');
  return (lines.length > n ? ['…', ...lines.slice(-n)] : lines).map((l) => `  ${l}`).join('\n');
}

function reportFlags(files) {
  return ['--report', files.json, '--report-format', `html=${files.html}`, '--transcript-dir', files.transcripts];
}

/**
 * `mcpchaos test`: probes the stdio server `command` (or the HTTP server at
 * `url`) through the fault matrix. Resolves to the report, findings or not.
 *
 * @param {import('./index').TestOptions} [options]
 * @returns {Promise<import('./index').RunReport>}
 */
async function runTest(options = {}) {
  const command = argvOption(options.command, 'command');
  const flags = commonFlags(options);
  if (options.url !== undefined) flags.push('--url', options.url);
  const files = reportFiles(options);
  const args = [...reportFlags(files), ...flags, ...stringList(options.args, 'args')];
  if (command.length > 0) args.push('--', ...command);
  return run('test', args, options, files);
}

/**
 * `mcpchaos test-client`: runs the client program `command` once per scenario
 * against the server `server` (default: the bundled example server) or the
 * HTTP server at `serverUrl`. Resolves to the report, findings or not.
 *
 * @param {import('./index').TestClientOptions} options
 * @returns {Promise<import('./index').RunReport>}
 */
async function runTestClient(options) {
  const command = argvOption(options?.command, 'command');
  if (command.length === 0) throw new TypeError('mcpchaos: runTestClient needs command, the client program to run');
  const flags = commonFlags(options);
  if (options.server !== undefined) flags.push('--server', shellQuote(argvOption(options.server, 'server')));
  if (options.serverUrl !== undefined) flags.push('--server-url', options.serverUrl);
  const files = reportFiles(options);
  const args = [...reportFlags(files), ...flags, ...stringList(options.args, 'args'), '--', ...command];
  return run('test-client', args, options, files);
}

/** The findings that fail a run: errors (and warnings when strict) that no scenario file or baseline expects. */
function failingFindings(report, strict) {
  return (report.findings ?? []).filter(
    (f) => !f.expected && (f.severity === 'error' || (strict && f.severity === 'warning')),
  );
}

function excerpt(text, maxLines = 3, maxChars = 300) {
  const lines = String(text ?? '').split('\n');
  let shown = lines.slice(0, maxLines).join('\n    | ');
  if (shown.length > maxChars) shown = `${shown.slice(0, maxChars)}…`;
  const more = lines.length - maxLines;
  return more > 0 ? `${shown}\n    | … (${more} more lines)` : shown;
}

function describeFinding(f) {
  const head = [f.kind, f.severity, f.signature, f.scenario && `[${f.scenario}]`].filter(Boolean).join(' ');
  const lines = [`${head}`, `  ${f.message}`];
  if (f.rule) lines.push(`  rule: ${f.rule}`);
  for (const e of f.evidence ?? []) {
    const at = e.t_us !== undefined ? ` at ${Math.round(e.t_us / 1000)}ms` : '';
    lines.push(`  evidence: ${[e.type, e.dir].filter(Boolean).join(' ')}${at}`, `    | ${excerpt(e.excerpt)}`);
  }
  if (f.repro) lines.push(`  repro: ${f.repro}`);
  return lines.join('\n');
}

/**
 * Throws McpChaosFindingsError when the report has error findings (and, with
 * `strict`, warnings), or stale baseline entries: the cases in which the CLI
 * exits 1. Its message lists each finding with its evidence and repro line.
 *
 * @param {import('./index').Report} report
 * @param {import('./index').AssertOptions} [options]
 */
function assertNoFindings(report, options = {}) {
  if (!report || typeof report !== 'object' || report.schema !== 'mcpchaos.report/v1') {
    throw new TypeError('mcpchaos: assertNoFindings needs an mcpchaos.report/v1 report object');
  }
  const strict = options.strict ?? false;
  const failing = failingFindings(report, strict);
  const stale = report.stale_baseline ?? [];
  if (failing.length === 0 && stale.length === 0) return;

  const target = report.target?.url ?? (report.target?.command ? report.target.command.join(' ') : 'the bundled server');
  const what = strict ? 'finding' : 'error finding';
  const parts = [
    `mcpchaos found ${failing.length} ${what}${failing.length === 1 ? '' : 's'} in ${target} (seed ${report.seed}):`,
    ...failing.map(describeFinding),
  ];
  for (const s of stale) {
    parts.push(`stale baseline entry: ${[s.kind, s.signature, s.scenario, s.method].filter(Boolean).join(' ')} no longer fails (remove it from ${report.baseline_file})`);
  }
  const reportPath = options.reportPath ?? report.reportPath;
  if (reportPath) parts.push(`report: ${reportPath}${report.htmlPath ? ` (html: ${report.htmlPath})` : ''}`);
  throw new McpChaosFindingsError(parts.join('\n\n'), report, failing);
}

/**
 * runTest, then assertNoFindings: for a test that passes when the server
 * survives the faults. Resolves to the report.
 *
 * @param {import('./index').TestOptions} [options]
 */
async function testServer(options = {}) {
  const report = await runTest(options);
  assertNoFindings(report, { strict: options.strict });
  return report;
}

/**
 * runTestClient, then assertNoFindings.
 *
 * @param {import('./index').TestClientOptions} options
 */
async function testClient(options) {
  const report = await runTestClient(options);
  assertNoFindings(report, { strict: options.strict });
  return report;
}

module.exports = {
  runTest,
  runTestClient,
  testServer,
  testClient,
  assertNoFindings,
  failingFindings,
  binaryPath,
  McpChaosError,
  McpChaosSetupError,
  McpChaosTimeoutError,
  McpChaosFindingsError,
  McpChaosBinaryError,
  PLATFORMS,
  BINARY_ENV,
  VERSION,
};
