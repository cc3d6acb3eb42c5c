#!/usr/bin/env bash
# mmdebstrap customize hook (outside the chroot, $1 = root; /proc and /dev are mounted in it):
# the overlay, the units, the agent, the agent's user, enabled and disabled services.
set -euo pipefail
root=$1
repo=$PRINTBOX_REPO
inroot() { chroot "$root" "$@"; }

# Files copied verbatim (owner root; modes as in the checkout).
cp -a --no-preserve=ownership "$repo/rootfs-overlay/." "$root/"
# Units
install -m 0644 "$repo"/systemd/*.service "$repo"/systemd/*.socket "$repo"/systemd/*.timer "$repo"/systemd/*.path \
  "$root/usr/lib/systemd/system/"
# Target-specific files (boot firmware settings)
if [ -d "$repo/image/layers/$PRINTBOX_TARGET.overlay" ]; then
  cp -a --no-preserve=ownership "$repo/image/layers/$PRINTBOX_TARGET.overlay/." "$root/"
fi

# RAUC's keyring: the certificate update bundles must be signed with (build-image.sh).
if [ -n "${PRINTBOX_BUNDLE_CERT:-}" ]; then
  install -D -m 0644 "$PRINTBOX_BUNDLE_CERT" "$root/etc/rauc/keyring.pem"
fi

# The boot partition's mount point (the Pi's FAT partition; the VM's small second disk).
mkdir -p "$root/boot/firmware"

# The agent and its Node.js
rm -rf "$root/opt/printbox"
mkdir -p "$root/opt"
cp -a --no-preserve=ownership "$PRINTBOX_AGENT_DIR" "$root/opt/printbox"
ln -sf /opt/printbox/node/bin/node "$root/usr/local/bin/node"

# The agent's user and group (sysusers.d/printbox.conf), now, so udev and units find them.
inroot systemd-sysusers

# Node's compile caches (NODE_COMPILE_CACHE in the units), made now so that the first boot starts
# from them too (without them the first boot compiled every module and wrote the cache).
# Node keeps a cache per V8 flag set and user id: made by the user and with the flags of each
# unit's ExecStart (the agent: printbox and its heap flags; provisioning: root, none). The entry is
# checked against the file's content at load time, so a changed bundle is simply compiled again.
# The units run the one bundled file (dist/src/printbox-agent.js, scripts/bundle.mjs), whose
# commands' code runs only when used: `load-only <command>` evaluates the command's modules
# without running it, so their code is compiled now and cached when Node exits.
agent_flags=$(sed -n 's|^ExecStart=/opt/printbox/node/bin/node \(.*\) /opt/printbox/dist/src/printbox-agent\.js .*|\1|p' \
  "$root/usr/lib/systemd/system/printbox-agent.service")
[ -n "$agent_flags" ] || { echo "no Node flags found in printbox-agent.service's ExecStart" >&2; exit 1; }
# The heap cap is ${PRINTBOX_HEAP_MB}, set per board at boot (/usr/lib/systemd/system-generators/
# printbox-agent-memory): the unit's default here. V8 leaves heap sizes out of the flags its
# caches are checked against (Node 24: a cache made with 96 MiB was accepted with 64 and 256).
heap_mb=$(sed -n 's/^Environment=PRINTBOX_HEAP_MB=\([0-9]*\)$/\1/p' "$root/usr/lib/systemd/system/printbox-agent.service")
[ -n "$heap_mb" ] || { echo "no Environment=PRINTBOX_HEAP_MB= in printbox-agent.service" >&2; exit 1; }
agent_flags=${agent_flags//'${PRINTBOX_HEAP_MB}'/$heap_mb}
install -d -m 0700 "$root/var/cache/printbox" "$root/var/cache/printbox-provision"
inroot chown printbox:printbox /var/cache/printbox
# shellcheck disable=SC2086 # the unit's flags, one word each
inroot setpriv --reuid=printbox --regid=printbox --clear-groups env NODE_COMPILE_CACHE=/var/cache/printbox/node-compile-cache \
  /opt/printbox/node/bin/node $agent_flags /opt/printbox/dist/src/printbox-agent.js load-only serve
inroot env NODE_COMPILE_CACHE=/var/cache/printbox-provision/node-compile-cache \
  /opt/printbox/node/bin/node /opt/printbox/dist/src/printbox-agent.js load-only provision
for d in printbox printbox-provision; do
  [ -n "$(ls -A "$root/var/cache/$d/node-compile-cache" 2>/dev/null)" ] || { echo "no compile cache made in /var/cache/$d" >&2; exit 1; }
done

inroot systemctl enable printbox-agent.service printbox-redirect.socket printbox-cert.service \
  printbox-cert-renew.timer printbox-hostname.service printbox-ssh.service \
  printbox-provision.service printbox-banner.service \
  systemd-networkd.service systemd-resolved.service systemd-timesyncd.service
# SSH: off unless the boot partition says otherwise (printbox-ssh.service); host keys are made on
# the box, never shipped.
inroot systemctl disable ssh.service >/dev/null 2>&1 || true
rm -f "$root"/etc/ssh/ssh_host_*
# Nothing downloaded or scrubbed behind the agent's back: no apt timers, no e2scrub.
for t in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer; do
  inroot systemctl disable "$t" >/dev/null 2>&1 || true
done
# Boot to the agent: no graphical target, no network wait.
inroot systemctl set-default multi-user.target >/dev/null
inroot systemctl disable systemd-networkd-wait-online.service >/dev/null 2>&1 || true
# No early units for what the box does not have: each is a process start beside the boot's path,
# on the same CPU (about 4 s together on the test VM's one vCPU, docs/performance.md). DRM: no
# display (the Pi runs headless; the amd64 image leaves drivers/gpu out). EFI pstore: a Pi has no EFI variables to keep
# a crash log in. FUSE: nothing here mounts a FUSE file system (RAUC mounts its bundles through
# loop and dm-verity, whose units stay).
inroot systemctl mask modprobe@drm.service modprobe@efi_pstore.service modprobe@fuse.service \
  sys-fs-fuse-connections.mount >/dev/null

# A/B updates: the running slot is marked good once the agent serves; the agent's request to
# reboot into an update it installed is carried out.
if [ -e "$root/etc/rauc/system.conf" ]; then
  inroot systemctl enable printbox-mark-good.service printbox-update-reboot.path
fi
# The Pi's data partition grows to the end of the card at the first boot (the layer's unit).
if [ -e "$root/usr/lib/systemd/system/printbox-grow-data.service" ]; then
  inroot systemctl enable printbox-grow-data.service
fi

if [ "$PRINTBOX_TARGET" = arm64 ] && [ -x "$root/etc/kernel/postinst.d/z50-raspi-firmware" ]; then
  # raspi-firmware writes config.txt and cmdline.txt from /etc/default/raspi-* (overlay): again,
  # now that the overlay is in. The hook does nothing unless dpkg's parameters say "configure".
  kver=$(ls "$root/lib/modules" | sort -V | tail -n1)
  inroot env DEB_MAINT_PARAMS=configure /etc/kernel/postinst.d/z50-raspi-firmware "$kver"
  grep -q '^kernel=u-boot.bin$' "$root/boot/firmware/config.txt" \
    || { echo "config.txt does not start U-Boot: $(cat "$root/boot/firmware/config.txt")" >&2; exit 1; }
fi
