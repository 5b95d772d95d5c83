#!/usr/bin/env bash
# One command for the demo on the embedded default (SQLite + django-q2's ORM broker):
# installs what is missing, migrates, seeds sample agencies and insurers and the sample kasko value
# list, then runs the sandbox insurers, the web server and a qcluster until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# The demo settings: the developer ones with DEBUG off, so agents see the Turkish error pages,
# never Django's debug page (DJANGO_SETTINGS_MODULE=insurehub.settings.local for that).
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-insurehub.settings.demo}"
PY=.venv/bin/python
PORT="${PORT:-8000}"
# The sandbox states each insurer's port (its base port + the insurer's own offset); set
# SANDBOX_BASE_PORT to move them all. Nothing below lists the insurers or their ports.
sandbox_args=(${SANDBOX_BASE_PORT:+--base-port "$SANDBOX_BASE_PORT"})
mkdir -p var

$PY manage.py migrate --noinput
$PY manage.py createcachetable  # the shared cache's table (REDIS_URL unset)
# The insurers' URLs and the sample agencies' credentials, as the sandbox hands them out.
$PY -m sandbox "${sandbox_args[@]}" --demo-manifest > var/demo-insurers.json
$PY manage.py seed_demo --manifest var/demo-insurers.json
# The TSB kasko value list the kasko form's vehicle picker searches: the sample (docs/vehicles.md),
# loaded once; a real month's list is imported the same way, or uploaded in the admin.
$PY manage.py import_kasko_values vehicles/sample/kasko-deger-listesi-2026-12.csv --month 2026-12 --skip-loaded
$PY manage.py ensure_schedules

pids=()
stopped=0
# SIGTERM to every process (qcluster's main process stops its own workers within seconds: the work
# pump ends its minute early, and a worker waiting on an insurer for a sync item or an issuance cuts
# the call short and hands the record back, due at once for the next start); whatever still runs
# after STOP_GRACE seconds is SIGKILLed, qcluster with its whole process group so no worker is left
# behind (its records then wait out their lease).
cleanup() {
    [ "$stopped" = 1 ] && return
    stopped=1
    kill -TERM "${pids[@]}" 2>/dev/null || true
    local deadline=$((SECONDS + ${STOP_GRACE:-15})) pid alive
    while [ "$SECONDS" -lt "$deadline" ]; do
        alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.2
    done
    for pid in "${pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            echo "pid $pid still running after ${STOP_GRACE:-15} s: killing it" >&2
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

$PY -m sandbox "${sandbox_args[@]}" --realistic > var/sandbox.log 2>&1 & pids+=($!)
# In a process group of its own: Ctrl-C reaches it once, as cleanup's SIGTERM, and a SIGKILL can
# take its workers with it.
setsid $PY manage.py qcluster > var/qcluster.log 2>&1 & pids+=($!)
echo "Sandbox insurers (log: var/sandbox.log):"
$PY -m sandbox "${sandbox_args[@]}" --list | sed 's/^/  /'
echo "qcluster log: var/qcluster.log"
echo "Open http://127.0.0.1:${PORT}/  (logins: ajan1 / demo12345, admin / demo12345)"
$PY manage.py runserver "127.0.0.1:${PORT}" & pids+=($!)
wait -n "${pids[@]}"
