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

# Under qemu-user every process an arm64 maintainer script starts costs about 0.1 s, and
# two tools run twice while the packages install: update-ca-certificates (ca-certificates' postinst,
# then its trigger: about 150 s together, 4 processes per certificate) and update-initramfs (the
# kernel's postinst.d hook, then initramfs-tools' trigger: about 120 s each). Each is diverted
# (dpkg-divert, as live-build does while it installs) to a stand-in that notes the call and does
# nothing; scripts/image/run-deferred.sh removes the diversions and runs each real tool once, on the
# installed packages, as their triggers ran them last. (A stand-in earlier in the PATH would not
# do: apt gives dpkg its own PATH, DPkg::Path.)
for tool in update-ca-certificates update-initramfs; do
  chroot "$root" dpkg-divert --quiet --local --rename --divert "/usr/sbin/$tool.printbox-deferred" --add "/usr/sbin/$tool"
  printf '#!/bin/sh\n# PrintBox build: run once by scripts/image/run-deferred.sh\necho "%s $*" >> /tmp/printbox-deferred\n' \
    "$tool" > "$root/usr/sbin/$tool"
  chmod 0755 "$root/usr/sbin/$tool"
done
# The SSH host keys: openssh-server's postinst makes three (RSA under emulation: seconds) unless
# they exist, and customize.sh deletes them (each box makes its own): empty stand-ins instead.
mkdir -p "$root/etc/ssh"
for k in rsa ecdsa ed25519; do : > "$root/etc/ssh/ssh_host_${k}_key"; done
