#!/usr/bin/env bash
# After mmdebstrap (on the finished root directory): first-boot identity, resolver link,
# no logs or caches, every time stamp clamped to SOURCE_DATE_EPOCH.
set -euo pipefail
root=$1
: "${SOURCE_DATE_EPOCH:?}"
cp "$PRINTBOX_REPO/rootfs-overlay/etc/hostname" "$root/etc/hostname"
cp "$PRINTBOX_REPO/rootfs-overlay/etc/hosts" "$root/etc/hosts"
ln -sfn ../run/systemd/resolve/stub-resolv.conf "$root/etc/resolv.conf"
# Empty machine-id: each box makes its own at first boot (and no first-boot preset run).
: > "$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id" "$root"/etc/ssh/ssh_host_*
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
  "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old "$root"/var/cache/ldconfig/aux-cache
find "$root/var/log" -type f -delete
rm -rf "$root/tmp/"* "$root/var/tmp/"*
# /etc and /var are current for this /usr: systemd's units for a /usr changed since the last boot
# (ConditionNeedsUpdate=; here systemd-sysusers, whose users the build made, customize.sh) are
# skipped at the first boot too, a process start less on the boot's path. An update's slot carries
# its own. The clamp below leaves these files no older than /usr, which systemd reads as current.
for d in etc var; do printf 'TIMESTAMP_NSEC=%s000000000\n' "$SOURCE_DATE_EPOCH" > "$root/$d/.updated"; done
find "$root" -xdev -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0 -r touch -h -d "@$SOURCE_DATE_EPOCH"
