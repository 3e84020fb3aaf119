#!/usr/bin/env bash
# Installs the pinned TypeScript SDK of examples/typescript/ (package.json,
# package-lock.json) into examples/typescript/node_modules with `npm ci`.
#
# Idempotent and quick: a finished install leaves a stamp in node_modules
# holding the SHA-256 of package-lock.json and the Node.js major version; a
# rerun with the same lock and Node skips npm entirely (a few milliseconds).
# A missing or different stamp (an interrupted install, a changed lock)
# reinstalls from scratch (npm ci always does), from npm's cache when it can.
# Any failure exits 1 and names the package and the reason.
#
# Environment: NPM (default npm), NODE (default node).
set -euo pipefail
cd "$(dirname "$0")"

NPM=${NPM:-npm}
NODE=${NODE:-node}
STAMP=node_modules/.mcpchaos-installed
# The packages whose exact versions the examples need: checked after install.
PINNED=(@modelcontextprotocol/sdk zod)

die() {
  echo "examples/typescript/install.sh: $*" >&2
  exit 1
}

command -v "$NODE" >/dev/null || die "$NODE not found: install Node.js 20 or newer (or set NODE)"
command -v "$NPM" >/dev/null || die "$NPM not found: install npm (it comes with Node.js) or set NPM"
node_major=$("$NODE" -p 'process.versions.node.split(".")[0]') || die "$NODE does not run"
[ "$node_major" -ge 20 ] || die "Node.js $("$NODE" --version) is too old: the examples need 20 or newer"
[ -f package-lock.json ] || die "package-lock.json is missing: it is committed; regenerate it with npm install --no-audit --no-fund"

lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
want_stamp="lock $lock_sum
node $node_major"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want_stamp" ]; then
  echo "examples/typescript: node_modules up to date (package-lock.json ${lock_sum:0:12}, node $node_major)"
  exit 0
fi

echo "examples/typescript: npm ci (node $("$NODE" --version))"
log=$(mktemp -t mcpchaos-npm-ci.XXXXXX)
if ! "$NPM" ci --no-audit --no-fund >"$log" 2>&1; then
  # npm names the failing package and why in its first error lines (code
  # E404, ETARGET, EINTEGRITY, a lock out of sync with package.json, ...);
  # what follows them is usage text and the path of its debug log.
  reason=$(awk '/^npm (error|ERR!)/ {
      sub(/^npm (error|ERR!) ?/, "")
      if ($0 ~ /^(Clean install a project|Usage:|A complete log)/) exit
      if ($0 != "" && n++ < 6) print "  " $0
    }' "$log")
  die "npm ci failed${reason:+:
$reason}
full output: $log"
fi
rm -f "$log"

# What the lock pins must be what got installed.
for pkg in "${PINNED[@]}"; do
  want=$("$NODE" -p "require('./package.json').dependencies['$pkg']") ||
    die "$pkg: cannot read its pin from package.json"
  got=$("$NODE" -p "require('./node_modules/$pkg/package.json').version" 2>/dev/null) ||
    die "$pkg: not installed after npm ci (want $want)"
  [ "$got" = "$want" ] || die "$pkg: npm ci installed $got, not the pinned $want"
done
# Load what the examples import: a package that installs but cannot load
# fails here, not later in a proof.
"$NODE" --input-type=module -e "
  await import('@modelcontextprotocol/sdk/server/mcp.js');
  await import('@modelcontextprotocol/sdk/server/stdio.js');
  await import('@modelcontextprotocol/sdk/client/index.js');
  await import('@modelcontextprotocol/sdk/client/stdio.js');
  await import('zod');
" || die "@modelcontextprotocol/sdk: installed but its modules do not load (see above)"

printf '%s\n' "$want_stamp" >"$STAMP"
echo "examples/typescript: installed @modelcontextprotocol/sdk $("$NODE" -p "require('./node_modules/@modelcontextprotocol/sdk/package.json').version"), zod $("$NODE" -p "require('./node_modules/zod/package.json').version")"
