#!/usr/bin/env bash
# One command for the demo on the embedded default (SQLite + django-q2's ORM broker):
# installs what is missing, migrates, seeds sample agencies and insurers, then runs the sandbox
# insurers, the web server and a qcluster until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-insurehub.settings.local}"
PY=.venv/bin/python
PORT="${PORT:-8000}"
mkdir -p var

$PY manage.py migrate --noinput
$PY manage.py seed_demo
$PY manage.py ensure_schedules

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

$PY -m sandbox --realistic > var/sandbox.log 2>&1 & pids+=($!)
$PY manage.py qcluster > var/qcluster.log 2>&1 & pids+=($!)
echo "Sandbox insurers on 127.0.0.1:8101-8104 (log: var/sandbox.log); qcluster log: var/qcluster.log"
echo "Open http://127.0.0.1:${PORT}/  (logins: ajan1 / demo12345, admin / demo12345)"
$PY manage.py runserver "127.0.0.1:${PORT}" & pids+=($!)
wait -n "${pids[@]}"
