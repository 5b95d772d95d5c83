#!/usr/bin/env bash
# Chromium for the browser tests, from Debian's archive: Playwright drives /usr/bin/chromium and
# never downloads a browser of its own (do not run `playwright install`). Safe to run again.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y chromium
/usr/bin/chromium --version
