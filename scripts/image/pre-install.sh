#!/usr/bin/env bash
# mmdebstrap essential hook (outside the chroot, $1 = root): settings that must be in place
# before the kernel and initramfs-tools install, so the initramfs is generated once, right.
set -euo pipefail
root=$1
# One line: the list may span lines in the layer file, and it becomes a shell word list below.
# shellcheck disable=SC2086
PRINTBOX_INITRAMFS_MODULES=$(echo ${PRINTBOX_INITRAMFS_MODULES:-})
mkdir -p "$root/etc/initramfs-tools/conf.d" "$root/etc/initramfs-tools/hooks"
{
  echo "# PrintBox: zstd-compressed initramfs (fast to unpack)"
  echo "COMPRESS=zstd"
  if [ -n "${PRINTBOX_INITRAMFS_MODULES:-}" ]; then
    echo "# only the modules the target boots from (image/layers/<target>.conf)"
    echo "MODULES=list"
  fi
} > "$root/etc/initramfs-tools/conf.d/printbox"
if [ -n "${PRINTBOX_INITRAMFS_MODULES:-}" ]; then
  cat > "$root/etc/initramfs-tools/hooks/printbox-modules" <<HOOK
#!/bin/sh
# PrintBox: the modules the target boots from (MODULES=list in conf.d/printbox).
[ "\$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
for m in $PRINTBOX_INITRAMFS_MODULES crc32c_generic; do manual_add_modules "\$m"; done
HOOK
  chmod 0755 "$root/etc/initramfs-tools/hooks/printbox-modules"
  printf '%s\n' $PRINTBOX_INITRAMFS_MODULES > "$root/etc/initramfs-tools/printbox-modules.list"
fi
