#!/usr/bin/env bash
# Power-on to HTTPS of a first boot, with or without systemd drop-ins added to the test
# VM's disk: a change of units (ordering, CPU weights) can be timed against the same image without
# rebuilding it. Uses the built image (scripts/build-image.sh amd64) and the boot test's VM (QEMU
# TCG, one vCPU: slower than a Pi's real CPU; compare runs, not hardware). Needs root (QEMU, OVMF
# and the image tools are installed if missing: tvm_install_tools); nothing leaves the VM.
#   scripts/bench/boot-dropins.sh [DIR] [RUNS]     (no drop-ins; 1 run)
# DIR holds UNIT.conf files: each goes to /etc/systemd/system/UNIT.service.d/ on the disk copy
# (systemd-networkd.conf for systemd-networkd.service). Each run is a fresh disk (a first boot
# with printbox.toml on its boot partition) and prints: power-on to the first HTTPS answer from
# outside, systemd-analyze's total, the agent's critical chain, the slowest units, the agent's
# start-up phases, and when provisioning and the host name unit ran (monotonic seconds).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dropins=${1:-}
runs=${2:-1}
export PATH="$("$repo/scripts/box-node.sh")/bin:$PATH"
# shellcheck source=../image/test-vm.sh
. "$repo/scripts/image/test-vm.sh"
tvm_install_tools
tmp=$(mktemp -d /tmp/printbox-boot-bench.XXXXXX)
trap 'tvm_poweroff_hard 2>/dev/null; rm -rf "$tmp"' EXIT
printf '[admin]\nuser = "tech"\npassword = "bench-pass-0451"\n' > "$tmp/printbox.toml"

# The drop-ins join the test's own additions to slot A's root filesystem (tvm_test_rootfs).
TVM_DROPINS=$dropins

figures='timeout 300 systemctl is-system-running --wait >/dev/null
ls /etc/systemd/system/*.service.d/zz-test.conf 2>/dev/null | sed "s/^/drop-in: /"
systemd-analyze | head -1
systemd-analyze critical-chain printbox-agent.service | sed -n "4,7p"
systemd-analyze blame | head -8
journalctl -b -u printbox-agent -o cat | grep -m1 "start-up phases"
for u in printbox-hostname printbox-provision; do
  echo "$u: $(systemctl show -p ExecMainStartTimestampMonotonic -p ExecMainExitTimestampMonotonic "$u" | sed "s/.*=//" | awk "{ printf \"%.1f \", \$1 / 1e6 }")s"
done'

for run in $(seq 1 "$runs"); do
  tvm_prepare "$tmp" "$tmp/printbox.toml"
  tvm_boot "bench-$run"
  if ! t=$(tvm_wait_https 300); then echo "run $run: no HTTPS" >&2; tail -20 "$TVM_SERIAL" >&2; exit 1; fi
  echo "== run $run${dropins:+ with $dropins}: power-on to HTTPS ${t} s"
  tvm_wait_console
  VM_TIMEOUT=330 tvm_sh "$figures"
  tvm_poweroff_hard
done
