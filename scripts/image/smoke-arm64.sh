#!/usr/bin/env bash
# Smoke boot of the Raspberry Pi card under QEMU (no Pi needed), through U-Boot and the card's own
# slot choice: a copy of build/arm64/printbox-rpi.img (512 MiB larger, as a card is) boots on
# qemu-system-aarch64 -M virt with Debian's qemu_arm64 U-Boot (u-boot-qemu from the archive the card
# was built from, the same U-Boot release as the card's u-boot-rpi: build/arm64/qemu-u-boot.bin),
# which runs the card's boot.scr from its boot partition as the Pi's U-Boot does (the Pi's firmware
# cannot run here: docs/image.md). Before the boots, what QEMU cannot show about each real board is
# checked on the card's files (test/vm/rpi-card.test.ts: device trees, firmware, config.txt
# sections, the modules each board's SD card, Ethernet, USB and Wi-Fi need).
# User-mode networking restrict=on, HTTPS forwarded to 127.0.0.1 only. Three boots:
#   1. slot A grows the data partition to the end of the card, restarts once, serves HTTPS; RAUC
#      in the box marks it good (its fw_setenv writes rauc.env, which U-Boot read and counted down).
#   2. slot B written as RAUC writes an update (this build's root filesystem, the next version)
#      and made the primary with 3 tries, as RAUC's U-Boot backend does: U-Boot boots B, which
#      serves the new version and is marked good.
#   3. slot B damaged: U-Boot spends its 3 tries, goes back to slot A, which serves again.
# Run by scripts/test.sh (npm test) after the amd64 boot test.   Usage: scripts/image/smoke-arm64.sh [timeout-s]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/build/arm64
limit=${1:-600}
for f in printbox-rpi.img rootfs.img qemu-u-boot.bin; do
  [ -s "$out/$f" ] || { echo "missing build/arm64/$f: run scripts/build-image.sh arm64" >&2; exit 1; }
done
need=()
command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
command -v mtype >/dev/null || need+=(mtools)
command -v fw_setenv >/dev/null || need+=(libubootenv-tool)
command -v debugfs >/dev/null || need+=(e2fsprogs)
uboot=$out/qemu-u-boot.bin
echo "U-Boot for the virt machine: u-boot-qemu $(cat "$out/qemu-u-boot.version" 2>/dev/null || echo '?') (qemu_arm64, from the card's build)"
if [ ${#need[@]} -gt 0 ]; then
  "$repo/scripts/apt-install.sh" "${need[@]}" >/dev/null
fi

failures=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; failures=$(( failures + 1 )); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

# The card as built: the boot partition starts 4 MiB into it (image/rpi/genimage.cfg).
boot() { MTOOLS_SKIP_CHECK=1 mtype -i "$out/printbox-rpi.img@@4M" "::$1"; }
for f in start4.elf fixup4.dat start.elf bootcode.bin bcm2711-rpi-4-b.dtb bcm2837-rpi-3-b.dtb config.txt cmdline.txt \
  u-boot.bin boot.scr rauc.env; do
  boot "$f" >/dev/null 2>&1 || fail "boot partition lacks $f"
done
cmdline=$(boot cmdline.txt | tr -d '\r\n')
echo "cmdline.txt: $cmdline"
config=$(boot config.txt | tr -d '\r')
check "config.txt: 64-bit, starts U-Boot" grep -qx 'arm_64bit=1' <<<"$config"
check "... and U-Boot, not the kernel" grep -qx 'kernel=u-boot.bin' <<<"$config"
check "cmdline.txt names slot A by PARTUUID (U-Boot's root= comes after it)" grep -q 'root=PARTUUID=7062626f-02 ' <<<"$cmdline"
[ "$failures" = 0 ] || exit 1

# Each supported board's needs, on the card's files (the boards QEMU cannot boot).
card_test=$repo/dist/test/vm/rpi-card.test.js
[ -s "$card_test" ] || { echo "missing $card_test: run npm run build" >&2; exit 1; }
command -v node >/dev/null || PATH="$("$repo/scripts/box-node.sh")/bin:$PATH"
if PRINTBOX_CARD_REQUIRED=1 node --test --test-reporter=spec "$card_test"; then pass "the card's files per board (test/vm/rpi-card.test.ts)"
else fail "the card's files per board (test/vm/rpi-card.test.ts)"; fi

tmp=$(mktemp -d /tmp/printbox-smoke-arm64.XXXXXX)
qemu_pid=""
trap '[ -n "$qemu_pid" ] && kill -9 "$qemu_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
card=$tmp/card.img
cp --sparse=always "$out/printbox-rpi.img" "$card"
truncate -s +512M "$card"

# rauc.env, the slot variables U-Boot and RAUC share, read and written from here as fw_setenv in the box does.
echo "$tmp/rauc.env 0x0000 0x4000" >"$tmp/fw_env.config"
env_get() { MTOOLS_SKIP_CHECK=1 mcopy -o -i "$card@@4M" ::rauc.env "$tmp/rauc.env" && fw_printenv -c "$tmp/fw_env.config" -n "$1"; }
env_set() { # NAME=VALUE...
  MTOOLS_SKIP_CHECK=1 mcopy -o -i "$card@@4M" ::rauc.env "$tmp/rauc.env"
  local kv; for kv in "$@"; do fw_setenv -c "$tmp/fw_env.config" "${kv%%=*}" "${kv#*=}"; done
  MTOOLS_SKIP_CHECK=1 mcopy -o -i "$card@@4M" "$tmp/rauc.env" ::rauc.env
}
# Partition N's start and size in bytes, from the MBR.
part() { python3 -c 'import struct,sys; e=open(sys.argv[1],"rb").read(512)[446+16*(int(sys.argv[2])-1):][:16]; s,n=struct.unpack("<II",e[8:16]); print(s*512, n*512)' "$card" "$1"; }
# The virt machine's serial console (the Pi's comes from its cmdline.txt through the firmware).
env_set EXTRA_CMDLINE=console=ttyAMA0

# A free port (another VM on this machine may be forwarding one).
while port=$(( 20000 + RANDOM % 20000 )); (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do :; done
t0=0
run() { # NAME: power on
  t0=$(date +%s)
  qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu cortex-a72 -smp 2 -m 1024 \
    -display none -no-user-config -nodefaults -bios "$uboot" \
    -drive "file=$card,format=raw,if=virtio,cache=unsafe" \
    -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:8443" \
    -device "virtio-net-pci,netdev=n0,mac=52:54:00:5e:a6:41,romfile=" \
    -serial "file:$tmp/serial-$1.log" -device virtio-rng-pci &
  qemu_pid=$!
}
# NAME: prints the version served. Follows the boot's progress, as the amd64 boot test does
# (test-vm.sh, tvm_wait_https): fails once the serial console has been silent for $limit s, or
# after 3 x $limit s in all, so a machine slowed by other load waits longer, a hung boot does not.
wait_https() {
  local moved size last_size=""
  moved=$(date +%s)
  while :; do
    if curl -sk --max-time 3 "https://127.0.0.1:$port/api/version" >"$tmp/version.json" 2>/dev/null && [ -s "$tmp/version.json" ]; then
      sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$tmp/version.json"; return 0
    fi
    kill -0 "$qemu_pid" 2>/dev/null || { echo "QEMU exited" >&2; return 1; }
    size=$(stat -c %s "$tmp/serial-$1.log" 2>/dev/null || echo 0)
    [ "$size" = "$last_size" ] || { last_size=$size; moved=$(date +%s); }
    if [ $(( $(date +%s) - moved )) -ge "$limit" ] || [ $(( $(date +%s) - t0 )) -ge $(( 3 * limit )) ]; then
      echo "no HTTPS after $(( $(date +%s) - t0 ))s; the serial console silent for $(( $(date +%s) - moved ))s" >&2
      return 1
    fi
    sleep 2
  done
}
show_serial() { tr -d '\r' <"$tmp/serial-$1.log" | grep -av '^$' | tail -40 | sed 's/^/       /'; }
wait_env() { # NAME VALUE: RAUC in the box set the variable (mark-good), within 3 minutes
  local _; for _ in $(seq 1 90); do [ "$(env_get "$1" 2>/dev/null)" = "$2" ] && return 0; sleep 2; done; return 1
}
off() { kill -9 "$qemu_pid" 2>/dev/null || true; wait "$qemu_pid" 2>/dev/null || true; qemu_pid=""; }
slots_booted() { grep -ao 'PrintBox: booting slot [AB]' "$tmp/serial-$1.log" | sed 's/.* //' | tr -d '\n'; }

# 1. Slot A
run first
if v_cur=$(wait_https first); then pass "slot A: HTTPS after $(( $(date +%s) - t0 ))s, version $v_cur"
else fail "slot A: no HTTPS (the serial console silent for ${limit}s, or ${limit}s x 3 in all)"; show_serial first; exit 1; fi
# The first boot grows the data partition, restarts once (printbox-grow-data), then serves.
check "U-Boot chose slot A, twice: the first boot restarted once to use the grown partition (booted: $(slots_booted first))" \
  test "$(slots_booted first)" = AA
check "slot A marked good by RAUC in the box: BOOT_A_LEFT back to 3 (U-Boot had taken two)" wait_env BOOT_A_LEFT 3
read -r data_start data_size <<<"$(part 4)"
check "the data partition grew to the end of the card ($(( data_size / 1048576 )) MiB)" \
  test "$(( data_start + data_size ))" -gt "$(( $(stat -c %s "$card") - 1048576 ))"
off
# QEMU was killed, as a power cut would: e2fsck replays the journal, as the next mount would.
e2fsck -E journal_only -y "$card?offset=$data_start" >/dev/null 2>&1 || true
fs_clean() { e2fsck -fn "$card?offset=$data_start" >/dev/null 2>&1; }
check "the data filesystem is clean after the power cut" fs_clean
fs=$(dumpe2fs -h "$card?offset=$data_start" 2>/dev/null | sed -n 's/^Block \(count\|size\): *//p' | xargs)
read -r fs_blocks fs_block_size <<<"$fs"
check "its filesystem grew with it ($(( ${fs_blocks:-0} * ${fs_block_size:-0} / 1048576 )) MiB)" \
  test "$(( ${fs_blocks:-0} * ${fs_block_size:-0} ))" = "$data_size"

# 2. Slot B, as an update leaves it: the next version written to partition 3, primary, 3 tries.
IFS=. read -r va vb vc <<<"${v_cur%%[-+]*}"
v_next=$va.$vb.$(( vc + 1 ))
cp --sparse=always "$out/rootfs.img" "$tmp/rootfs-next.img"
debugfs -R "cat /opt/printbox/package.json" "$tmp/rootfs-next.img" 2>/dev/null \
  | sed "s/^  \"version\": \".*\",\$/  \"version\": \"$v_next\",/" >"$tmp/package.json"
printf 'rm /opt/printbox/package.json\nwrite %s /opt/printbox/package.json\n' "$tmp/package.json" \
  | debugfs -w -f - "$tmp/rootfs-next.img" >/dev/null 2>&1
read -r b_start b_size <<<"$(part 3)"
check "slot B's partition holds the root filesystem" test "$(stat -c %s "$tmp/rootfs-next.img")" -le "$b_size"
dd if="$tmp/rootfs-next.img" of="$card" bs=4M seek="$b_start" oflag=seek_bytes conv=notrunc,sparse status=none
rm -f "$tmp/rootfs-next.img"
env_set "BOOT_ORDER=B A" BOOT_B_LEFT=3
run update
if v=$(wait_https update); then pass "slot B: HTTPS after $(( $(date +%s) - t0 ))s"
else fail "slot B: no HTTPS"; show_serial update; exit 1; fi
check "U-Boot chose slot B (booted: $(slots_booted update))" test "$(slots_booted update)" = B
check "slot B serves version $v_next ($v)" test "$v" = "$v_next"
check "the kernel was given slot B's root" grep -aq 'root=PARTUUID=7062626f-03 rauc.slot=B' "$tmp/serial-update.log"
check "slot B marked good by RAUC in the box: BOOT_B_LEFT back to 3" wait_env BOOT_B_LEFT 3
off

# 3. Slot B damaged (its filesystem's first 4 MiB zeroed): 3 tries, then slot A again.
dd if=/dev/zero of="$card" bs=4M count=1 seek="$b_start" oflag=seek_bytes conv=notrunc status=none
run fallback
if v=$(wait_https fallback); then pass "slot B damaged: HTTPS again after $(( $(date +%s) - t0 ))s"
else fail "slot B damaged: no HTTPS"; show_serial fallback; exit 1; fi
check "U-Boot tried B three times, then A (booted: $(slots_booted fallback))" test "$(slots_booted fallback)" = BBBA
check "slot A serves version $v_cur again ($v)" test "$v" = "$v_cur"
check "slot B has no try left (BOOT_B_LEFT=$(env_get BOOT_B_LEFT))" test "$(env_get BOOT_B_LEFT)" = 0
off

if [ "$failures" -gt 0 ]; then echo "arm64 smoke boot: $failures check(s) failed"; exit 1; fi
echo "arm64 smoke boot: all checks passed"
