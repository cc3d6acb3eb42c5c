#!/usr/bin/env bash
# USB printers: plug-to-listed latency and the agent's CPU with printers attached, in
# the amd64 test VM (QEMU TCG: every figure is slower than on a Pi's real CPU; compare runs, not
# hardware). Uses the built image (scripts/build-image.sh amd64) and the boot test's gadgets
# (test/vm/usb-printers.mjs on dummy_hcd). Needs root, QEMU; nothing leaves the VM.
#   scripts/bench/usb-plug.sh [PLUGS]     (default 20)
# 1. PLUGS plug events, alternating two printers over three buses: from the bind to the printer
#    listed by GET /devices/discovered (seen since the plug, not unplugged), polled every 20 ms
#    from inside the VM (one clock). Median and max.
# 2. Three printers attached (one answering PJL), the agent idle for 60 s: its CPU time over that
#    minute from /proc/<pid>/stat, against the same minute with none attached.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
plugs=${1:-20}
export PATH="$("$repo/scripts/box-node.sh")/bin:$PATH"
TVM_TEST_FILES="$repo/test/vm/usb-printers.mjs"
# shellcheck source=../image/test-vm.sh
. "$repo/scripts/image/test-vm.sh"
tmp=$(mktemp -d /tmp/printbox-usb-bench.XXXXXX)
trap 'tvm_poweroff_hard; rm -rf "$tmp"' EXIT
printf '[admin]\nuser = "tech"\npassword = "bench-pass-0451"\n' > "$tmp/printbox.toml"
tvm_prepare "$tmp" "$tmp/printbox.toml"
tvm_boot bench
tvm_wait_https 300 >/dev/null || { echo "VM did not serve" >&2; exit 1; }
tvm_wait_console
usb() { VM_TIMEOUT=60 tvm_sh "cd /opt/printbox-test && /opt/printbox/node/bin/node usb-printers.mjs $*"; }
usb setup
usb add a "'{\"pnp\":\"MFG:Brother;CMD:PJL,PCL;MDL:HL-L2350DW series;SN:BENCH-A;\",\"serial\":\"A\",\"pagecount\":100}'"
usb add b "'{\"pnp\":\"MFG:Acme;CMD:PCL;MDL:Silent 1;SN:BENCH-B;\",\"serial\":\"B\"}'"
usb add c "'{\"pnp\":\"MFG:Acme;CMD:PCL;MDL:Silent 2;SN:BENCH-C;\",\"serial\":\"C\"}'"
sleep 5   # the agent notices the new buses (it polls for the first one each second)

times=()
for i in $(seq 1 "$plugs"); do
  name=$([ $((i % 2)) = 1 ] && echo a || echo b)
  serial=$([ "$name" = a ] && echo BENCH-A || echo BENCH-B)
  ms=$(usb time-plug "$name" "dummy_udc.$((i % 3))" "$serial" | tr -d '\r\n')
  times+=("$ms")
  sleep 2   # the meter read that follows the listing
  usb unplug "$name" >/dev/null
  sleep 1
done
echo "plug to listed (ms, $plugs plugs): ${times[*]}"
printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "median %d ms, max %d ms\n", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[NR] }'

cpu_minute() {
  VM_TIMEOUT=90 tvm_sh 'p=$(systemctl show -p MainPID --value printbox-agent.service); t() { awk "{ print \$14 + \$15 }" /proc/$p/stat; }; a=$(t); sleep 60; b=$(t); echo $(( (b - a) * 1000 / $(getconf CLK_TCK) ))' | tr -d '\r\n'
}
echo "agent CPU over 60 s idle, no USB printer: $(cpu_minute) ms"
usb plug a dummy_udc.0 >/dev/null
usb plug b dummy_udc.1 >/dev/null
usb plug c dummy_udc.2 >/dev/null
sleep 15
echo "agent CPU over 60 s idle, 3 USB printers attached: $(cpu_minute) ms"
