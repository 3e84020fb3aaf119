'use strict';
// Finds the mcpchaos executable: the one $MCPCHAOS_BINARY names, or the one in
// this platform's package, @mcpchaos/<os>-<cpu>, which npm installed as an
// optional dependency (npm skips the five whose os/cpu do not match). Nothing
// is downloaded at install time, as with esbuild and Biome: no install script.

const fs = require('node:fs');
const path = require('node:path');

const { version: VERSION } = require('../package.json');

/** The platforms a package is published for, as `${process.platform}-${process.arch}`. */
const PLATFORMS = Object.freeze(['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'win32-arm64', 'win32-x64']);

/** The environment variable that names a binary to use instead of the platform package's. */
const BINARY_ENV = 'MCPCHAOS_BINARY';

/**
 * The mcpchaos executable cannot be found or is the wrong version. Its message
 * is meant for a person, whole: the launcher prints it as it is, without a stack.
 */
class McpChaosBinaryError extends Error {
  /**
   * @param {string} message
   * @param {'unsupported-platform' | 'not-installed' | 'version-mismatch' | 'missing-binary'} code
   */
  constructor(message, code) {
    super(message);
    this.name = 'McpChaosBinaryError';
    this.code = code;
  }
}

function buildFromSource() {
  // Releases are tagged vX.Y.Z (or vX.Y.Z-rc.N); the repository's placeholder
  // 0.0.0 and development builds (0.1.0-dev.N) have no tag.
  const at = VERSION === '0.0.0' || VERSION.includes('-dev') ? 'latest' : `v${VERSION}`;
  return (
    `To build it from source with Go instead:\n` +
    `  go install github.com/mcpchaos/mcpchaos/cmd/mcpchaos@${at}\n` +
    `then point ${BINARY_ENV} at it:\n` +
    `  export ${BINARY_ENV}="$(go env GOPATH)/bin/mcpchaos"`
  );
}

/**
 * The path of the mcpchaos executable to run.
 *
 * @param {{ env?: NodeJS.ProcessEnv, platform?: string, arch?: string }} [where]
 *   defaults to this process's; the tests pass their own
 * @returns {string}
 * @throws {McpChaosBinaryError}
 */
function binaryPath(where = {}) {
  const env = where.env ?? process.env;
  const platform = where.platform ?? process.platform;
  const arch = where.arch ?? process.arch;

  const override = env[BINARY_ENV];
  if (override) {
    // The user's own build: no version check (a development build says
    // 0.1.0-dev), but a path that is not there is said plainly.
    if (!fs.existsSync(override)) {
      throw new McpChaosBinaryError(`mcpchaos: ${BINARY_ENV} is set to ${override}, which does not exist.`, 'missing-binary');
    }
    return override;
  }

  const key = `${platform}-${arch}`;
  if (!PLATFORMS.includes(key)) {
    throw new McpChaosBinaryError(
      `mcpchaos: no prebuilt binary for ${key}.\n` +
        `The npm package ships binaries for: ${PLATFORMS.join(', ')}.\n` +
        buildFromSource(),
      'unsupported-platform',
    );
  }

  const name = `@mcpchaos/${key}`;
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch {
    throw new McpChaosBinaryError(
      `mcpchaos: the package ${name}, which holds the mcpchaos binary for this platform, is not installed.\n` +
        `npm installs it as an optional dependency of mcpchaos; it is missing when optional dependencies were\n` +
        `left out (--omit=optional, --no-optional) or when node_modules or package-lock.json came from another\n` +
        `platform. Reinstall with optional dependencies:\n` +
        `  npm install mcpchaos@${VERSION}\n` +
        buildFromSource(),
      'not-installed',
    );
  }

  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  if (version !== VERSION) {
    throw new McpChaosBinaryError(
      `mcpchaos: version mismatch: mcpchaos is ${VERSION} but ${name} is ${version}.\n` +
        `The two are released together and must be the same version. Reinstall them together, e.g.\n` +
        `  rm -rf node_modules && npm install\n` +
        `or pin the platform package to match: npm install ${name}@${VERSION}`,
      'version-mismatch',
    );
  }

  const exe = path.join(path.dirname(manifest), 'bin', platform === 'win32' ? 'mcpchaos.exe' : 'mcpchaos');
  if (!fs.existsSync(exe)) {
    throw new McpChaosBinaryError(
      `mcpchaos: ${name}@${version} is installed but holds no ${path.relative(process.cwd(), exe) || exe}. Reinstall it:\n` +
        `  rm -rf node_modules && npm install`,
      'missing-binary',
    );
  }
  return exe;
}

module.exports = { PLATFORMS, BINARY_ENV, VERSION, McpChaosBinaryError, binaryPath };
