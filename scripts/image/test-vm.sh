# shellcheck shell=bash
# The amd64 appliance image as a test VM, for scripts that boot it more than once (sourced, not run):
# a private copy of the disk (build/amd64/disk.img assembled again from its parts, with the
# test-only root console in slot A, which the shipped image has none of), a FAT "boot partition"
# carrying printbox.toml, and QEMU (TCG, UEFI firmware OVMF, user-mode networking with
# restrict=on: nothing leaves the VM; HTTPS and HTTP forwarded on 127.0.0.1 only). The same VM as
# scripts/boot-test.sh's, which uses it.
#
#   tvm_prepare DIR TOML            disk copy (TVM_GROW_MB larger than the image, as a card is)
#                                   with the console unit, a boot disk carrying the
#                                   printbox.toml file TOML; picks the forwarded ports
#                                   (TVM_HTTPS_PORT, TVM_HTTP_PORT); the files named in
#                                   TVM_TEST_FILES (if any) go to /opt/printbox-test/ in the copy;
#                                   each UNIT.conf in the folder TVM_DROPINS (if any) becomes a
#                                   drop-in of UNIT.service in the copy
#   tvm_boot NAME                   power on (serial log DIR/serial-NAME.log); sets TVM_PID (the
#                                   power, running until the guest powers off: each guest reboot is
#                                   a new QEMU), TVM_T0 (TVM_BOOT_DISK_LATE=1: without the boot
#                                   disk, and with a PCIe port it can be plugged into later)
#   tvm_attach_boot_disk            plugs the boot disk into the running VM (QEMU's monitor)
#   tvm_poweroff_hard               SIGKILL to QEMU: the guest's power is cut
#   tvm_https_ok                    GET /api/version over HTTPS answers 200
#   tvm_wait_https LIMIT_S          prints seconds from power-on to the first 200; fails once the
#                                   guest has shown no progress for LIMIT_S (below)
#   tvm_wait_console                the root console answers (60 s at most)
#   tvm_sh COMMAND...               runs COMMAND in the VM as root, prints its output, its status
#   tvm_install_tools               installs what is missing of the tools below (apt, as root)
# Needs: TVM_OUT (the build output, default <repo>/build/amd64), qemu-system-x86_64, OVMF,
# debugfs, genimage, grub-editenv, mkfs.vfat, mcopy, curl, openssl, node (for the console client).

tvm_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The Debian packages of the tools above, those missing installed; fails if apt cannot install them.
tvm_install_tools() {
  local need=()
  command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
  command -v curl >/dev/null || need+=(curl)
  command -v debugfs >/dev/null || need+=(e2fsprogs)
  command -v openssl >/dev/null || need+=(openssl)
  command -v mkfs.vfat >/dev/null || need+=(dosfstools)
  command -v mcopy >/dev/null || need+=(mtools)
  command -v genimage >/dev/null || need+=(genimage)
  command -v grub-editenv >/dev/null || need+=(grub-common)
  [ -e /usr/share/OVMF/OVMF_CODE_4M.fd ] || need+=(ovmf)
  [ ${#need[@]} -eq 0 ] && return 0
  "$tvm_repo/scripts/apt-install.sh" "${need[@]}" >/dev/null
}
TVM_OUT=${TVM_OUT:-$tvm_repo/build/amd64}
TVM_MAC=${TVM_MAC:-52:54:00:5e:b0:c7}
TVM_PID=""
# How much larger than the image the test disk is (MiB).
TVM_GROW_MB=${TVM_GROW_MB:-512}
# More QEMU arguments for every boot, and more options of the user-mode network (a guestfwd to
# a server on the host's loopback: the VM reaches nothing else).
TVM_QEMU_EXTRA=()
TVM_NETDEV_EXTRA=

tvm_port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
tvm_pick_port() { local p; while :; do p=$(( 20000 + RANDOM % 20000 )); tvm_port_free "$p" && { echo "$p"; return; }; done; }

# The test's additions to a root filesystem image (the test console unit, TVM_TEST_FILES, TVM_DROPINS): in the
# copy slot A boots from, and in the update bundles the A/B stage installs.
tvm_test_rootfs() {
  local img=$1 unit f
  debugfs -w -f - "$img" >/dev/null 2>&1 <<CMDS
cd /etc/systemd/system
write $TVM_DIR/printbox-testconsole.service printbox-testconsole.service
cd /usr/local/lib
write $TVM_DIR/printbox-testconsole.sh printbox-testconsole.sh
CMDS
  if [ -n "${TVM_TEST_FILES:-}" ]; then
    { echo "mkdir /opt/printbox-test"; echo "cd /opt/printbox-test"
      for f in $TVM_TEST_FILES; do echo "write $f $(basename "$f")"; done; } | debugfs -w -f - "$img" >/dev/null 2>&1
  fi
  if [ -n "${TVM_DROPINS:-}" ]; then
    for f in "$TVM_DROPINS"/*.conf; do
      unit=$(basename "$f" .conf)
      printf 'cd /etc/systemd/system\nmkdir %s.service.d\ncd %s.service.d\nwrite %s zz-test.conf\n' "$unit" "$unit" "$f" \
        | debugfs -w -f - "$img" >/dev/null 2>&1
    done
  fi
}

tvm_prepare() {
  TVM_DIR=$1
  local toml=$2
  TVM_DISK=$TVM_DIR/disk.img
  TVM_BOOT_DISK=$TVM_DIR/boot.img
  TVM_SOCK=$TVM_DIR/console.sock
  local parts=$TVM_DIR/parts
  # Again in the same DIR: a fresh copy (a first boot again).
  rm -f "$TVM_DISK" "$TVM_BOOT_DISK"
  rm -rf "$parts" && mkdir -p "$parts/input" "$parts/tmp" "$parts/empty"
  cp --sparse=always "$TVM_OUT/rootfs.img" "$parts/input/rootfs.img"
  cp "$TVM_OUT/parts/esp.vfat" "$TVM_OUT/parts/data.ext4" "$parts/input/"
  cat > "$TVM_DIR/printbox-testconsole.service" <<'UNIT'
[Unit]
Description=Test console (test copy of the image only)
DefaultDependencies=no
After=systemd-udevd.service
[Service]
ExecStart=/bin/bash /usr/local/lib/printbox-testconsole.sh
Restart=always
# A reboot does not wait 90 s (the default) for what the test started from here, such as the
# USB stage's gadget-side processes.
TimeoutStopSec=5s
UNIT
  # One line per command (vmsh.mjs): "PBXCMD NONCE BASE64". Each runs in a shell of its own, so
  # a line cut short (sent before the port was open, or while the guest was starved) is refused
  # on its own and cannot leave a shell waiting for the rest of it, as one long-lived shell
  # reading the port did.
  cat > "$TVM_DIR/printbox-testconsole.sh" <<'CONSOLE'
stty -F /dev/ttyS1 raw -echo 115200
exec </dev/ttyS1 >/dev/ttyS1 2>&1
while IFS=' ' read -r tag nonce b64; do
  [ "$tag" = PBXCMD ] || continue
  cmd=$(printf '%s' "$b64" | base64 -d 2>/dev/null) || continue
  echo "__BEGIN_${nonce}__"
  bash -c "$cmd" </dev/null 2>&1
  echo "__END_${nonce}_$?__"
done
CONSOLE
  tvm_test_rootfs "$parts/input/rootfs.img"
  # The console unit is started from the kernel command line, which GRUB extends with this
  # variable of its environment block (image/amd64/grub.cfg): only this copy sets it.
  mcopy -n -i "$parts/input/esp.vfat" ::EFI/BOOT/grubenv "$parts/grubenv"
  grub-editenv "$parts/grubenv" set EXTRA_CMDLINE="quiet systemd.getty_auto=0 systemd.wants=printbox-testconsole.service"
  mcopy -o -i "$parts/input/esp.vfat" "$parts/grubenv" ::EFI/BOOT/grubenv
  genimage --config "$TVM_OUT/parts/genimage.cfg" --rootpath "$parts/empty" --inputpath "$parts/input" \
    --outputpath "$TVM_DIR" --tmppath "$parts/tmp" >"$parts/genimage.log" 2>&1 || { cat "$parts/genimage.log" >&2; return 1; }
  rm -rf "$parts"
  # A card is larger than the image written to it: the first boot grows the data partition.
  truncate -s "+${TVM_GROW_MB}M" "$TVM_DISK"
  cp /usr/share/OVMF/OVMF_VARS_4M.fd "$TVM_DIR/ovmf-vars.fd"
  mkfs.vfat -n PBOXBOOT -C "$TVM_BOOT_DISK" 16384 >/dev/null
  mcopy -i "$TVM_BOOT_DISK" "$toml" ::printbox.toml
  TVM_HTTPS_PORT=$(tvm_pick_port)
  TVM_HTTP_PORT=$(tvm_pick_port)
  [ "$TVM_HTTP_PORT" != "$TVM_HTTPS_PORT" ] || TVM_HTTP_PORT=$(( TVM_HTTPS_PORT + 1 ))
}

# One vCPU. With two, OVMF has hung under load about once in twenty boots, at a warm reset and
# once after GRUB started the kernel: the boot processor busy in the firmware, waiting for the
# other vCPU, which sat halted in the firmware's sleep loop although the boot processor's local
# APIC had just broadcast it a start-up IPI (ICR 0x000c4687; docs/image.md, "The VM (amd64)").
# That is edk2's wait for an application processor without a timeout (edk2 PR #13164) meeting a
# start-up IPI that QEMU's vCPU thread, not scheduled in time on a loaded host, did not take.
# With one vCPU the firmware has no application processor to wait for. (TVM_SMP=2 for a second.)
TVM_SMP=${TVM_SMP:-1}

# Every reset is a power cycle. One hang with one vCPU came after a warm reset (QEMU's reset keeps
# the guest's RAM and leaves the firmware to start over on it; the hardware watchdog systemd armed
# for the reboot also survives it), and QEMU's own resets did not cure it. So QEMU runs with
# -no-reboot: a reset by the guest (the kernel's reboot, a triple fault, the watchdog) ends the
# process, and tvm_power starts QEMU again on the same disks and firmware variables, as a Raspberry
# Pi's reboot restarts the whole SoC. TVM_PID is tvm_power's: it ends when the guest powers off or
# tvm_poweroff_hard cuts the power.
tvm_boot() {
  TVM_T0=$(date +%s.%N)
  rm -f "$TVM_DIR/power-cut" "$TVM_DIR/boot-disk-plugged"
  TVM_SERIAL=$TVM_DIR/serial-$1.log
  : >"$TVM_SERIAL"
  tvm_power &
  TVM_PID=$!
}

tvm_power() {
  local log=$TVM_SERIAL qemu watch status
  while [ ! -e "$TVM_DIR/power-cut" ]; do
    tvm_qemu "$log" &
    qemu=$!
    echo "$qemu" >"$TVM_DIR/qemu.pid"
    tvm_reset_watch "$log" "$qemu" &
    watch=$!
    status=0; wait "$qemu" 2>/dev/null || status=$?  # (not "Killed" on stderr at each power cut)
    kill "$watch" 2>/dev/null || true
    # The power cut, power-down by the guest, or QEMU failing on its own (not the reset watch's
    # SIGKILL): the end. Anything else was a reset.
    [ ! -e "$TVM_DIR/power-cut" ] || break
    tail -c 300 "$log" | tr -d '\r' | grep -q 'reboot: Power down' && break
    [ "$status" = 0 ] || [ -e "$TVM_DIR/qemu-killed" ] || { echo "QEMU exited with status $status" >&2; break; }
    rm -f "$TVM_DIR/qemu-killed"
  done
}

tvm_qemu() {
  local log=$1
  local boot_disk=(-drive "file=$TVM_BOOT_DISK,format=raw,if=virtio,cache=unsafe")
  # A card that shows up late: an empty hot-plug port, the disk through tvm_attach_boot_disk (and
  # there from the start of any power cycle after that, as a card would be).
  [ "${TVM_BOOT_DISK_LATE:-}" != 1 ] || [ -e "$TVM_DIR/boot-disk-plugged" ] \
    || boot_disk=(-device pcie-root-port,id=cardport,bus=pcie.0,chassis=1)
  rm -f "$TVM_SOCK"
  exec qemu-system-x86_64 -accel tcg,thread=multi -machine q35 -cpu max -smp "$TVM_SMP" -m 1024 \
    -display none -no-user-config -nodefaults -no-reboot \
    -drive "if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd" \
    -drive "if=pflash,format=raw,file=$TVM_DIR/ovmf-vars.fd" \
    -drive "file=$TVM_DISK,format=raw,if=virtio,cache=unsafe,discard=unmap" \
    "${boot_disk[@]}" \
    -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$TVM_HTTPS_PORT-:8443,hostfwd=tcp:127.0.0.1:$TVM_HTTP_PORT-:8080$TVM_NETDEV_EXTRA" \
    -device "virtio-net-pci,netdev=n0,mac=$TVM_MAC" \
    -chardev "file,id=con,path=$log,append=on" -serial chardev:con \
    -chardev "socket,id=tc,path=$TVM_SOCK,server=on,wait=off" -serial chardev:tc \
    -monitor "unix:$TVM_DIR/monitor.sock,server=on,wait=off" \
    -device virtio-rng-pci "${TVM_QEMU_EXTRA[@]}"
}

# Should the firmware still go silent after a reset (not a byte on the serial console 90 s after
# the kernel's "reboot: Restarting system"; a good start names the boot entry within seconds), the
# harness writes where the vCPUs were to DIR/repeated-resets.log, which the boot test prints, and
# cuts the power: tvm_power starts QEMU again. A hang anywhere else (GRUB, the kernel, the box's
# units) is left alone: the log then ends in other words.
TVM_RESET_HANG_S=${TVM_RESET_HANG_S:-90}
tvm_reset_watch() {
  local log=$1 qemu=$2 size last=-1 since=$SECONDS
  while kill -0 "$qemu" 2>/dev/null; do
    sleep 5
    size=$(stat -c %s "$log" 2>/dev/null || echo 0)
    if [ "$size" != "$last" ]; then last=$size; since=$SECONDS; continue; fi
    [ $(( SECONDS - since )) -ge "$TVM_RESET_HANG_S" ] || continue
    tail -c 200 "$log" | tr -d '\r' | sed '/^$/d' | tail -n 1 | grep -q 'reboot: Restarting system$' || continue
    echo "$(date -u +%FT%TZ) $(basename "$log"): nothing from the firmware ${TVM_RESET_HANG_S}s after a reset; power cycled" >>"$TVM_DIR/repeated-resets.log"
    { tvm_monitor "info cpus" "info registers -a"; sleep 1; tvm_monitor "info registers -a"; } 2>/dev/null | tr -d '\r' \
      | grep -E '^[* ] CPU #|^CPU#|^[ER]IP=' | sed 's/^/    /' >>"$TVM_DIR/repeated-resets.log" || true
    : >"$TVM_DIR/qemu-killed"
    kill -9 "$qemu" 2>/dev/null || true
    return 0
  done
}

# HMP commands on QEMU's monitor; prints the replies, fails when one names an error.
tvm_monitor() {
  python3 - "$TVM_DIR/monitor.sock" "$@" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(20)
def reply():
    buf = b''
    try:
        while not buf.rstrip().endswith(b'(qemu)'):
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
    except socket.timeout:
        pass
    return buf.decode(errors='replace')
reply()
bad = False
for cmd in sys.argv[2:]:
    s.sendall(cmd.encode() + b'\n')
    out = reply()
    print(out)
    bad = bad or 'rror' in out
sys.exit(1 if bad else 0)
PY
}

tvm_attach_boot_disk() {
  tvm_monitor "drive_add 0 if=none,id=pboxboot,file=$TVM_BOOT_DISK,format=raw,cache=unsafe" \
    "device_add virtio-blk-pci,drive=pboxboot,id=pboxbootdev,bus=cardport" && : >"$TVM_DIR/boot-disk-plugged"
}

# SIGKILL to QEMU, again until tvm_power has seen it (it may be starting the next QEMU just then).
tvm_poweroff_hard() {
  [ -n "$TVM_PID" ] || return 0
  : >"$TVM_DIR/power-cut"
  while kill -0 "$TVM_PID" 2>/dev/null; do
    kill -9 "$(cat "$TVM_DIR/qemu.pid" 2>/dev/null)" 2>/dev/null || true
    sleep 0.2
  done
  wait "$TVM_PID" 2>/dev/null || true
  TVM_PID=""
}

tvm_https_ok() { curl -sk --max-time 10 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$TVM_HTTPS_PORT/api/version" 2>/dev/null | grep -qx 200; }

# A loaded machine slows a boot without stopping it (a first boot beside two CPU hogs and the
# card's build took over 300 s to HTTPS), so the wait follows the guest's progress on its serial
# console: it gives up once the console has been silent for LIMIT_S seconds, or after 3 x LIMIT_S
# in all (a boot that loops). (Not the journal through the test console: a command sent before the
# console's shell is up arrives cut, and what is left of it can leave that shell waiting for a
# closing quote for good, as it did once.)
tvm_wait_https() {
  local limit=$1 start=$SECONDS moved=$SECONDS size last_size=""
  while :; do
    if tvm_https_ok; then awk -v a="$TVM_T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; return 0; fi
    kill -0 "$TVM_PID" 2>/dev/null || { echo "QEMU exited" >&2; return 1; }
    size=$(stat -c %s "$TVM_SERIAL" 2>/dev/null || echo 0)
    [ "$size" = "$last_size" ] || { last_size=$size; moved=$SECONDS; }
    if [ $(( SECONDS - moved )) -ge "$limit" ] || [ $(( SECONDS - start )) -ge $(( 3 * limit )) ]; then
      echo "no HTTPS after $(( SECONDS - start ))s; the serial console silent for $(( SECONDS - moved ))s" >&2
      return 1
    fi
    sleep 0.5
  done
}

tvm_sh() { node "$tvm_repo/scripts/image/vmsh.mjs" "$TVM_SOCK" "${VM_TIMEOUT:-60}" "$@"; }

tvm_wait_console() {
  local i
  for i in $(seq 1 60); do
    [ -S "$TVM_SOCK" ] && VM_TIMEOUT=3 tvm_sh true >/dev/null 2>&1 && return 0
    sleep 1
  done
  return 1
}
