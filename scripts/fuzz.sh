#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the core module, one after another.
#
# Usage:
#   ./scripts/fuzz.sh [DURATION] [--keep]
#
# DURATION is go test's -fuzztime for each target: a time (30s, 10m) or a
# count of executions (500x); the default, 300x, is CI's brief run. With
# --keep, the inputs each target found interesting (new coverage), which go
# keeps in its cache, are copied into the package's testdata/fuzz/<target>
# so that they become the committed corpus that every `go test` replays;
# use it for long runs. A failing input is always written to
# testdata/fuzz/<target> by go test itself, and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${1:-300x}
keep=false
[[ ${2:-} == --keep ]] && keep=true
cache=$(go env GOCACHE)/fuzz
failed=0
t0=$SECONDS
while IFS= read -r pkgdir; do
  pkg=./$pkgdir
  for target in $(grep -h '^func Fuzz' "$pkgdir"/*_test.go | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' | sort -u); do
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$duration" -parallel 1 "$pkg" >/tmp/fuzz-$$.log 2>&1; then
      echo "fuzz: $pkg $target failed:"; tail -n 30 /tmp/fuzz-$$.log
      failed=1
      continue
    fi
    if $keep; then
      importpath=$(go list "$pkg")
      src="$cache/$importpath/$target"
      if [ -d "$src" ]; then
        mkdir -p "$pkgdir/testdata/fuzz/$target"
        cp -n "$src"/* "$pkgdir/testdata/fuzz/$target/" 2>/dev/null || true
      fi
    fi
  done
done < <(grep -rl '^func Fuzz' --include='*_test.go' . | xargs -n1 dirname | sed 's|^\./||' | grep -Ev '^(bench|interop|otel)(/|$)' | sort -u)
rm -f /tmp/fuzz-$$.log
echo "fuzz: every target for $duration in $((SECONDS - t0))s"
exit $failed
