#!/usr/bin/env bash
# mmdebstrap customize hook, the first (outside the chroot, $1 = root): the tools the package
# installation deferred (scripts/image/pre-install.sh's stand-ins), each run once now, as the
# packages' triggers would have run them last: the same inputs, so the same /etc/ssl/certs and the
# same initramfs as two runs each gave (about 4 minutes less under qemu-user).
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
# ca-certificates' trigger: the links and the bundle from /etc/ca-certificates.conf. The root's own
# script, run by the host's shell and tools: about 5 processes per certificate, each 75-95 ms under
# qemu-user for an arm64 root (about 55 s), 1-2 s natively. It runs in a private mount namespace
# where the root's directories are bound over the host's, so its links name the box's paths
# (/usr/share/ca-certificates/...), as they would from the chroot. The root installs no hooks
# (/etc/ca-certificates/update.d), which would need its own programs: refused if it does.
if [ -n "$(ls -A "$root/etc/ca-certificates/update.d" 2>/dev/null)" ]; then
  echo "run-deferred.sh: $root/etc/ca-certificates/update.d has hooks; run update-ca-certificates in the chroot" >&2
  exit 1
fi
[ -d "$root/usr/share/ca-certificates" ] && [ "$root" != / ] || { echo "run-deferred.sh: $root is not a root with ca-certificates" >&2; exit 1; }
unshare --mount --propagation private sh -euc '
  for path in /etc/ssl /etc/ca-certificates /etc/ca-certificates.conf /usr/share/ca-certificates /usr/local/share/ca-certificates; do
    mount --bind "$1$path" "$path"
  done
  sh "$1/usr/sbin/update-ca-certificates"' update-ca-certificates "$root"
# The kernel's hook (update-initramfs -c) and initramfs-tools' trigger (-u), once: every hook and
# setting of the installed packages and pre-install.sh is in place. Then the initramfs-tools
# post-update hooks (raspi-firmware's copies it to /boot/firmware) as after any update.
for kver in $(ls "$root/lib/modules"); do
  chroot "$root" update-initramfs -c -k "$kver"
done
