#!/usr/bin/env bash
# Start a private Redis (Debian's redis-server) for the scale-out tests and print its URL.
# Usage: scripts/redis.sh start|stop|restart   (port $REDIS_PORT or 63799, data in var/redis)
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${REDIS_PORT:-63799}"
DIR="$PWD/var/redis"
mkdir -p "$DIR"
start() {
  if ! redis-cli -p "$PORT" ping >/dev/null 2>&1; then
    redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$DIR" \
      --daemonize yes --pidfile "$DIR/redis.pid" --logfile "$DIR/redis.log"
    for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
}
stop() { redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true; }
case "${1:-start}" in
  start) start; echo "redis://127.0.0.1:$PORT/0" ;;
  stop) stop ;;
  restart) stop; sleep 0.5; start; echo "redis://127.0.0.1:$PORT/0" ;;
esac
