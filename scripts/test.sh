#!/usr/bin/env bash
# The one test command (README; `.ci/run` calls it). Installs what the tests need (Python
# packages in .venv; Chromium, Redis and PostgreSQL from Debian's packages), then runs:
#   1. the whole suite on the embedded default (SQLite, ORM broker);
#   2. the scale-out suite (-m scaleout) on PostgreSQL with Redis as broker and shared state.
# Extra arguments go to the first pytest run (e.g. `scripts/test.sh -k anka -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/install-services.sh
export DJANGO_SETTINGS_MODULE=insurehub.settings.test
export TEST_ARTIFACTS_DIR="$PWD/test-artifacts"
mkdir -p "$TEST_ARTIFACTS_DIR"

run_pytest() {
  set +e
  .venv/bin/python -m pytest "$@"
  local status=$?
  set -e
  if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure here" >&2
    return 1
  fi
  return "$status"
}

run_pytest -m "not scaleout" "$@"

if [ "$#" -eq 0 ] && compgen -G "tests/scaleout/test_*.py" >/dev/null; then
  database_url=$(bash scripts/postgres.sh start)
  trap 'bash scripts/postgres.sh stop' EXIT
  DATABASE_URL="$database_url" SCALEOUT_REDIS=1 run_pytest -m scaleout tests/scaleout
fi
