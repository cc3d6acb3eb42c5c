#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than package-lock.json, with
# whatever Node is first on PATH: its callers (scripts/test.sh, scripts/start.sh) put the box's
# Node there first, so npm checks each package's `engines` against the Node that will run it and
# prints no EBADENGINE for a machine Node the project never runs on.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
