// Types of the mcpchaos Node API (lib/index.js). The report types follow
// mcpchaos.report/v1 (docs/reports.md): fields may be added within v1, so
// every object type also allows more.

/** `${process.platform}-${process.arch}` of the platforms a binary package is published for. */
export declare const PLATFORMS: readonly string[];
/** "MCPCHAOS_BINARY": the environment variable naming a binary to use instead of the platform package's. */
export declare const BINARY_ENV: 'MCPCHAOS_BINARY';
/** This package's version. */
export declare const VERSION: string;

export type Severity = 'error' | 'warning';

/** The finding kinds of docs/verdicts.md. */
export type FindingKind =
  | 'hang'
  | 'lost-response'
  | 'duplicate-response'
  | 'unknown-response'
  | 'crash'
  | 'zombie'
  | 'protocol-violation'
  | 'expectation'
  | (string & {});

/** A transcript event a finding points at. */
export interface Evidence {
  seq: number;
  /** Microseconds since the scenario started. */
  t_us: number;
  /** e.g. "received", "forwarded", "stderr", "pipe-closed", "process-exited". */
  type: string;
  /** "c2s" (client to server) or "s2c". */
  dir?: 'c2s' | 's2c' | (string & {});
  excerpt?: string;
  [key: string]: unknown;
}

export interface Finding {
  kind: FindingKind;
  severity: Severity;
  /** The rule it breaks, e.g. "not-an-mcp-message", "crash-signature" (docs/verdicts.md). */
  rule: string;
  /** For crashes: e.g. "go:panic", "node:unhandled-error EPIPE", "exit:1". */
  signature?: string;
  scenario: string;
  /** A string when beyond Number.MAX_SAFE_INTEGER (seeds are uint64), so that it stays exact. */
  seed: number | string;
  message: string;
  /** The request concerned: `id` as on the wire. */
  request?: { id?: number | string | null; method?: string; tool?: string; [key: string]: unknown };
  evidence?: Evidence[];
  /** The command line that replays it. */
  repro?: string;
  /** A finding its scenario file or the baseline lists: it fails nothing. */
  expected?: boolean;
  /** The --baseline lists it. */
  baselined?: boolean;
  [key: string]: unknown;
}

export interface ScenarioResult {
  name: string;
  /** A string when beyond Number.MAX_SAFE_INTEGER. */
  seed: number | string;
  outcome: 'pass' | 'fail' | 'indeterminate';
  duration_ms: number;
  /** How many findings it has. */
  findings: number;
  /** Why it could not fail. */
  indeterminate?: string[];
  notes?: string[];
  /** Its transcript file (the API always asks for transcripts). */
  transcript?: string;
  [key: string]: unknown;
}

/** A fingerprint, as baselines and `report diff` match findings. */
export interface Fingerprint {
  kind: FindingKind;
  signature?: string;
  scenario: string;
  method?: string;
  [key: string]: unknown;
}

/** An mcpchaos.report/v1 report. */
export interface Report {
  schema: 'mcpchaos.report/v1';
  tool: { name: string; version: string; commit?: string; go?: string };
  target: {
    command?: string[];
    url?: string;
    /** "client" under test-client: `command` is the client program, `server` what it ran against. */
    role?: 'client' | (string & {});
    server?: string[];
    [key: string]: unknown;
  };
  /**
   * The run's seed. mcpchaos's seeds are uint64: one beyond
   * Number.MAX_SAFE_INTEGER is a string, so that it stays exact. The API
   * passes a random seed below 2^48 when the options give none.
   */
  seed: number | string;
  /** "error": the target could not be tested (`error` says why). */
  outcome: 'pass' | 'fail' | 'error';
  error?: string;
  baseline?: ScenarioResult;
  scenarios: ScenarioResult[];
  findings: Finding[];
  shard?: { index: number; total: number; run: string; matrix: string[]; [key: string]: unknown };
  baseline_file?: string;
  stale_baseline?: Fingerprint[];
  [key: string]: unknown;
}

/**
 * The report a run resolves to. The extra properties are not enumerable, so
 * JSON.stringify gives the report file's content.
 */
export interface RunReport extends Report {
  /** The JSON report file. */
  readonly reportPath: string;
  /** The HTML rendering (timelines from the transcripts beside it). */
  readonly htmlPath: string | undefined;
  /** mcpchaos's exit status: 0, or 1 when the run failed (findings). */
  readonly exitCode: 0 | 1;
  /** The tail (up to 1 MiB) of mcpchaos's stdout: the summary. */
  readonly stdout: string;
  /** The tail (up to 1 MiB) of mcpchaos's stderr: progress. */
  readonly stderr: string;
}

/** A duration: milliseconds, or a Go duration string ("5s", "1m30s"). */
export type Duration = number | `${number}${'ns' | 'us' | 'ms' | 's' | 'm' | 'h'}` | (string & {});

export interface RunOptions {
  /** Built-in scenario names, scenario files, or FILE#NAME (--scenario). Default: the default matrix. */
  scenarios?: string | string[];
  /** Fault specs, NAME[:KEY=VALUE,...] (--fault): one scenario of all of them. */
  faults?: string | string[];
  /** The seed of every random decision (--seed). Default: a random one below 2^48 (exact as a number), in the report. */
  seed?: number | bigint | string;
  /** How long a request (test) or the client program (test-client) may take (--deadline). */
  deadline?: Duration;
  /** Also fail on warnings (--strict; and assertNoFindings's strict in testServer/testClient). */
  strict?: boolean;
  /** Scenarios to run at once (--parallel). */
  parallel?: number;
  /** More flags, put before the command: e.g. ["--call", "echo={\"text\":\"hi\"}", "--grace", "1s"]. */
  args?: string[];
  /** The working directory of mcpchaos and so of the command. */
  cwd?: string;
  /** Added to process.env for mcpchaos and the command; a key set to undefined is removed. */
  env?: Record<string, string | undefined>;
  /**
   * Where the report files go (relative to process.cwd(), not cwd): NAME.json, NAME.html and the transcripts,
   * NAME-transcripts/. Default: a new temporary directory (NAME "report"); in
   * a given reportDir, NAME is unique per run unless reportName is given.
   */
  reportDir?: string;
  reportName?: string;
  /** Kill the run after this many milliseconds (SIGTERM, then SIGKILL 10 s later). Default 15 minutes. */
  timeout?: number;
  /** Stops the run (SIGTERM, then SIGKILL), rejecting with the signal's reason. */
  signal?: AbortSignal;
  /** Copy mcpchaos's output to this process's stdout and stderr as it comes. */
  verbose?: boolean;
  /** The mcpchaos executable. Default: $MCPCHAOS_BINARY, else this platform's @mcpchaos/<os>-<cpu> package. */
  binary?: string;
}

export interface TestOptions extends RunOptions {
  /** The stdio server to probe, as argv: ["node", "server.mjs"]. Default: the bundled example server. With `url`, the command that serves it. */
  command?: string[];
  /** Probe the HTTP MCP server at this URL (--url). */
  url?: string;
}

export interface TestClientOptions extends RunOptions {
  /** The client program, as argv. It must launch the server given in $MCPCHAOS_SERVER_COMMAND (or connect to $MCPCHAOS_SERVER_URL) and exit 0 on success. */
  command: string[];
  /** The server the client talks to, as argv (--server). Default: the bundled example server. */
  server?: string[];
  /** Test the client over HTTP against the server at this URL (--server-url). */
  serverUrl?: string;
}

export interface AssertOptions {
  /** Warnings fail too. Default false. */
  strict?: boolean;
  /** The report file to name in the message (a RunReport knows its own). */
  reportPath?: string;
}

/** Runs `mcpchaos test`. Resolves to the report whether or not it has findings. */
export declare function runTest(options?: TestOptions): Promise<RunReport>;
/** Runs `mcpchaos test-client`. Resolves to the report whether or not it has findings. */
export declare function runTestClient(options: TestClientOptions): Promise<RunReport>;
/**
 * runTest, then assertNoFindings(report, { strict }): resolves to the report,
 * rejects with McpChaosFindingsError. The default matrix takes seconds to a
 * minute or more (a server slow to exit waits out --grace in several
 * scenarios): node:test sets no timeout, but Jest's and Vitest's default is
 * 5 s, so give the test one, e.g. `test(name, fn, 120_000)`.
 */
export declare function testServer(options?: TestOptions): Promise<RunReport>;
/** runTestClient, then assertNoFindings(report, { strict }). */
export declare function testClient(options: TestClientOptions): Promise<RunReport>;
/**
 * Throws McpChaosFindingsError when the report has error findings (warnings
 * too when strict) that nothing expects, or stale baseline entries.
 */
export declare function assertNoFindings(report: Report, options?: AssertOptions): void;
/** The findings that fail a run: errors (and warnings when strict) that no scenario file or baseline expects. */
export declare function failingFindings(report: Report, strict?: boolean): Finding[];
/** The mcpchaos executable this package runs. Throws McpChaosBinaryError. */
export declare function binaryPath(where?: { env?: Record<string, string | undefined>; platform?: string; arch?: string }): string;

/** Running mcpchaos failed other than with findings. The base class of the set-up and timeout errors. */
export declare class McpChaosError extends Error {
  /** mcpchaos's exit status, null when it was killed. */
  exitCode?: number | null;
  signal?: string | null;
  stdout?: string;
  stderr?: string;
  /** The command that ran: the executable, then its arguments. */
  command?: string[];
}

/** mcpchaos exited 2: a usage or set-up error, e.g. a server that does not start or initialize without faults. */
export declare class McpChaosSetupError extends McpChaosError {
  exitCode: 2;
  stderr: string;
}

/** The run outlived its timeout option and was stopped. */
export declare class McpChaosTimeoutError extends McpChaosError {
  timeout: number;
}

/** The report has failing findings. */
export declare class McpChaosFindingsError extends Error {
  report: Report;
  findings: Finding[];
}

/** No mcpchaos executable for this platform, or the platform package's version is not this package's. */
export declare class McpChaosBinaryError extends Error {
  code: 'unsupported-platform' | 'not-installed' | 'version-mismatch' | 'missing-binary';
}
