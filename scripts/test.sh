#!/usr/bin/env bash
# The one test command (README, docs/testing.md; `.ci/run` calls it). Installs what the tests need (Python
# packages in .venv from requirements/dev.txt; Chromium, Redis and PostgreSQL from Debian's
# packages), checks the tree in seconds (docs/tooling.md), then runs:
#   1. the whole suite on the embedded default (SQLite, ORM broker);
#   2. the scale-out and chaos suites (-m "scaleout or chaos") on PostgreSQL, with Redis as
#      django-q2's broker and as the shared rate/budget state.
# Extra arguments go to the first pytest run (e.g. `scripts/test.sh -k anka -x`); the checks run
# every time, before any test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh

# The checks, before anything slow: the lock matches pyproject.toml, lint, formatting, types.
bash scripts/lock.sh --check
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .
.venv/bin/mypy .

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

run_pytest -m "not scaleout and not chaos" "$@"

# Known vulnerabilities in the pinned dependencies fail the run (see scripts/audit.sh).
if [ "$#" -eq 0 ]; then
  bash scripts/audit.sh
fi

# Phase 2: scale-out and chaos on the real engines (only in a full run, and once they exist).
if [ "$#" -eq 0 ] && compgen -G "tests/scaleout/test_*.py" >/dev/null; then
  database_url=$(bash scripts/postgres.sh start)
  redis_url=$(bash scripts/redis.sh start)
  trap 'bash scripts/redis.sh stop; bash scripts/postgres.sh stop' EXIT
  DATABASE_URL="$database_url" REDIS_URL="$redis_url" run_pytest -m "scaleout or chaos" tests/scaleout tests/chaos
fi
