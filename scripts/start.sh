#!/usr/bin/env bash
# `npm start`: the agent on the Node.js the box ships, from a fresh checkout: fetches that Node
# (scripts/box-node.sh), installs the dependencies with it (scripts/npm-deps.sh), builds, serves.
# Arguments go to `printbox-agent serve` (`npm start -- --config printbox.toml`).
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(scripts/box-node.sh)/bin:$PATH"
export PATH
scripts/npm-deps.sh
npm run build --silent
exec node dist/src/cli.js serve "$@"
