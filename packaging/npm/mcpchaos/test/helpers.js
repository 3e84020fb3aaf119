'use strict';
// Shared by the tests: which copy of the package they test, and the binary.
//
// MCPCHAOS_PACKAGE_DIR: the package to test (default: this checkout,
// packaging/npm/mcpchaos); scripts/test-npm-package points it at the copy
// npm installed from the tarball, whose binary comes from its platform package.
// MCPCHAOS_BINARY: the binary, where no platform package is installed (a
// checkout: go build -o /tmp/mcpchaos ./cmd/mcpchaos).
const path = require('node:path');

const PACKAGE_DIR = path.resolve(process.env.MCPCHAOS_PACKAGE_DIR ?? path.join(__dirname, '..'));
const LAUNCHER = path.join(PACKAGE_DIR, 'bin', 'mcpchaos.js');
const pkg = require(PACKAGE_DIR);

/** The binary the package would run, or an Error saying why there is none. */
function binary() {
  try {
    return pkg.binaryPath();
  } catch (err) {
    return new Error(
      `${err.message}\n\nThe tests need a binary: set MCPCHAOS_BINARY (go build -o /tmp/mcpchaos ./cmd/mcpchaos), ` +
        `or MCPCHAOS_PACKAGE_DIR to an installed package.`,
    );
  }
}

/** The environment without MCPCHAOS_BINARY: the launcher must find its platform package. */
function envWithoutOverride(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.MCPCHAOS_BINARY;
  return env;
}

module.exports = { PACKAGE_DIR, LAUNCHER, pkg, binary, envWithoutOverride };
