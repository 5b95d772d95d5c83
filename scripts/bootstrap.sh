#!/usr/bin/env bash
# Create .venv and install the locked requirements; safe to run again (it only does what is missing).
#   scripts/bootstrap.sh            requirements/dev.txt: the site plus the tests and tooling (the test
#                                   command, run.sh, a developer's machine)
#   scripts/bootstrap.sh --runtime  requirements/runtime.txt only: a server (no test tools there)
# Both files are hashed (pip's --require-hashes mode) and generated from pyproject.toml by
# scripts/lock.sh (docs/tooling.md).
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=requirements/dev.txt
if [ "${1:-}" = "--runtime" ]; then requirements=requirements/runtime.txt; fi

PYTHON="${PYTHON:-python3.11}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then PYTHON=python3; fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements.sha256
want="$(sha256sum "$requirements" | cut -d' ' -f1) $requirements"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet --require-hashes -r "$requirements"
  echo "$want" > "$stamp"
fi
