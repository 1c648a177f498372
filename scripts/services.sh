#!/usr/bin/env bash
# services.sh starts a private PostgreSQL and a private Redis for the store
# tests (store/postgres, store/redis), on 127.0.0.1 and free non-default
# ports, with their data in directories this script owns. It installs
# Debian's postgresql and redis-server through apt-get when they are missing.
#
# Usage:
#   eval "$(./scripts/services.sh)"   # start (or reuse) both, print the exports
#   ./scripts/services.sh stop        # stop both and delete their data
#
# "start" (the default) prints two lines on stdout,
#   export MCPSTACK_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
#   export MCPSTACK_REDIS_URL=redis://127.0.0.1:PORT/0
# and writes them to $MCPSTACK_SERVICES_DIR/env too. Run again while the
# servers answer, it prints the same lines and starts nothing. Progress goes
# to stderr. The state (ports, logs, Redis's directory) is kept in
# $MCPSTACK_SERVICES_DIR, by default $MCPSTACK_ARTIFACTS/services or else
# .artifacts/services; PostgreSQL's data goes to a temporary directory that
# "stop" deletes. The servers are for tests only: no authentication (trust)
# on 127.0.0.1 only, no durability (fsync off, no Redis snapshots).
set -euo pipefail
cd "$(dirname "$0")/.."

state="${MCPSTACK_SERVICES_DIR:-${MCPSTACK_ARTIFACTS:-$PWD/.artifacts}/services}"
envfile="$state/env"

log() { echo "services: $*" >&2; }

SUDO=""
RUNAS=()
if [[ $(id -u) -eq 0 ]]; then
  # PostgreSQL refuses to run as root: its processes run as the postgres user
  # that Debian's package creates.
  RUNAS=(runuser -u postgres --)
else
  SUDO=sudo
fi

pgbin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [[ -n "$d" && -x "$d/pg_ctl" && -x "$d/initdb" ]] && echo "$d"
}

install_missing() {
  local pkgs=()
  pgbin >/dev/null || pkgs+=(postgresql)
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || pkgs+=(redis-server)
  if [[ ${#pkgs[@]} -eq 0 ]]; then return; fi
  log "installing ${pkgs[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}

# free_port prints a TCP port nothing on 127.0.0.1 listens on. The caller
# still has to cope with losing a race for it.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  log "no free port found"
  return 1
}

# value NAME prints a variable saved in the state directory, if any.
value() { cat "$state/$1" 2>/dev/null || true; }

pg_up() {
  local bin port
  bin=$(pgbin) || return 1
  port=$(value pg_port)
  [[ -n "$port" ]] && "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1
}

redis_up() {
  local port
  port=$(value redis_port)
  [[ -n "$port" ]] && [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]
}

stop_pg() {
  local bin dir
  dir=$(value pg_dir)
  if [[ -n "$dir" && -d "$dir" ]]; then
    if bin=$(pgbin) && [[ -f "$dir/data/postmaster.pid" ]]; then
      "${RUNAS[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
  fi
  rm -f "$state/pg_dir" "$state/pg_port"
}

stop_redis() {
  local pid
  pid=$(cat "$state/redis/redis.pid" 2>/dev/null || true)
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    # Redis deletes its pid file when it is done, then writes its last log
    # lines and goes a second or two later: wait for the process itself
    # (at most 5 s, then SIGKILL), or it refills the directory while it is
    # removed ("Directory not empty", which failed a CI run).
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  for _ in 1 2 3 4 5; do
    rm -rf "$state/redis" 2>/dev/null && break
    sleep 0.2
  done
  rm -f "$state/redis_port"
}

start_pg() {
  local bin dir port
  bin=$(pgbin)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/mcpstack-pg.XXXXXX")
  echo "$dir" >"$state/pg_dir"
  if [[ ${#RUNAS[@]} -gt 0 ]]; then chown postgres: "$dir"; fi
  "${RUNAS[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; return 1; }
  # Only TCP on 127.0.0.1, trusted; no Unix socket.
  echo "host all all 127.0.0.1/32 trust" >"$dir/data/pg_hba.conf"
  for _ in 1 2 3; do
    port=$(free_port)
    if "${RUNAS[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
      -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >/dev/null; then
      echo "$port" >"$state/pg_port"
      return
    fi
    log "postgres did not start on port $port; its log:"; tail -n 20 "$dir/postgres.log" >&2 || true
  done
  return 1
}

start_redis() {
  local port
  mkdir -p "$state/redis"
  for _ in 1 2 3; do
    port=$(free_port)
    rm -f "$state/redis/redis.pid"
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
      --dir "$state/redis" --pidfile "$state/redis/redis.pid" --logfile "$state/redis/redis.log" >/dev/null
    for _ in $(seq 50); do
      if [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]; then
        echo "$port" >"$state/redis_port"
        return
      fi
      sleep 0.1
    done
    log "redis did not start on port $port; its log:"; tail -n 20 "$state/redis/redis.log" >&2 || true
    stop_redis
    mkdir -p "$state/redis"
  done
  return 1
}

case "${1:-start}" in
start)
  mkdir -p "$state"
  install_missing
  if ! pg_up; then stop_pg; start_pg; log "postgres on 127.0.0.1:$(value pg_port) ($(value pg_dir))"; fi
  if ! redis_up; then stop_redis; start_redis; log "redis on 127.0.0.1:$(value redis_port)"; fi
  {
    echo "export MCPSTACK_POSTGRES_URL='postgres://postgres@127.0.0.1:$(value pg_port)/postgres?sslmode=disable'"
    echo "export MCPSTACK_REDIS_URL='redis://127.0.0.1:$(value redis_port)/0'"
  } >"$envfile"
  cat "$envfile"
  ;;
stop)
  stop_pg
  stop_redis
  rm -f "$envfile"
  ;;
*)
  echo "usage: $0 [start|stop]" >&2
  exit 2
  ;;
esac
