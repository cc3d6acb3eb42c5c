#!/usr/bin/env bash
# VM power-cut soak: the real amd64 appliance image under QEMU (the boot test's VM:
# scripts/image/test-vm.sh), written to through the API from the host (a LAN client signed in with
# the account printbox.toml provisioned, over the HTTPS forward on 127.0.0.1), and powered off
# hard (SIGKILL to QEMU) in the middle of the writes, N times. After each cut the box is booted
# again and must, unattended: serve HTTPS, have its database pass PRAGMA integrity_check, run the
# agent, and serve the last acknowledged settings write or a later one (settings-writer.ts).
#   scripts/soak/power-cut.sh [--cycles 20] [--build]
# --build builds the image first (scripts/build-image.sh amd64); by default an image already in
# build/amd64 is reused (the boot test leaves one there). Needs root (debugfs on the image copy)
# and qemu-system-x86_64; the VM's network is QEMU user mode with restrict=on.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cycles=20
build=0
while [ $# -gt 0 ]; do
  case $1 in
    --cycles) cycles=$2; shift 2 ;;
    --build) build=1; shift ;;
    *) echo "usage: $0 [--cycles N] [--build]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "power-cut soak: needs root (the image copy is edited with debugfs)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "power-cut soak: qemu-system-x86_64 missing" >&2; exit 2; }
PATH="$("$repo/scripts/box-node.sh")/bin:$PATH"
export PATH
if [ "$build" = 1 ] || [ ! -s "$repo/build/amd64/disk.img" ]; then "$repo/scripts/build-image.sh" amd64; fi
[ -f "$repo/dist/scripts/soak/settings-writer.js" ] || (cd "$repo" && npm run build --silent)
# shellcheck source=../image/test-vm.sh
. "$repo/scripts/image/test-vm.sh"

t_start=$(date +%s)
tmp=$(mktemp -d /tmp/printbox-power-cut.XXXXXX)
writer_pid=""
cleanup() {
  [ -z "$writer_pid" ] || kill "$writer_pid" 2>/dev/null || true
  tvm_poweroff_hard
  if [ "${PRINTBOX_SOAK_KEEP:-}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

user=tech
password='soak-pass-0451'
printf '[admin]\nuser = "%s"\npassword = "%s"\n' "$user" "$password" > "$tmp/printbox.toml"
tvm_prepare "$tmp" "$tmp/printbox.toml"
base="https://127.0.0.1:$TVM_HTTPS_PORT"
writer() { node "$repo/dist/scripts/soak/settings-writer.js" "$base" "$user" "$password" "$@"; }
integrity_js="const D = require('better-sqlite3'); const db = new D('/var/lib/printbox/printbox.db', { readonly: true }); console.log(db.pragma('integrity_check', { simple: true }))"

echo "power-cut soak: $cycles cuts; host $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1); image $(cut -c1-12 "$TVM_OUT/content.sha256" 2>/dev/null) built $(date -u -r "$TVM_OUT/rootfs.img" +%FT%TZ)"
last_acked=-1     # the last settings write acknowledged before a cut
next=0            # the next write's number: above every number sent before
acked_total=0
lost=0
integrity_errors=0
not_back=0
agent_down=0
boot_times=()
for cycle in $(seq 0 "$cycles"); do
  tvm_boot "boot$cycle"
  if ! t=$(tvm_wait_https 300); then
    echo "boot $cycle: HTTPS did not come back (no progress for 300 s, or 900 s in all)"; tail -n 30 "$tmp/serial-boot$cycle.log" | tr -d '\r' | sed 's/^/    /'
    not_back=$((not_back + 1)); tvm_poweroff_hard; continue
  fi
  boot_times+=("$t")
  line="boot $cycle: HTTPS after ${t}s"
  if [ "$cycle" -gt 0 ]; then
    tvm_wait_console || { echo "boot $cycle: test console did not answer"; exit 1; }
    integrity=$(VM_TIMEOUT=120 tvm_sh "cd /opt/printbox && ./node/bin/node -e \"$integrity_js\"" | tr -d '\r\n') || true
    [ "$integrity" = ok ] || { integrity_errors=$((integrity_errors + 1)); echo "boot $cycle: integrity_check: $integrity"; }
    tvm_sh systemctl is-active --quiet printbox-agent.service || { agent_down=$((agent_down + 1)); echo "boot $cycle: printbox-agent not active"; }
    served=$(writer read 2>&1) || true
    if ! [[ "$served" =~ ^-?[0-9]+$ ]] || [ "$served" -lt "$last_acked" ]; then
      lost=$((lost + 1)); echo "boot $cycle: serves write ${served}, write $last_acked was acknowledged before the cut"
    fi
    line="$line; integrity_check $integrity; serves write $served (last acknowledged $last_acked)"
  fi
  echo "$line"
  [ "$cycle" -lt "$cycles" ] || break

  # Writes, then the cut 1-6 s after the first acknowledgement.
  # Started directly (not through the function) so that $! is node's pid and the kill below ends it.
  node "$repo/dist/scripts/soak/settings-writer.js" "$base" "$user" "$password" write "$next" > "$tmp/acked-$cycle.txt" 2> "$tmp/writer-$cycle.err" &
  writer_pid=$!
  for _ in $(seq 1 120); do [ -s "$tmp/acked-$cycle.txt" ] && break; sleep 0.5; done
  [ -s "$tmp/acked-$cycle.txt" ] || { echo "cut $((cycle + 1)): no write acknowledged in 60 s:"; tail -n 5 "$tmp/writer-$cycle.err"; }
  sleep $(( 1 + RANDOM % 6 ))
  tvm_poweroff_hard
  kill "$writer_pid" 2>/dev/null || true; wait "$writer_pid" 2>/dev/null || true; writer_pid=""
  n=$(wc -l < "$tmp/acked-$cycle.txt")
  if [ "$n" -gt 0 ]; then last_acked=$(tail -n1 "$tmp/acked-$cycle.txt"); fi
  acked_total=$((acked_total + n))
  next=$(( (last_acked > next ? last_acked : next) + 1000 ))
  echo "cut $((cycle + 1)): QEMU killed during writes; $n writes acknowledged in this boot (last $last_acked)"
done

sorted=$(printf '%s\n' "${boot_times[@]}" | sort -n)
echo "power cuts:                  $cycles"
echo "HTTPS back unattended:       $(( cycles + 1 - not_back ))/$(( cycles + 1 )) boots; power-on to HTTPS min $(head -n1 <<<"$sorted")s, median $(sed -n "$(( (${#boot_times[@]} + 1) / 2 ))p" <<<"$sorted")s, max $(tail -n1 <<<"$sorted")s"
echo "acknowledged writes:         $acked_total"
echo "lost (acknowledged, gone):   $lost"
echo "integrity errors:            $integrity_errors"
echo "agent not active after boot: $agent_down"
echo "time:                        $(( $(date +%s) - t_start )) s"
[ "$lost" -eq 0 ] && [ "$integrity_errors" -eq 0 ] && [ "$not_back" -eq 0 ] && [ "$agent_down" -eq 0 ]
