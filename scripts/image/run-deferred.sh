#!/usr/bin/env bash
# mmdebstrap customize hook, the first (outside the chroot, $1 = root): the tools the package
# installation deferred (scripts/image/pre-install.sh's stand-ins), each run once now, as the
# packages' triggers would have run them last: the same inputs, so the same /etc/ssl/certs and the
# same initramfs as two runs each gave (issue 34: about 4 minutes less under qemu-user).
set -euo pipefail
root=$1
log=$root/tmp/printbox-deferred
echo "deferred while installing: $(sort "$log" 2>/dev/null | uniq -c | tr -s ' \n' ' ')"
for tool in update-ca-certificates update-initramfs; do
  grep -q "^# PrintBox build: run once" "$root/usr/sbin/$tool" \
    || { echo "run-deferred.sh: /usr/sbin/$tool is not the build's stand-in" >&2; exit 1; }
  rm -f "$root/usr/sbin/$tool"
  chroot "$root" dpkg-divert --quiet --local --rename --remove "/usr/sbin/$tool"
  [ -x "$root/usr/sbin/$tool" ] || { echo "run-deferred.sh: /usr/sbin/$tool missing after the diversion" >&2; exit 1; }
done
rm -f "$log"
# Empty stand-ins (pre-install.sh): customize.sh deletes every host key; each box makes its own.
rm -f "$root"/etc/ssh/ssh_host_*
# ca-certificates' trigger: the links and the bundle from /etc/ca-certificates.conf, and the hooks.
chroot "$root" update-ca-certificates
# The kernel's hook (update-initramfs -c) and initramfs-tools' trigger (-u), once: every hook and
# setting of the installed packages and pre-install.sh is in place. Then the initramfs-tools
# post-update hooks (raspi-firmware's copies it to /boot/firmware) as after any update.
for kver in $(ls "$root/lib/modules"); do
  chroot "$root" update-initramfs -c -k "$kver"
done
