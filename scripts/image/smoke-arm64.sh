#!/usr/bin/env bash
# Smoke boot of the Raspberry Pi card under QEMU (no Pi needed): boots build/arm64/printbox-rpi.img
# (a copy) on qemu-system-aarch64 -M virt with the card's own kernel and initramfs, root by label,
# user-mode networking restrict=on with HTTPS forwarded to 127.0.0.1 only; waits for
# GET /api/version and prints the time from power-on. Documented command, not part of npm test
# (the arm64 build takes about 12 minutes).   Usage: scripts/image/smoke-arm64.sh [timeout-s]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/build/arm64
limit=${1:-900}
for f in printbox-rpi.img vmlinuz initrd.img; do
  [ -s "$out/$f" ] || { echo "missing build/arm64/$f: run scripts/build-image.sh arm64" >&2; exit 1; }
done
command -v qemu-system-aarch64 >/dev/null || {
  apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends qemu-system-arm >/dev/null; }
tmp=$(mktemp -d /tmp/printbox-smoke-arm64.XXXXXX)
qemu_pid=""
trap '[ -n "$qemu_pid" ] && kill -9 "$qemu_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cp --sparse=always "$out/printbox-rpi.img" "$tmp/card.img"
port=$(( 20000 + RANDOM % 20000 ))
t0=$(date +%s)
qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu cortex-a72 -smp 2 -m 1024 \
  -display none -no-user-config -nodefaults \
  -kernel "$out/vmlinuz" -initrd "$out/initrd.img" \
  -append "root=LABEL=printbox-root rw console=ttyAMA0 quiet" \
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
