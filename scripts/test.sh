#!/usr/bin/env bash
# The project's test command: everything CI checks, on a fresh machine.
# Usage: ./scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go mod tidy (each module's go.mod and go.sum say exactly what it needs)"
for m in . bench interop otel scripts/vulndb; do
  if ! (cd "$m" && go mod tidy -diff); then
    echo "module $m is not tidy: run (cd $m && go mod tidy)"; exit 1
  fi
done

echo "== go vet"
go vet ./...

echo "== staticcheck (pinned)"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
(cd bench && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 .)
(cd interop && go vet . && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 .)
(cd otel && go vet . && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 .)
(cd scripts/vulndb && go vet . && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 . && go test -count=1 .)

export MCPSTACK_ARTIFACTS="${MCPSTACK_ARTIFACTS:-$PWD/.artifacts}"
mkdir -p "$MCPSTACK_ARTIFACTS"

echo "== govulncheck, every module, offline (pinned database from the module proxy; scan with the approved current Go, see the script)"
t0=$SECONDS
./scripts/govulncheck.sh
echo "govulncheck: $((SECONDS - t0))s"

echo "== browser for the consent-page tests (Debian chromium, installed once)"
./scripts/install-browser.sh
export MCPSTACK_REQUIRE_BROWSER=1

echo "== PostgreSQL and Redis for the store tests (Debian packages installed once, private servers on free ports)"
t0=$SECONDS
# The services' teardown never decides the run's result.
trap './scripts/services.sh stop || true' EXIT
services=$(./scripts/services.sh)
eval "$services"
export MCPSTACK_REQUIRE_SERVICES=1
echo "services: up in $((SECONDS - t0))s"

# -shuffle=on runs each package's tests in a random order, so that a test
# that leans on another's leftovers fails here rather than by chance later.
# A failing package's output begins with "-test.shuffle SEED"; the line
# printed below replays that order. -covermode=atomic (the mode -race needs)
# measures each package's coverage; the table follows the run.
echo "== go test -race -shuffle=on -cover"
racelog="$MCPSTACK_ARTIFACTS/test-race.log"
cover="$MCPSTACK_ARTIFACTS/cover.out"
t0=$SECONDS
set +e
go test -race -count=1 -shuffle=on -covermode=atomic -coverprofile="$cover" ./... 2>&1 | tee "$racelog"
status=${PIPESTATUS[0]}
set -e
oks=$(grep -cE '^ok[[:space:]]' "$racelog" || true)
fails=$(grep -cE '^FAIL[[:space:]]' "$racelog" || true)
echo "packages: $oks passed, $fails failed ($((SECONDS - t0))s)"
awk '/^-test\.shuffle / { seed = $2 } /^FAIL\t/ && seed != "" { printf "replay %s: go test -race -count=1 -shuffle=%s %s\n", $2, seed, $2; seed = "" }' "$racelog"
# The services stay up (the EXIT trap stops them): the fuzz targets of the
# Redis stores and bench's Redis rows use them too.
if [ "$status" -ne 0 ]; then exit "$status"; fi
coverage_table() {
  echo "coverage per package (statements run by the package's own tests; profile: $cover):"
  awk '/coverage: / {
    pkg = ($1 == "ok") ? $2 : $1; sub("^github.com/mcpstack/mcpstack", ".", pkg)
    for (i = 1; i <= NF; i++) if ($i == "coverage:") { pct = $(i + 1); break }
    printf "  %-32s %s\n", pkg, (pct == "[no") ? "no statements" : pct
  }' "$racelog"
  go tool cover -func="$cover" | awk '/^total:/ { printf "  %-32s %s\n", "total (core module)", $NF }'
}
coverage_table

echo "== every fuzz target, briefly (./scripts/fuzz.sh 10m --keep for a long run that grows the corpus)"
./scripts/fuzz.sh 300x

echo "== bench module (its own go.mod): vet, and its tests (each server echoes; the split host's child process)"
(cd bench && go vet . && go test -count=1 .)

echo "== otel module (its own go.mod, so that the core module gains no OpenTelemetry dependency): spans, propagation and metrics with the SDK's in-memory exporters"
(cd otel && go test -race -count=1 .)

echo "== interop module (its own go.mod, so that go-sdk stays out of users' go.sum): mcpstack against the official go-sdk, node-oidc-provider, the TypeScript SDK's OAuth client, and the go-sdk and TypeScript SDK (v2 and 1.x) clients in both protocol eras"
t0=$SECONDS
./scripts/interop-node.sh
echo "interop node packages: ready in $((SECONDS - t0))s"
export MCPSTACK_REQUIRE_NODE=1
t0=$SECONDS
(cd interop && go test -race -count=1 .)
echo "interop: $((SECONDS - t0))s"

echo "== conformance harness self-test (npm ci from the committed lockfile, node tests)"
log=$(mktemp)
./scripts/conformance.sh selftest > "$log" 2>&1 || { cat "$log"; exit 1; }
grep -E '^# (pass|fail)' "$log"
rm -f "$log"

# The official conformance suite, both pinned versions: every server scenario
# at 2025-11-25 and, with the alpha, at 2026-07-28; every client scenario each suite lists (authorization and
# extensions included, each at its own version; conformance/harness/
# skiplist.txt names, with reasons, the future-revision non-auth ones), and
# the alpha's authorization-server scenarios against ours. The table goes to
# stdout; the per-scenario progress to a log, shown when the
# run fails. A scenario with a failure or an unlisted warning fails CI.
conformance() { # mode
  local clog t0=$SECONDS
  clog=$(mktemp)
  if ! ./scripts/conformance.sh "$1" 2>"$clog"; then
    echo "conformance $1 failed; its log:"; tail -n 120 "$clog"; rm -f "$clog"; exit 1
  fi
  grep -E 'skipped|not run' "$clog" | sed 's/^conformance: /  /' || true
  echo "conformance $1: $((SECONDS - t0))s"
  rm -f "$clog"
}
echo "== conformance suite: server scenarios (0.1.16 and 0.2.0-alpha.12 at 2025-11-25; 0.2.0-alpha.12 at 2026-07-28)"
conformance server
echo "== conformance suite: client scenarios (each at its version; those of both revisions at 2025-11-25 and at 2026-07-28)"
conformance client
echo "== conformance suite: authorization scenarios (0.2.0-alpha.12) against our authorization server"
conformance authserver

echo "== main job"
go run ./cmd/mcpstack demo >/dev/null
echo "demo: ok"
echo "packages: $oks passed, $fails failed"
coverage_table
