#!/usr/bin/env bash
# Builds the agent for the image: scripts/image/build-agent.sh <amd64|arm64> <out-dir>
# <out-dir> becomes /opt/printbox: dist/ (compiled from this checkout), node_modules/ (production
# dependencies for the target CPU), node/ (the official Node.js binary from the npm registry).
# better-sqlite3 is compiled for the target's Node and CPU (cross-compiled for arm64 with
# crossbuild-essential-arm64) and cached in $CACHE/addons; `usb` installs its prebuilt
# per-platform package. Nothing is left to download at first boot.
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
mkdir -p "$work/src" "$work/prod" "$CACHE/node" "$CACHE/addons" "$out"

# 1. Node.js for the target (cached package tarball from the npm registry).
node_tgz=$CACHE/node/$NODE_PACKAGE-$NODE_VERSION.tgz
if [ ! -s "$node_tgz" ]; then
  (cd "$CACHE/node" && npm pack --silent "$NODE_PACKAGE@$NODE_VERSION" >/dev/null)
fi
nodedir=$CACHE/node/$NODE_PACKAGE-$NODE_VERSION
if [ ! -x "$nodedir/bin/node" ]; then
  mkdir -p "$nodedir.tmp" && tar -xzf "$node_tgz" -C "$nodedir.tmp" --strip-components=1
  rm -rf "$nodedir" && mv "$nodedir.tmp" "$nodedir"
fi
mkdir -p "$out/node/bin"
install -m 0755 "$nodedir/bin/node" "$out/node/bin/node"
install -m 0644 "$nodedir/LICENSE" "$out/node/LICENSE"

# 2. The agent's JavaScript, compiled from this checkout's files (tracked and new, not ignored).
# Only src/ is compiled (tests and benchmarks are not shipped, and their state never blocks an image).
(cd "$repo" && git ls-files -z -co --exclude-standard -- src scripts/build.mjs \
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
cp "$work/src/dist/build-info.json" "$out/dist/build-info.json"
find "$out/dist" -name '*.map' -delete
cp "$repo/package.json" "$repo/package-lock.json" "$repo/README.md" "$out/"

# 3. Production dependencies for the target platform, no install scripts (native code below).
cp "$repo/package.json" "$repo/package-lock.json" "$work/prod/"
(cd "$work/prod" && npm ci --silent --omit=dev --ignore-scripts --no-audit --no-fund \
  --os=linux --cpu="$NODE_ARCH" --libc=glibc >/dev/null)
# Keep only this platform's prebuilt usb package.
find "$work/prod/node_modules/@node-usb" -mindepth 1 -maxdepth 1 ! -name "usb-linux-$NODE_ARCH-gnu" -exec rm -rf {} + 2>/dev/null || true

# 4. better-sqlite3 for the target's Node ABI and CPU (cached).
bs_dir=$work/prod/node_modules/better-sqlite3
bs_ver=$(node -p "require('$bs_dir/package.json').version")
addon=$CACHE/addons/better-sqlite3-$bs_ver-node$NODE_VERSION-linux-$NODE_ARCH.node
if [ ! -s "$addon" ]; then
  gyp=$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js
  t0=$(date +%s)
  (
    cd "$bs_dir"
    if [ "$NODE_ARCH" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
      export CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar \
        LINK=aarch64-linux-gnu-g++ CC_host=gcc CXX_host=g++
    fi
    npm_config_nodedir="$nodedir" node "$gyp" rebuild --release --nodedir="$nodedir" --arch="$NODE_ARCH" \
      --jobs="$(nproc)" >"$work/better-sqlite3-build.log" 2>&1 || { tail -40 "$work/better-sqlite3-build.log"; exit 1; }
  )
  cp "$bs_dir/build/Release/better_sqlite3.node" "$addon.tmp" && mv "$addon.tmp" "$addon"
  echo "better-sqlite3 $bs_ver built for node $NODE_VERSION linux-$NODE_ARCH in $(( $(date +%s) - t0 ))s"
fi
rm -rf "$bs_dir/build" "$bs_dir/deps" "$bs_dir/src"
mkdir -p "$bs_dir/build/Release"
cp "$addon" "$bs_dir/build/Release/better_sqlite3.node"
cp -a "$work/prod/node_modules" "$out/node_modules"

# Same inputs, same files: fixed times on everything.
find "$out" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
echo "agent for $target: node $NODE_VERSION, better-sqlite3 $bs_ver, $(du -sh "$out" | cut -f1)"
