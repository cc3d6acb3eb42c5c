#!/usr/bin/env bash
# Builds the agent for the image: scripts/image/build-agent.sh <amd64|arm64> <out-dir>
# <out-dir> becomes /opt/printbox: dist/ (compiled from this checkout), node_modules/ (production
# dependencies for the target CPU), node/ (the official Node.js binary from the npm registry).
# The native addons are N-API builds their packages ship: better-sqlite3's prebuilds/ and `usb`'s
# per-platform package; only the target's is kept. Nothing is left to download at first boot.
set -euo pipefail
target=$1
out=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${PRINTBOX_CACHE:-/var/cache/printbox-build}
# shellcheck source=/dev/null
. "$repo/image/printbox.conf"
# shellcheck source=/dev/null
. "$repo/image/layers/$target.conf"
: "${SOURCE_DATE_EPOCH:?}"
export SOURCE_DATE_EPOCH

work=$CACHE/agent-$target
rm -rf "$work" "$out"
mkdir -p "$work/src" "$work/prod" "$out"

# 1. Node.js for the target (the npm registry's package, cached; the same one the tests run on).
nodedir=$(PRINTBOX_CACHE=$CACHE "$repo/scripts/box-node.sh" "$NODE_ARCH")
mkdir -p "$out/node/bin"
install -m 0755 "$nodedir/bin/node" "$out/node/bin/node"
install -m 0644 "$nodedir/LICENSE" "$out/node/LICENSE"

# 2. The agent's JavaScript, compiled from this checkout's files (tracked and new, not ignored).
# Only src/ is compiled (tests and benchmarks are not shipped, and their state never blocks an image).
(cd "$repo" && git ls-files -z -co --exclude-standard -- src scripts/build.mjs scripts/bundle.mjs docs/openapi.yaml \
    package.json package-lock.json tsconfig.json README.md | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$work/src"
node -e '
  const fs = require("fs"); const f = process.argv[1];
  const c = JSON.parse(fs.readFileSync(f, "utf8")); c.include = ["src/**/*.ts"];
  fs.writeFileSync(f, JSON.stringify(c, null, 2));' "$work/src/tsconfig.json"
# Development aid only: PRINTBOX_AGENT_EXTRA_SRC=<dir> lays files over the copy before compiling.
if [ -n "${PRINTBOX_AGENT_EXTRA_SRC:-}" ]; then
  echo "WARNING: agent sources overlaid from $PRINTBOX_AGENT_EXTRA_SRC (not for release)" >&2
  cp -a "$PRINTBOX_AGENT_EXTRA_SRC/." "$work/src/"
fi
ln -s "$repo/node_modules" "$work/src/node_modules"
(cd "$work/src" && PRINTBOX_BUILD_TYPE=appliance \
  PRINTBOX_GIT_COMMIT=$(git -C "$repo" rev-parse --short=12 HEAD) node scripts/build.mjs)
mkdir -p "$out/dist"
cp -a "$work/src/dist/src" "$out/dist/src"
# The units run the bundle (scripts/bundle.mjs): an image without it would boot to no agent.
[ -s "$out/dist/src/printbox-agent.js" ] || { echo "the build made no dist/src/printbox-agent.js" >&2; exit 1; }
cp "$work/src/dist/build-info.json" "$out/dist/build-info.json"
find "$out/dist" -name '*.map' -delete
cp "$repo/package.json" "$repo/package-lock.json" "$repo/README.md" "$out/"

# 3. Production dependencies for the target platform, no install scripts (native code below).
cp "$repo/package.json" "$repo/package-lock.json" "$work/prod/"
(cd "$work/prod" && npm ci --silent --omit=dev --ignore-scripts --no-audit --no-fund \
  --os=linux --cpu="$NODE_ARCH" --libc=glibc >/dev/null)
# Keep only this platform's prebuilt usb package.
find "$work/prod/node_modules/@node-usb" -mindepth 1 -maxdepth 1 ! -name "usb-linux-$NODE_ARCH-gnu" -exec rm -rf {} + 2>/dev/null || true

# 4. better-sqlite3: its package carries N-API prebuilds for every platform; keep the target's
# and drop the sources it would need only to compile one.
bs_dir=$work/prod/node_modules/better-sqlite3
bs_ver=$(node -p "require('$bs_dir/package.json').version")
[ -s "$bs_dir/prebuilds/linux-$NODE_ARCH.node" ] || { echo "better-sqlite3 $bs_ver has no linux-$NODE_ARCH prebuild" >&2; exit 1; }
find "$bs_dir/prebuilds" -type f ! -name "linux-$NODE_ARCH.node" -delete
rm -rf "$bs_dir/deps" "$bs_dir/src" "$bs_dir/binding.gyp"
cp -a "$work/prod/node_modules" "$out/node_modules"

# Same inputs, same files: fixed times on everything.
find "$out" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
echo "agent for $target: node $NODE_VERSION, better-sqlite3 $bs_ver, $(du -sh "$out" | cut -f1)"
