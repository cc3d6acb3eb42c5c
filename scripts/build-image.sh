#!/usr/bin/env bash
# Builds the PrintBox appliance image from image/ (definition), rootfs-overlay/ (files copied
# verbatim), systemd/ (units) and the agent in this checkout.
#   scripts/build-image.sh amd64   -> build/amd64/disk.img (GPT: ESP with GRUB, root slots A and B,
#                                     data), rootfs.img (slot A's content), printbox-<version>.raucb
#                                     (the same root as a signed RAUC update bundle) (QEMU, boot test)
#   scripts/build-image.sh arm64   -> build/arm64/printbox-rpi.img (Raspberry Pi 3/4/400/CM4/5/Zero 2 W
#                                     card: MBR, boot partition with U-Boot, root slots A and B, data),
#                                     rootfs.img, printbox-<version>.raucb (as for amd64), and
#                                     qemu-u-boot.bin for the smoke boot
# Runs as root (mmdebstrap root mode, chroot). Installs the Debian tools it needs when missing.
# Caches Debian packages and Node.js in $PRINTBOX_CACHE
# (default /var/cache/printbox-build). Reproducible: SOURCE_DATE_EPOCH (default: the time of the
# last commit) fixes every time stamp; the build ends with a package manifest.
set -euo pipefail
target=${1:-}
case "$target" in amd64|arm64) ;; *) echo "usage: $0 amd64|arm64" >&2; exit 2 ;; esac
repo=$(cd "$(dirname "$0")/.." && pwd)
export PRINTBOX_CACHE=${PRINTBOX_CACHE:-/var/cache/printbox-build}
CACHE=$PRINTBOX_CACHE
out=$repo/build/$target
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 1700000000)}
export LC_ALL=C.UTF-8 TZ=UTC
# shellcheck source=/dev/null
. "$repo/image/printbox.conf"
# shellcheck source=/dev/null
. "$repo/image/layers/$target.conf"

if [ "$(id -u)" -ne 0 ]; then echo "build-image.sh: must run as root (mmdebstrap, chroot)" >&2; exit 1; fi

build_start=$(date +%s)
stage_start=0
stage() { stage_start=$(date +%s); echo "== [$target] $1"; }
stage_end() { echo "== [$target] $1 took $(( $(date +%s) - stage_start ))s"; }

# ---------------------------------------------------------------------------------------------
stage "host tools"
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have mmdebstrap || need+=(mmdebstrap)
have mke2fs || need+=(e2fsprogs)
have systemd-analyze || need+=(systemd)
have openssl || need+=(openssl)
have genimage || need+=(genimage)
have mkfs.vfat || need+=(dosfstools)
have mcopy || need+=(mtools)
have rauc || need+=(rauc)
have mksquashfs || need+=(squashfs-tools)
# run-deferred.sh binds the root's certificate paths over the host's: they must exist here.
[ -f /etc/ca-certificates.conf ] && [ -d /usr/local/share/ca-certificates ] || need+=(ca-certificates)
if [ "$target" = amd64 ]; then
  have grub-mkstandalone || need+=(grub-common)
  [ -d /usr/lib/grub/x86_64-efi ] || need+=(grub-efi-amd64-bin)
fi
if [ "$target" = arm64 ]; then
  have qemu-aarch64-static || need+=(qemu-user-static)
  have update-binfmts || need+=(binfmt-support)
  have arch-test || need+=(arch-test)
  have mkimage || need+=(u-boot-tools)
fi
# arch-test and the keyring help mmdebstrap; uidmap not needed (root mode)
[ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  "$repo/scripts/apt-install.sh" "${need[@]}" >/dev/null
fi
if [ "$target" = arm64 ] && [ "$(uname -m)" != aarch64 ]; then
  # qemu-user-static runs the arm64 maintainer scripts; nothing mounts binfmt_misc here.
  [ -e /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  update-binfmts --enable >/dev/null 2>&1 || true
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
fi
stage_end "host tools"

# ---------------------------------------------------------------------------------------------
stage "update signing key"
# The operator's pair (PRINTBOX_BUNDLE_KEY, PRINTBOX_BUNDLE_CERT), or a development pair made here
# once (docs/image.md, updates), the same for both targets (npm test builds them at the same
# time: the lock). The certificate is the image's RAUC keyring.
keys=$repo/build/keys
export PRINTBOX_BUNDLE_KEY=${PRINTBOX_BUNDLE_KEY:-$keys/development.key}
export PRINTBOX_BUNDLE_CERT=${PRINTBOX_BUNDLE_CERT:-$keys/development.crt}
if [ "$PRINTBOX_BUNDLE_KEY" = "$keys/development.key" ]; then
  mkdir -p "$keys" && chmod 0700 "$keys"
  (
    flock 9
    if [ ! -s "$PRINTBOX_BUNDLE_KEY" ]; then
      (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
        -subj "/O=PrintBox/CN=PrintBox development update signing key (not for release)" \
        -keyout "$PRINTBOX_BUNDLE_KEY" -out "$PRINTBOX_BUNDLE_CERT" 2>/dev/null)
      chmod 0644 "$PRINTBOX_BUNDLE_CERT"
    fi
  ) 9>"$keys/.lock"
fi
[ -s "$PRINTBOX_BUNDLE_KEY" ] && [ -s "$PRINTBOX_BUNDLE_CERT" ] || { echo "no update signing key: $PRINTBOX_BUNDLE_KEY" >&2; exit 1; }
echo "signing certificate: $(openssl x509 -noout -subject -in "$PRINTBOX_BUNDLE_CERT")"
stage_end "update signing key"

# ---------------------------------------------------------------------------------------------
stage "agent (node $NODE_VERSION, $NODE_ARCH)"
agent=$CACHE/stage-$target/opt-printbox
mkdir -p "$CACHE/stage-$target"
"$repo/scripts/image/build-agent.sh" "$target" "$agent"
stage_end "agent (node $NODE_VERSION, $NODE_ARCH)"

# ---------------------------------------------------------------------------------------------
stage "root filesystem (mmdebstrap $SUITE $DEB_ARCH)"
rootfs=$out/rootfs
mkdir -p "$out" "$CACHE/debs-$DEB_ARCH"
rm -rf "$rootfs"
# shellcheck disable=SC2086
pkgs=$(echo $PACKAGES $KERNEL_PACKAGES ${LAYER_PACKAGES:-} | tr ' ' ',')
# The layer's packages from $SUITE-backports (BACKPORTS_PACKAGES): named pkg/$SUITE-backports, so
# apt takes them, and what they need that only backports has, from there; everything else stays
# from $SUITE. The backports source is there only for the build (finalize.sh empties the lists).
sources=("deb $MIRROR $SUITE $COMPONENTS" "deb $MIRROR $SUITE-updates $COMPONENTS"
  "deb $SECURITY_MIRROR $SUITE-security $COMPONENTS")
if [ -n "${BACKPORTS_PACKAGES:-}" ]; then
  sources+=("deb $MIRROR $SUITE-backports $COMPONENTS")
  for p in $BACKPORTS_PACKAGES; do pkgs=$(sed -E "s#(^|,)$p(,|\$)#\1$p/$SUITE-backports\2#" <<<"$pkgs"); done
fi
# The card's smoke boot (scripts/image/smoke-arm64.sh) runs the card's boot script on QEMU's virt
# machine with Debian's U-Boot for it: the one from this build's archive (u-boot-qemu, same U-Boot
# release as u-boot-rpi), kept beside the card, not installed in it.
extra_hooks=()
if [ "$target" = arm64 ]; then
  extra_hooks+=(--customize-hook="chroot \"\$1\" sh -c 'cd /tmp && apt-get download -q=2 u-boot-qemu'")
  extra_hooks+=(--customize-hook="dpkg-deb --fsys-tarfile \"\$1\"/tmp/u-boot-qemu_*.deb | tar -xO ./usr/lib/u-boot/qemu_arm64/u-boot.bin > $out/qemu-u-boot.bin; dpkg-deb -f \"\$1\"/tmp/u-boot-qemu_*.deb Version > $out/qemu-u-boot.version; rm -f \"\$1\"/tmp/u-boot-qemu_*.deb")
fi
export PRINTBOX_REPO=$repo PRINTBOX_TARGET=$target PRINTBOX_AGENT_DIR=$agent \
  PRINTBOX_INITRAMFS_MODULES=$INITRAMFS_MODULES
# Where mmdebstrap's time goes: a line as each phase starts (its own I: lines are
# filtered out below), and the chroot's dpkg.log (a time per unpack, configure and trigger) kept
# beside the manifest before finalize.sh empties /var/log.
mark() { echo "echo \"== [$target] mmdebstrap: $1 at \$(date -u +%T) (+\$(( \$(date +%s) - $build_start ))s)\""; }
# Kernel modules the layer leaves out (MODULES_LEFT_OUT), whichever of /lib and /usr/lib the
# kernel package ships them under.
module_excludes=()
for d in ${MODULES_LEFT_OUT:-}; do
  module_excludes+=("--dpkgopt=path-exclude=/lib/modules/*/kernel/$d/*" "--dpkgopt=path-exclude=/usr/lib/modules/*/kernel/$d/*")
done
mmdebstrap --mode=root --variant="$VARIANT" --architectures="$DEB_ARCH" \
  --components="$(echo $COMPONENTS | tr ' ' ',')" \
  --include="$pkgs" \
  --aptopt='APT::Install-Recommends "false"' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  "${module_excludes[@]}" \
  --skip=essential/unlink \
  --setup-hook="$(mark 'setup, download')" \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in $CACHE/debs-$DEB_ARCH /var/cache/apt/archives/" \
  --extract-hook="$(mark 'essential set extracted, installing it')" \
  --essential-hook="$(mark 'essential set installed, installing the packages')" \
  --essential-hook="$repo/scripts/image/pre-install.sh \"\$1\"" \
  --customize-hook="$(mark 'packages installed, running the deferred tools')" \
  --customize-hook="$repo/scripts/image/run-deferred.sh \"\$1\"" \
  --customize-hook="$(mark 'deferred tools run, customizing')" \
  --customize-hook="sync-out /var/cache/apt/archives $CACHE/debs-$DEB_ARCH" \
  "${extra_hooks[@]}" \
  --customize-hook="$repo/scripts/image/customize.sh \"\$1\"" \
  --customize-hook="cp \"\$1\"/var/log/dpkg.log $out/dpkg.log" \
  --customize-hook="$(mark 'customized')" \
  "$SUITE" "$rootfs" "${sources[@]}" 2>&1 | grep -v '^I: ' || { echo "mmdebstrap failed" >&2; exit 1; }
[ -x "$rootfs/opt/printbox/node/bin/node" ] || { echo "root filesystem incomplete" >&2; exit 1; }
# Every module the layer lists is in the initramfs (or built into the kernel): a hook that failed
# leaves a card that cannot find its root, and update-initramfs does not say so.
if [ -n "$INITRAMFS_MODULES" ]; then
  kver=$(ls "$rootfs/lib/modules" | sort -V | tail -n1)
  in_initrd=$(chroot "$rootfs" lsinitramfs "/boot/initrd.img-$kver" | sed -n 's|.*/\([^/]*\)\.ko.*|\1|p' | tr - _)
  for m in $INITRAMFS_MODULES; do
    grep -qx "$m" <<<"$in_initrd" && continue
    grep -q "/${m//_/[-_]}\.ko\$" "$rootfs/lib/modules/$kver/modules.builtin" && continue
    echo "initramfs lacks module $m" >&2; exit 1
  done
  echo "initramfs: $(wc -w <<<"$INITRAMFS_MODULES") listed modules present"
fi
# Every module the layer needs is there (or built into the kernel), whatever it leaves out.
if [ -n "${MODULES_NEEDED:-}" ]; then
  kver=$(ls "$rootfs/lib/modules" | sort -V | tail -n1)
  for m in $MODULES_NEEDED; do
    grep -q "/${m//_/[-_]}\.ko[^/]*:" "$rootfs/lib/modules/$kver/modules.dep" && continue
    grep -q "/${m//_/[-_]}\.ko\$" "$rootfs/lib/modules/$kver/modules.builtin" && continue
    echo "the kernel lacks module $m (MODULES_NEEDED): is it under MODULES_LEFT_OUT?" >&2; exit 1
  done
  echo "kernel modules: $(wc -w <<<"$MODULES_NEEDED") needed present; $(du -sm "$rootfs/lib/modules/$kver" | cut -f1) MB in all"
fi
"$repo/scripts/image/finalize.sh" "$rootfs"
stage_end "root filesystem (mmdebstrap $SUITE $DEB_ARCH)"

# ---------------------------------------------------------------------------------------------
stage "package manifest"
chroot "$rootfs" dpkg-query -W -f '${Package}\t${Version}\t${Architecture}\n' | sort > "$out/manifest.tsv"
{
  echo "# PrintBox $target image, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH, $SUITE"
  echo "# agent: $(cat "$rootfs/opt/printbox/dist/build-info.json" | tr -d '\n ')"
  echo "# node: $NODE_PACKAGE $NODE_VERSION (npm registry)"
  [ -z "${BACKPORTS_PACKAGES:-}" ] || echo "# from $SUITE-backports: $(echo $BACKPORTS_PACKAGES) and what they need from there"
  [ ! -s "$out/qemu-u-boot.version" ] || echo "# smoke boot's U-Boot (not in the image): u-boot-qemu $(cat "$out/qemu-u-boot.version") qemu_arm64"
} > "$out/manifest.txt"
cat "$out/manifest.tsv" >> "$out/manifest.txt"
cat "$out/manifest.txt"
echo "($(wc -l < "$out/manifest.tsv") packages)"
# Reproducibility is of the content (the ext4 bytes follow the host's directory order): every
# path with its type, mode, owner, time, link target, and each regular file's own sha256.
# Node's compile caches (/var/cache/printbox*/node-compile-cache, scripts/image/customize.sh) are
# left out: V8 writes different bytes for the same code at each run, and they follow from dist/.
content_digest() {
  { (cd "$1" && find . -xdev -path './var/cache/printbox*/node-compile-cache' -prune -o -printf '%p %y %m %U %G %T@ %l\n' | LC_ALL=C sort)
    (cd "$1" && find . -xdev -path './var/cache/printbox*/node-compile-cache' -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); } | sha256sum | cut -c1-64
}
content_digest "$rootfs" > "$out/content.sha256"
echo "root filesystem content sha256: $(cat "$out/content.sha256") (same inputs, same digest)"
stage_end "package manifest"

# ---------------------------------------------------------------------------------------------
stage "disk image, update bundle"
# Both targets: the boot partition (per target, below), root slot A with this root filesystem, an
# empty slot B, and the data partition, whose first content is the root's /var/lib/printbox: that
# directory then stays empty in the slots, where the partition is mounted over it (the layer's
# /etc/fstab). The update bundle is the same root filesystem, signed (scripts/image/bundle.sh).
work=$out/genimage
rm -rf "$work" && mkdir -p "$work/input" "$work/output" "$work/tmp" "$work/boot" "$work/data"
mkdir -p "$rootfs/var/lib/printbox"
cp -a "$rootfs/var/lib/printbox/." "$work/data/"
find "$rootfs/var/lib/printbox" -mindepth 1 -delete
mkfs_ext4() { # mkfs_ext4 <label> <uuid> <dir> <image> <size-MiB>
  rm -f "$4"
  E2FSPROGS_FAKE_TIME=$SOURCE_DATE_EPOCH mke2fs -q -F -t ext4 -b 4096 -I 256 -L "$1" -U "$2" \
    -E "hash_seed=$2,root_owner=0:0,lazy_itable_init=0,nodiscard" -d "$3" "$4" "${5}M"
  e2fsck -fn "$4" >/dev/null
}
# The root filesystem's image has room to spare (a third, and 512 MiB) and must fit a slot.
used_mb=$(du -sm --apparent-size "$rootfs" | cut -f1)
size=$(( (used_mb * 13 / 10 + 512 + 63) / 64 * 64 ))
[ "$size" -le "$ROOT_SLOT_MB" ] || { echo "root filesystem ($size MiB) larger than a slot ($ROOT_SLOT_MB MiB)" >&2; exit 1; }
mkfs_ext4 "$ROOT_LABEL" "$ROOT_UUID" "$rootfs" "$out/rootfs.img" "$size"
ln -f "$out/rootfs.img" "$work/input/rootfs.img"
mkfs_ext4 "$DATA_LABEL" "$DATA_UUID" "$work/data" "$work/input/data.ext4" "$DATA_MB"
if [ "$target" = amd64 ]; then
  # The EFI system partition: GRUB as the removable-media boot path (no NVRAM entry needed), its
  # grub.cfg built in; the environment block RAUC's grub backend and grub.cfg share, slot A
  # installed and preferred.
  grub-mkstandalone -O x86_64-efi --locales= --themes= --fonts= \
    --modules="part_gpt fat ext2 search search_label loadenv test regexp echo linux normal" \
    --output="$work/BOOTX64.EFI" "boot/grub/grub.cfg=$repo/image/amd64/grub.cfg"
  grub-editenv "$work/grubenv" create
  grub-editenv "$work/grubenv" set ORDER="A B" A_OK=1 A_TRY=0 B_OK=0 B_TRY=0
  mkfs.vfat -n PBOXESP -i 7062626e --invariant -C "$work/input/esp.vfat" $(( ESP_MB * 1024 )) >/dev/null
  touch -d "@$SOURCE_DATE_EPOCH" "$work/BOOTX64.EFI" "$work/grubenv"
  mmd -i "$work/input/esp.vfat" ::EFI ::EFI/BOOT
  mcopy -m -i "$work/input/esp.vfat" "$work/BOOTX64.EFI" "$work/grubenv" ::EFI/BOOT/
  sed -e "s/@ROOT_MB@/$ROOT_SLOT_MB/" "$repo/image/amd64/genimage.cfg" > "$work/genimage.cfg"
  card=disk.img
else
  # The Pi's boot partition: the firmware, config.txt and cmdline.txt (raspi-firmware wrote them
  # into the root's /boot/firmware: kernel=u-boot.bin), the device trees the firmware hands on,
  # U-Boot, its boot script, and the slot variables (slot A with 3 tries; B empty, none).
  cp -a "$rootfs/boot/firmware/." "$work/boot/"
  find "$rootfs/boot/firmware" -mindepth 1 -delete
  # (the kernel and initramfs the hook copied there while the packages were installed, before the
  # overlay said kernel=u-boot.bin: U-Boot loads them from the slot)
  rm -f "$work/boot/"vmlinuz-* "$work/boot/"initrd.img-*
  kver=$(ls "$rootfs/lib/modules" | sort -V | tail -n1)
  cp "$rootfs/usr/lib/linux-image-$kver/broadcom/"bcm*.dtb "$work/boot/"
  cp "$rootfs/usr/lib/u-boot/rpi_arm64/u-boot.bin" "$work/boot/"
  mkimage -A arm64 -O linux -T script -C none -n "PrintBox slot choice" -d "$repo/image/rpi/boot.cmd" "$work/boot/boot.scr" >/dev/null
  printf 'BOOT_ORDER=A B\nBOOT_A_LEFT=3\nBOOT_B_LEFT=0\n' >"$work/rauc-env.txt"
  mkenvimage -s 0x4000 -o "$work/boot/rauc.env" "$work/rauc-env.txt"
  find "$work/boot" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  sed -e "s/@BOOT_LABEL@/$BOOT_LABEL/" -e "s/@BOOT_SIZE_MB@/$BOOT_SIZE_MB/" -e "s/@ROOT_MB@/$ROOT_SLOT_MB/" \
    "$repo/image/rpi/genimage.cfg" > "$work/genimage.cfg"
  card=printbox-rpi.img
fi
genimage --config "$work/genimage.cfg" --rootpath "$work/boot" --inputpath "$work/input" \
  --outputpath "$work/output" --tmppath "$work/tmp" >"$work/genimage.log" 2>&1 \
  || { cat "$work/genimage.log"; exit 1; }
mv "$work/output/$card" "$out/$card"
if [ "$target" = amd64 ]; then
  # The parts, for a test's copy of the disk (scripts/image/test-vm.sh assembles its own).
  rm -rf "$out/parts" && mkdir -p "$out/parts"
  mv "$work/input/esp.vfat" "$work/input/data.ext4" "$work/genimage.cfg" "$out/parts/"
fi
"$repo/scripts/image/bundle.sh" "$target" "$out/rootfs.img" "$out"
rm -rf "$work" "$out/vmlinuz" "$out/initrd.img"
touch -d "@$SOURCE_DATE_EPOCH" "$out/rootfs.img" "$out/$card"
[ ! -d "$out/parts" ] || touch -d "@$SOURCE_DATE_EPOCH" "$out/parts/"*
echo "rootfs.img ${size} MiB ($used_mb MiB used) in ${ROOT_SLOT_MB} MiB slots; $card $(( $(stat -c %s "$out/$card") / 1048576 )) MiB; sha256:"
(cd "$out" && sha256sum rootfs.img "$card")
stage_end "disk image, update bundle"
echo "== [$target] image built in $(( $(date +%s) - build_start ))s"
