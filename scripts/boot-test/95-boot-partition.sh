# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
stage "boot partition missing, then appearing while the agent serves"
# A fresh copy of the disk (a first boot again) whose boot disk is not attached at power-on.
late_password='late-pass-0452'
cat > "$tmp/late.toml" <<TOML
[admin]
user = "late"
password = "$late_password"

[polling]
interval_minutes = 25

[time]
servers = ["late.printbox.invalid"]

# The address QEMU's DHCP gives, made static: the forwards to the VM still reach it.
[network]
address = "10.0.2.15/24"
gateway = "10.0.2.2"
dns = ["10.0.2.3"]
TOML
tvm_prepare "$tmp" "$tmp/late.toml"
https_port=$TVM_HTTPS_PORT http_port=$TVM_HTTP_PORT
TVM_BOOT_DISK_LATE=1
boot nopart
if t_nopart=$(wait_https 400); then
  pass "no boot partition: power-on to HTTPS in ${t_nopart}s (the agent does not wait for the partition)"
else fail "no boot partition: HTTPS (stalled 400s, or 3 times that in all)"; show_serial nopart; exit 1; fi
wait_console || { fail "test console (no boot partition)"; show_serial nopart; exit 1; }
# Provisioning runs once the mount has given up on its device (x-systemd.device-timeout), which
# may be after HTTPS answers: progress is its run's end.
wait_provisioned
record=$(vm cat /var/lib/printbox/provision-state.json | tr -d '\r') || true
check "no boot partition: the state record says so" grep -q '"message": "no boot partition found"' <<<"$record"
wait_banner
serial=$(tr -d '\r' < "$serial_now")
check "no boot partition: console banner 'Provisioning: no boot partition found'" grep -qx "Provisioning: no boot partition found" <<<"$serial"
check "no boot partition: console banner shows the setup code" grep -q '^Setup code: [0-9A-Z]\{4\}-[0-9A-Z]\{4\}-[0-9A-Z]\{4\}$' <<<"$serial"
check "no boot partition: the setup code is in /run for the banner" vm "test -s /run/printbox-setup/code"

# The card shows up now, while the agent serves: mounted by its device, provisioning runs again.
agent_pid=$(vm systemctl show -p MainPID --value printbox-agent.service | tr -d '\r\n') || true
t_plug=$(date +%s.%N)
plugged=$(tvm_attach_boot_disk 2>&1) && pass "boot disk hot-plugged through QEMU's monitor" \
  || { fail "boot disk hot-plugged through QEMU's monitor"; sed 's/^/       /' <<<"$plugged"; }
# Progress: the state record, read in the VM until it says applied (bounded).
if VM_TIMEOUT=200 vm "timeout 180 sh -c 'until grep -q \"\\\"state\\\": \\\"applied\\\"\" /var/lib/printbox/provision-state.json; do sleep 0.5; done'" >/dev/null; then
  t_applied=$(awk -v a="$t_plug" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  pass "late boot partition: printbox.toml applied ${t_applied}s after the disk was plugged"
else fail "late boot partition: printbox.toml applied within 180s of the plug"; fi
check "late boot partition: boot-firmware.mount active" vm systemctl is-active --quiet boot-firmware.mount
record=$(vm cat /var/lib/printbox/provision-state.json | tr -d '\r') || true
check "late boot partition: the state record says applied at ..." grep -q '"message": "printbox.toml applied at 20' <<<"$record"
check "late boot partition: the setup code is gone" vm "test ! -e /run/printbox-setup/code -a ! -e /var/lib/printbox/setup-code"
agent_pid2=$(vm systemctl show -p MainPID --value printbox-agent.service | tr -d '\r\n') || true
check "late boot partition: the same agent process serves (MainPID $agent_pid -> $agent_pid2)" test -n "$agent_pid" -a "$agent_pid" = "$agent_pid2"
check "late boot partition: the running agent signs in the provisioned account" signin_retrying late "$late_password"
settings=$(authed "https://127.0.0.1:$https_port/settings") || true
check "late boot partition: the running agent uses the provisioned polling interval" grep -q '"interval_minutes":25' <<<"$settings"
check "late boot partition: GET /settings provisioning says applied" \
  grep -q '"provisioning":{"state":"applied","message":"printbox.toml applied at 20' <<<"$settings"
# The banner runs again after the late run (OnSuccess=): progress is the console's text.
banner_late=""
for _ in $(seq 1 120); do
  # (grep reads a process substitution: in a pipeline under pipefail, its early exit would fail tr.)
  if grep -q '^Provisioning: printbox.toml applied at 20' <(tr -d '\r' < "$serial_now"); then banner_late=yes; break; fi
  kill -0 "$TVM_PID" 2>/dev/null || break
  sleep 0.5
done
check "late boot partition: console banner 'Provisioning: printbox.toml applied at ...'" test -n "$banner_late"
check "late boot partition: no setup code on the console after it" \
  bash -c 'tr -d "\r" < "$1" | awk "/^Provisioning: printbox.toml applied at/ { seen = 1 } seen && /^Setup code:/ { bad = 1 } END { exit bad }"' _ "$serial_now"
# networkd and timesyncd were running: they take the late file's address and servers now
# (printbox-system-reload.service, after the run that applied it).
check "late boot partition: timesyncd uses its time servers" timesyncd_servers late.printbox.invalid
netfile=$(VM_TIMEOUT=160 vm "timeout 150 sh -c 'until networkctl status --all --no-pager | grep \"Network File:.*printbox\"; do sleep 1; done'" | tr -d '\r') || true
echo "       ${netfile# *}"
check "late boot partition: networkd configures the link from its static address" \
  grep -q '10-printbox-provisioned.network' <<<"$netfile"
check "late boot partition: the address (now static) still answers HTTPS" signin_retrying late "$late_password"
t_node=$(unit_time printbox-provision.service)
# The same file again: the ExecCondition check answers without Node.
vm "systemctl start printbox-provision.service" >/dev/null 2>&1 || true
record=$(vm cat /var/lib/printbox/provision-state.json | tr -d '\r') || true
check "same file again: the state record says unchanged since it was applied" grep -q '"message": "printbox.toml unchanged since 20' <<<"$record"
check "same file again: checked without starting Node" \
  vm "journalctl -b -u printbox-provision.service -o cat --no-pager | grep -q 'checked without starting Node'"
t_skip=$(unit_time printbox-provision.service)
echo "       provisioning unit: ${t_node} with Node (the late file applied), ${t_skip} when unchanged (no Node)"
stage_end "boot partition missing, then appearing while the agent serves"
vm "systemctl poweroff" >/dev/null 2>&1 || true
sleep 2; poweroff_hard
