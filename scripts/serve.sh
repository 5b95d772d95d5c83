#!/usr/bin/env bash
# Serve the site in production: migrate, collect static files, then gunicorn in the foreground.
# Needs the production secrets (docs/configuration.md, docs/operations.md); refuses to start without them. TLS is the
# job of a proxy in front (nginx, a load balancer) that sets X-Forwarded-Proto.
set -euo pipefail
cd "$(dirname "$0")/.."
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-insurehub.settings.production}"
# /metrics sums every gunicorn worker's request counts from files here (console/http_metrics.py);
# emptied at each start, as prometheus-client's multiprocess mode requires.
export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-var/prometheus}"
rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
PY="${PYTHON:-.venv/bin/python}"

"$PY" manage.py migrate --noinput
# The shared cache's table (throttles, open streams, the pump's last pass) when REDIS_URL is unset.
"$PY" manage.py createcachetable
"$PY" manage.py collectstatic --noinput --verbosity 0

# gthread workers: a desk page waits on insurers through the queue, so threads, not cores, bound
# how many agents are served at once. An open results page holds one thread with its stream
# (quotes/live.py: idle, no database connection, at most 45 s before the browser reconnects), so
# workers × threads must cover the agents watching answers at once plus the pages being served:
# 2 × 48 serves about 80 agents waiting on quotes. The timeout outlives the slowest page; SIGTERM
# lets requests in progress finish for up to WEB_GRACEFUL_TIMEOUT seconds (a cut stream reconnects).
# A worker is replaced after WEB_MAX_REQUESTS requests (a leak cannot grow for ever), at a point
# spread over half of that (the jitter), so the workers are seldom replaced together: a worker
# being replaced stops taking requests while its open streams end, and with both at once the
# desk stalled for seconds (bench/s10_desk_load.py: p95 14.4 s against 5.1 s with none replaced,
# at 2000 ± 200, where 200 agents make ~30 requests a second per worker).
# The access log masks identity numbers in URLs (console/access_log.py).
max_requests="${WEB_MAX_REQUESTS:-20000}"
exec "$PY" -m gunicorn insurehub.wsgi:application \
    --bind "${WEB_BIND:-127.0.0.1:8000}" \
    --worker-class gthread \
    --workers "${WEB_WORKERS:-2}" \
    --threads "${WEB_THREADS:-48}" \
    --timeout "${WEB_TIMEOUT:-60}" \
    --graceful-timeout "${WEB_GRACEFUL_TIMEOUT:-20}" \
    --keep-alive 5 \
    --max-requests "$max_requests" \
    --max-requests-jitter "$((max_requests / 2))" \
    --access-logfile - \
    --logger-class console.access_log.MaskedAccessLogger \
    --no-control-socket \
    --forwarded-allow-ips "${WEB_FORWARDED_ALLOW_IPS:-127.0.0.1}"
