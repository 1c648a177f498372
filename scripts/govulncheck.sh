#!/usr/bin/env bash
# govulncheck on every module (., bench, interop, otel), offline.
#
# vuln.go.dev cannot be reached from the machines CI runs on, but the Go
# module proxy serves the database's source, golang.org/x/vulndb, whose
# data/osv holds every OSV entry. We download that module at a pinned
# version, index it once into the v1 layout govulncheck reads from a
# directory (scripts/vulndb: standard library only, about 10 s; the vulndb
# repository's own indexer needs minutes of dependencies), cache it per
# version under the artifacts directory, and run the pinned govulncheck
# with -db file://. To refresh the data, raise VULNDB_VERSION to a newer
# pseudo-version from `go list -m -versions golang.org/x/vulndb` (or
# `go list -m golang.org/x/vulndb@master`).
#
# Which Go: govulncheck judges the standard library by the version of the
# go command it runs with. CI's machines have go1.26.8, whose standard
# library has known vulnerabilities fixed in later patch releases. A user
# building mcpstack with a current Go does not get those, so the gate scans
# with SCAN_TOOLCHAIN, the newest toolchain this workplace approves (the go
# command fetches it from the module proxy, ~76 MB once): with it the scan
# is about our code and our dependencies. Only the scan uses it; the tests
# stay on the machine's Go. The machine's own standard library is then
# reported separately, for information (a module-level scan, a few
# seconds), so that its state is visible without failing every run until
# the machine's Go is upgraded: CI ships no binaries built with it, but a
# release must be built with a Go at or above the "fixed in" versions shown.
#
# Policy (scripts/vulndb/report.go): CI fails on any vulnerability in a
# third-party module at any level (called, imported or merely required: a
# user's scanner reports go.sum, not our call graph), and on a
# standard-library one our code calls. -test: test files count too (the
# interop module is nothing else, and CI runs them). The one way past a
# third-party finding without upgrading is a line in
# scripts/govulncheck-accepted.txt, which holds only while no fixed version
# exists: once one is published, the finding fails again until we upgrade.
#
# Usage: ./scripts/govulncheck.sh [module-dir...]   (default: . bench interop otel)
set -euo pipefail
cd "$(dirname "$0")/.."

VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
GOVULNCHECK=golang.org/x/vuln/cmd/govulncheck@v1.9.0
SCAN_TOOLCHAIN=go1.27.3

modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(. bench interop otel)

artifacts="${MCPSTACK_ARTIFACTS:-$PWD/.artifacts}"
db="$artifacts/vulndb/$VULNDB_VERSION"
if [ ! -f "$db/index/modules.json" ]; then
  t0=$SECONDS
  src=$(go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  [ -d "$src/data/osv" ] || { echo "govulncheck: golang.org/x/vulndb@$VULNDB_VERSION has no data/osv"; exit 1; }
  # The pseudo-version's timestamp is the commit the data is as of; the
  # entries themselves carry a zero modification time.
  ts=${VULNDB_VERSION#v0.0.0-}; ts=${ts%%-*}
  asof="${ts:0:4}-${ts:4:2}-${ts:6:2}T${ts:8:2}:${ts:10:2}:${ts:12:2}Z"
  mkdir -p "$(dirname "$db")"
  (cd scripts/vulndb && go run . -src "$src/data/osv" -dst "$db" -modified "$asof")
  echo "vulndb $VULNDB_VERSION: indexed in $((SECONDS - t0))s"
fi

report() { # extra args for the report; reads govulncheck JSON on stdin
  (cd scripts/vulndb && go run . report "$@")
}

status=0
for m in "${modules[@]}"; do
  t0=$SECONDS
  echo "govulncheck $m (with $SCAN_TOOLCHAIN):"
  out=$(mktemp)
  # govulncheck exits 3 when it finds a called vulnerability; the report
  # applies the policy above, so its exit status is the one that counts.
  (cd "$m" && GOTOOLCHAIN=$SCAN_TOOLCHAIN go run "$GOVULNCHECK" -db "file://$db" -test -format json ./...) >"$out" || [ $? -eq 3 ] ||
    { echo "govulncheck $m: the scan itself failed"; rm -f "$out"; exit 1; }
  report -accept "$PWD/scripts/govulncheck-accepted.txt" -dir "$m" <"$out" || status=1
  rm -f "$out"
  echo "  ($((SECONDS - t0))s)"
done

machine=$(go env GOVERSION)
echo "for information, not failing: the standard library of this machine's $machine (module-level scan of .):"
# A module-level scan takes no patterns and loads the current directory's
# package, hence a directory that has one; the module is the same.
(cd cmd/mcpstack && go run "$GOVULNCHECK" -db "file://$db" -scan module -format json) | report -stdlib-info || true

exit "$status"
