#!/usr/bin/env bash
# The update bundle of a built root filesystem image: OUTDIR/printbox-VERSION.raucb, in RAUC's
# verity format, signed with PRINTBOX_BUNDLE_KEY and PRINTBOX_BUNDLE_CERT (scripts/build-image.sh
# sets them: the operator's pair, or the build's development pair). Runs without root.
#   scripts/image/bundle.sh ARCH ROOTFS_IMG OUTDIR [VERSION]     (VERSION: package.json's)
set -euo pipefail
arch=$1 img=$2 out=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
version=${4:-$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/package.json" | head -n1)}
: "${PRINTBOX_BUNDLE_KEY:?}" "${PRINTBOX_BUNDLE_CERT:?}" "${SOURCE_DATE_EPOCH:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln "$img" "$work/rootfs.ext4" 2>/dev/null || cp --sparse=always "$img" "$work/rootfs.ext4"
cat > "$work/manifest.raucm" <<MANIFEST
[update]
compatible=printbox-$arch
version=$version
build=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown) $SOURCE_DATE_EPOCH

[bundle]
format=verity

[image.rootfs]
filename=rootfs.ext4
MANIFEST
bundle=$out/printbox-$version.raucb
rm -f "$bundle"
# zstd at level 6 instead of mksquashfs's default gzip: 5 % smaller and about 14 times less CPU to
# make (7 s against 94 s wall for the amd64 root filesystem on 2 cores), and faster for the box to
# read while RAUC installs it (docs/performance.md, "A/B updates"). Both images' kernels read
# zstd squashfs (CONFIG_SQUASHFS_ZSTD=y).
# (its log only on failure: it also says it skipped checking the signature, meaning against a keyring)
rauc bundle --mksquashfs-args="-comp zstd -Xcompression-level 6" \
  --cert="$PRINTBOX_BUNDLE_CERT" --key="$PRINTBOX_BUNDLE_KEY" "$work" "$bundle" >"$work/log" 2>&1 \
  || { cat "$work/log" >&2; exit 1; }
echo "$bundle: $(( $(stat -c %s "$bundle") / 1048576 )) MiB, version $version, compatible printbox-$arch"
