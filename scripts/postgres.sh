#!/usr/bin/env bash
# Start a private PostgreSQL 15 for the scale-out tests and print its DATABASE_URL.
# Usage: scripts/postgres.sh start|stop   (data in var/pg, or /tmp/insurehub-pg-<port> where the
# postgres user cannot enter the checkout; port $PGPORT or 54329)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=/usr/lib/postgresql/15/bin
PGPORT="${PGPORT:-54329}"
DATA="$PWD/var/pg"
RUN_AS=()
if [ "$(id -u)" -eq 0 ]; then
  RUN_AS=(runuser -u postgres --)
  # As root the server runs as `postgres`, which may not be able to enter this checkout (a clone in
  # a private temporary directory, say): then the cluster lives where it can, one per port.
  if ! runuser -u postgres -- test -x "$PWD" 2>/dev/null; then
    DATA="/tmp/insurehub-pg-$PGPORT"
  fi
fi

case "${1:-start}" in
  start)
    mkdir -p "$DATA"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$DATA"; fi
    if [ ! -f "$DATA/PG_VERSION" ]; then
      "${RUN_AS[@]}" "$BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 >/dev/null
    fi
    if ! "${RUN_AS[@]}" "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
      "${RUN_AS[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w \
        -o "-p $PGPORT -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >/dev/null
    fi
    "$BIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='insurehub'" \
      | grep -q 1 || "$BIN/createdb" -h 127.0.0.1 -p "$PGPORT" -U postgres insurehub
    echo "postgres://postgres@127.0.0.1:$PGPORT/insurehub"
    ;;
  stop)
    "${RUN_AS[@]}" "$BIN/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1 || true
    ;;
esac
