#!/usr/bin/env bash
# Install (from Debian's packages) what the tests need beyond Python: Chromium for the browser
# tests, Redis for the shared-state and scale-out tests, PostgreSQL 15 for scale-out, poppler-utils'
# pdftoppm to render the comparison PDF as a person sees it (tests/quotes/test_comparison_pdf.py).
# Idempotent: installs only what is missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing ${missing[*]}: run as root, or install them with apt-get" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
