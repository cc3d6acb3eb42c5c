#!/usr/bin/env bash
# Smoke boot of the Raspberry Pi card under QEMU (no Pi needed): boots build/arm64/printbox-rpi.img
# (a copy) on qemu-system-aarch64 -M virt with the card's own kernel, initramfs and cmdline.txt
# (only the serial console of the virt machine is added), user-mode networking restrict=on with
# HTTPS forwarded to 127.0.0.1 only; checks the boot partition (firmware, device trees, config.txt,
# root by label), waits for GET /api/version and prints the time from power-on.
# Run by scripts/test.sh (npm test) after the amd64 boot test.   Usage: scripts/image/smoke-arm64.sh [timeout-s]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/build/arm64
limit=${1:-900}
for f in printbox-rpi.img vmlinuz initrd.img; do
  [ -s "$out/$f" ] || { echo "missing build/arm64/$f: run scripts/build-image.sh arm64" >&2; exit 1; }
done
need=()
command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
command -v mtype >/dev/null || need+=(mtools)
if [ ${#need[@]} -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The boot partition starts 4 MiB into the card (image/rpi/genimage.cfg).
boot() { MTOOLS_SKIP_CHECK=1 mtype -i "$out/printbox-rpi.img@@4M" "::$1"; }
failed=0
for f in start4.elf fixup4.dat start.elf bootcode.bin bcm2711-rpi-4-b.dtb bcm2837-rpi-3-b.dtb config.txt cmdline.txt; do
  boot "$f" >/dev/null 2>&1 || { echo "boot partition lacks $f"; failed=1; }
done
cmdline=$(boot cmdline.txt | tr -d '\r\n')
echo "cmdline.txt: $cmdline"
grep -q 'root=LABEL=printbox-root ' <<<"$cmdline" || { echo "cmdline.txt does not name the root by label"; failed=1; }
boot config.txt | grep -q '^arm_64bit=1' || { echo "config.txt lacks arm_64bit=1"; failed=1; }
[ "$failed" = 0 ] || exit 1
tmp=$(mktemp -d /tmp/printbox-smoke-arm64.XXXXXX)
qemu_pid=""
trap '[ -n "$qemu_pid" ] && kill -9 "$qemu_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cp --sparse=always "$out/printbox-rpi.img" "$tmp/card.img"
port=$(( 20000 + RANDOM % 20000 ))
t0=$(date +%s)
qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu cortex-a72 -smp 2 -m 1024 \
  -display none -no-user-config -nodefaults \
  -kernel "$out/vmlinuz" -initrd "$out/initrd.img" \
  -append "$(sed 's/console=[^ ]*//g' <<<"$cmdline") console=ttyAMA0" \
  -drive "file=$tmp/card.img,format=raw,if=virtio,cache=unsafe" \
  -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:8443" \
  -device "virtio-net-pci,netdev=n0,mac=52:54:00:5e:a6:41" \
  -serial "file:$tmp/serial.log" -device virtio-rng-pci &
qemu_pid=$!
while :; do
  if curl -sk --max-time 3 "https://127.0.0.1:$port/api/version" >"$tmp/version.json" 2>/dev/null && [ -s "$tmp/version.json" ]; then
    echo "arm64 smoke boot: HTTPS after $(( $(date +%s) - t0 ))s: $(cat "$tmp/version.json")"
    exit 0
  fi
  kill -0 "$qemu_pid" 2>/dev/null || { echo "QEMU exited"; tail -40 "$tmp/serial.log"; exit 1; }
  if [ $(( $(date +%s) - t0 )) -ge "$limit" ]; then
    echo "arm64 smoke boot: no HTTPS within ${limit}s"; tr -d '\r' < "$tmp/serial.log" | tail -40; exit 1
  fi
  sleep 2
done
