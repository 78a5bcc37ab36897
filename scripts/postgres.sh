#!/usr/bin/env bash
# A throwaway PostgreSQL server for icmlgym's shared leaderboard: tests and local trials.
#
#   scripts/postgres.sh start     install PostgreSQL from Debian's packages if missing, initialise
#                                 a cluster in $ICMLGYM_PG_DIR (default: $TMPDIR/icmlgym-pg), start it
#                                 on 127.0.0.1 on a free port as a non-root user, create the database,
#                                 and print `export ICMLGYM_PG_URL=postgresql+psycopg://...`
#                                 (so `eval "$(scripts/postgres.sh start)"` exports it).
#                                 Idempotent: a server already running there is reused.
#   scripts/postgres.sh url       print the URL of the running server (exit 1 if none)
#   scripts/postgres.sh status    say whether it runs
#   scripts/postgres.sh stop      stop it (the data folder stays; `start` reuses it)
#   scripts/postgres.sh destroy   stop it and delete the data folder
#   scripts/postgres.sh install   only install the Debian packages if missing
#
# With ICMLGYM_PG_NO_INSTALL=1 (the test fixtures set it) `start` never installs anything: a
# missing PostgreSQL is an error naming the install command.
#
# The server accepts connections from loopback only, without a password (trust
# authentication), for a single-machine trial or CI. For a team's shared server use
# a managed PostgreSQL with passwords or certificates; icmlgym only needs its URL.
# Messages go to stderr; stdout carries only the export line or the URL.
set -euo pipefail

ROOT_DIR="${ICMLGYM_PG_DIR:-${TMPDIR:-/tmp}/icmlgym-pg}"
DATA="$ROOT_DIR/data"
SOCK="$ROOT_DIR/socket"
LOG="$ROOT_DIR/server.log"
PORT_FILE="$ROOT_DIR/port"
DB_NAME="${ICMLGYM_PG_DB:-icmlgym}"
DB_USER="icmlgym"

say() { echo "postgres.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return 0; fi
  return 1
}

install_pg() {
  if pg_bin >/dev/null; then return 0; fi
  # the tests never install packages (.ci/run does): they set ICMLGYM_PG_NO_INSTALL=1
  [ "${ICMLGYM_PG_NO_INSTALL:-0}" = 1 ] && die "PostgreSQL is not installed (install it first: apt-get install -y postgresql; .ci/run does)"
  [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed and installing it needs root: apt-get install -y postgresql"
  command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is not installed and apt-get is not available to install it"
  say "installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq postgresql >/dev/null 2>&1 || { apt-get update -qq >&2 && apt-get install -y -qq postgresql >/dev/null; }
  pg_bin >/dev/null || die "apt-get installed postgresql but no initdb was found under /usr/lib/postgresql/*/bin"
}

# The server must not run as root: use the Debian package's `postgres` user, else create one.
RUN_USER=""
as_user() {
  if [ -n "$RUN_USER" ]; then runuser -u "$RUN_USER" -- "$@"; else "$@"; fi
}
pick_user() {
  if [ "$(id -u)" != 0 ]; then RUN_USER=""; return; fi
  if id postgres >/dev/null 2>&1; then RUN_USER=postgres
  else
    id icmlgym-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin icmlgym-pg
    RUN_USER=icmlgym-pg
  fi
}

free_port() {
  local p
  for p in $(shuf -i 20000-60000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  die "no free TCP port found on 127.0.0.1"
}

url() { echo "postgresql+psycopg://$DB_USER@127.0.0.1:$(cat "$PORT_FILE")/$DB_NAME"; }

running() {
  local bin
  bin=$(pg_bin) || return 1
  [ -f "$DATA/PG_VERSION" ] && [ -f "$PORT_FILE" ] || return 1
  as_user "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1 || return 1
  "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$PORT_FILE")" >/dev/null 2>&1
}

start() {
  install_pg
  local bin port
  bin=$(pg_bin)
  mkdir -p "$ROOT_DIR"
  chmod 755 "$ROOT_DIR"
  if [ -n "$RUN_USER" ]; then chown "$RUN_USER" "$ROOT_DIR"; fi
  as_user test -w "$ROOT_DIR" -a -x "$ROOT_DIR" \
    || die "user ${RUN_USER:-$(id -un)} cannot enter $ROOT_DIR (the server must not run as root); set ICMLGYM_PG_DIR to a folder under one that others can enter, such as /tmp"
  if running; then
    say "reusing the server in $ROOT_DIR (port $(cat "$PORT_FILE"))"
  else
    if [ ! -f "$DATA/PG_VERSION" ]; then
      rm -rf "$DATA"
      as_user mkdir -p "$DATA" "$SOCK"
      as_user "$bin/initdb" -D "$DATA" -U "$DB_USER" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$ROOT_DIR/initdb.log" 2>&1 \
        || as_user "$bin/initdb" -D "$DATA" -U "$DB_USER" --auth=trust --encoding=UTF8 --no-locale >"$ROOT_DIR/initdb.log" 2>&1 \
        || die "initdb failed; see $ROOT_DIR/initdb.log"
    fi
    as_user mkdir -p "$SOCK"
    # a stale pid file from a killed server would stop pg_ctl from starting a new one
    as_user "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1 || rm -f "$DATA/postmaster.pid"
    port=$(free_port)
    echo "$port" >"$PORT_FILE"
    touch "$LOG"
    if [ -n "$RUN_USER" ]; then chown "$RUN_USER" "$LOG"; fi
    as_user "$bin/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $SOCK -c max_connections=200" start >/dev/null 9>&- \
      || die "the server did not start; see $LOG"
    say "started PostgreSQL $("$bin/postgres" --version | awk '{print $3}') in $ROOT_DIR on 127.0.0.1:$port as ${RUN_USER:-$(id -un)}"
  fi
  port=$(cat "$PORT_FILE")
  if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U "$DB_USER" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'" | grep -q 1; then
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$DB_USER" "$DB_NAME" 2>/dev/null \
      || "$bin/psql" -h 127.0.0.1 -p "$port" -U "$DB_USER" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'" | grep -q 1 \
      || die "could not create database $DB_NAME"
  fi
  echo "export ICMLGYM_PG_URL=$(url)"
}

stop() {
  local bin
  bin=$(pg_bin) || { say "PostgreSQL is not installed; nothing to stop"; return 0; }
  if [ -f "$DATA/PG_VERSION" ] && as_user "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_user "$bin/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
    say "stopped the server in $ROOT_DIR"
  else
    say "no server running in $ROOT_DIR"
  fi
}

pick_user
cmd="${1:-start}"
case "$cmd" in
  start)
    mkdir -p "$(dirname "$ROOT_DIR")"
    # one start at a time for this folder (parallel test sessions)
    exec 9>"$ROOT_DIR.lock"
    flock -w 120 9 || die "timed out waiting for another postgres.sh on $ROOT_DIR"
    start
    ;;
  url) running || die "no server running in $ROOT_DIR (run: scripts/postgres.sh start)"; url ;;
  status) if running; then say "running: $(url)"; else say "not running ($ROOT_DIR)"; exit 1; fi ;;
  stop) stop ;;
  destroy) stop; rm -rf "$ROOT_DIR" "$ROOT_DIR.lock"; say "removed $ROOT_DIR" ;;
  install) install_pg ;;
  -h|--help|help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) die "unknown command '$cmd' (start | url | status | stop | destroy | install)" ;;
esac
