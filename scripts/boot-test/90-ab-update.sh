# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
stage "A/B update with RAUC, through the agent's API"
explain_units=rauc.service

# From here on the technician's browser session drives it: the update source, check, force.
# Sessions live in the agent's memory: the technician signs in again after each reboot.
signin || true
status_json() { authed "https://127.0.0.1:$https_port/api/autoupdate/status" || true; }
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" | head -n1; }
offer() { # FILE: the manifest the update server gives now
  printf '{"version":"%s","url":"%s","size":%s}\n' "$1" "$2" "$(stat -c %s "$upd/$2")" >"$upd/manifest.json"
}
force() { authed -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d '{"reason":"boot test"}' "https://127.0.0.1:$https_port/api/autoupdate/force" || true; }
wait_idle_error() { # the forced update ended in an error: prints it
  local s
  for _ in $(seq 1 300); do
    s=$(status_json)
    if [ "$(field state <<<"$s")" = idle ] && [ -n "$(field last_error <<<"$s")" ] && [ "$(field last_error <<<"$s")" != null ]; then
      field last_error <<<"$s"; return 0
    fi
    sleep 1
  done
  return 1
}
slot_b_empty() { vm "cmp -s -n 1048576 /dev/disk/by-partlabel/rootB /dev/zero"; }
version_is() { [ "$(api "https://127.0.0.1:$https_port/api/version" | field version)" = "$1" ]; }
# Boots GRUB has started since power-on, from the serial console.
boots_so_far() { grep -ac 'Booting .PrintBox slot' "$serial_now" 2>/dev/null || true; }
# The update the test just forced failed before any reboot: its status (STATUS_JSON) names an
# error newer than ERROR_AT_BEFORE.
new_update_error() { # ERROR_AT_BEFORE STATUS_JSON
  local at
  at=$(field last_error_at <<<"$2")
  [ -n "$at" ] && [ "$at" != null ] && [ "$at" != "$1" ] || return 1
  echo "       the update failed before the reboot: $(field last_error <<<"$2")"
}
wait_down_up() { # forces the offered update; the box reboots (a new boot on its serial console), then serves again (tvm_wait_https $1)
  local before t0=$(date +%s) error_before
  before=$(boots_so_far) error_before=$(status_json | field last_error_at)
  force >/dev/null
  while [ "$(boots_so_far)" -le "$before" ]; do
    [ $(( $(date +%s) - t0 )) -lt 900 ] || return 1
    ! new_update_error "$error_before" "$(status_json)" || return 1
    sleep 2
  done
  TVM_T0=$(date +%s.%N)
  wait_https "$1" >/dev/null && wait_console
}

code=$(authed -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  -d '{"update":{"url":"http://10.0.2.100/manifest.json"}}' "https://127.0.0.1:$https_port/settings") || true
check "update.url set through POST /settings ($code)" test "$code" = 200
s=$(status_json)
check "status: supported, slot A, version $v_cur" \
  grep -q "\"supported\":true,\"current_version\":\"$v_cur\",\"current_slot\":\"A\"" <<<"$s"
echo "       $s" | cut -c1-300
wait "$bundles_pid" && bundles_ok=1 || bundles_ok=0
bundles_pid=""
check "update bundles $v_next and $v_bad made from the same tree" test "$bundles_ok" = 1 || { sed 's/^/       /' "$tmp/bundles.log"; exit 1; }
sed 's/^/       /' "$tmp/bundles.log"

# Refused before anything is written: a bundle signed by another key, one with its signature changed.
offer "$v_next" other-key.raucb
code=$(force)
err=$(wait_idle_error) || true
check "a bundle signed by another key: force $code, refused by RAUC (${err:0:120})" grep -q 'RAUC refused the bundle' <<<"$err"
offer "$v_next" altered.raucb
force >/dev/null
err=$(wait_idle_error) || true
check "a bundle with a changed signature: refused by RAUC (${err:0:120})" grep -q 'RAUC refused the bundle' <<<"$err"
check "nothing was written to slot B" slot_b_empty
check "the refused bundles are not kept on the data partition" vm "! ls /var/lib/printbox/update/*.raucb* 2>/dev/null | grep -q ."

# check, then force; the power is cut while RAUC writes slot B and the agent writes its database
# (a settings writer in the VM, as fast as the agent answers): the box comes back on slot A, its
# database intact. One cold boot for both cuts (each costs a boot under TCG). The writer is started
# first (Node starts slowly under TCG) and begins writing once RAUC installs: through the download
# it would only share the VM's one vCPU with it (the download took 136 s with it, in CI).
vm "cd /tmp && NODE_TLS_REJECT_UNAUTHORIZED=0 nohup /opt/printbox/node/bin/node -e '
const fs = require(\"fs\");
let i = 0;
(async () => {
  console.log(\"waiting for /tmp/writer-go\");
  while (!fs.existsSync(\"/tmp/writer-go\")) await new Promise((r) => setTimeout(r, 200));
  for (;;) { i++;
    const r = await fetch(\"https://127.0.0.1:8443/settings\", { method: \"POST\", headers: { \"content-type\": \"application/json\" },
      body: JSON.stringify({ discovery: { snmp_timeout_ms: 1000 + (i % 5000) } }) }).catch((e) => ({ status: String(e) }));
    if (i % 20 === 0) console.log(i, r.status);
  }
})();' >/tmp/writer.log 2>&1 &" >/dev/null
writes=""
for _ in $(seq 1 120); do
  writes=$(vm tail -n1 /tmp/writer.log | tr -d '\r\n') || true
  [ -n "$writes" ] && break
  sleep 2
done
check "the settings writer started in the VM ($writes)" grep -q '^waiting' <<<"$writes"
# The sign-in limiter's warning (the journal stage) reaches the card within the log's flush delay;
# the cut must not be what loses it, so wait for it there.
check "the limiter's warning is on the card before the cut" \
  vm "timeout 120 sh -c 'until grep -qs \"repeated failed sign-in attempts\" /var/lib/printbox/log/*; do sleep 1; done'"
offer "$v_next" "printbox-$v_next.raucb"
s=$(authed -X POST "https://127.0.0.1:$https_port/api/autoupdate/check") || true
check "check: $v_next available" test "$(field available_version <<<"$s")" = "$v_next"
error_before=$(status_json | field last_error_at)
t_force=$(date +%s)
force >/dev/null
# Progress: the download ends (state installing), the writer is let go, and the power is cut once
# RAUC is 20 % through and the agent has answered the writer. A new error ends the wait at once.
t_install="" writes=""
for _ in $(seq 1 900); do
  s=$(status_json)
  ! new_update_error "$error_before" "$s" || break
  if [ "$(field state <<<"$s")" = installing ]; then
    [ -n "$t_install" ] || { t_install=$(( $(date +%s) - t_force )); vm touch /tmp/writer-go >/dev/null || true; }
    writes=$(vm tail -n1 /tmp/writer.log | tr -d '\r\n') || true
    [ "$(sed -n 's/.*"percent":\([0-9]*\).*/\1/p' <<<"$s")" -ge 20 ] 2>/dev/null && grep -q ' 200$' <<<"$writes" && break
  fi
  sleep 0.5
done
t_dl=$(( $(date +%s) - t_force ))
check "force: downloaded in ${t_install:-?}s, installing (${t_dl}s after the request)" test "$(field state <<<"$s")" = installing
echo "       writer: $writes (requests, last status)"
check "database writes were going on" grep -q ' 200$' <<<"$writes"
poweroff_hard
pass "QEMU killed while RAUC wrote slot B and the agent its database"
boot installcut
if t_icut=$(wait_https 300); then pass "after the power cut during the install: HTTPS in ${t_icut}s"; else fail "after the power cut during the install: HTTPS"; show_serial installcut; exit 1; fi
wait_console || { fail "test console after the power cut during the install"; exit 1; }
boot_figures "boot after the power cut, HTTPS ${t_icut}s after power-on"
integrity=$(vm "cd /opt/printbox && ./node/bin/node -e \"const D = require('better-sqlite3'); const db = new D('/var/lib/printbox/printbox.db', { readonly: true }); console.log(db.pragma('integrity_check', { simple: true }))\"" | tr -d '\r\n') || true
check "after the power cut: PRAGMA integrity_check: $integrity" test "$integrity" = ok
check "after the power cut: printbox-agent active" vm systemctl is-active --quiet printbox-agent.service
cert_sum3=$(vm sha256sum /var/lib/printbox/tls/agent.crt | cut -c1-64) || true
check "after the power cut: certificate unchanged" test "$cert_sum1" = "$cert_sum3"
key_stat=$(vm stat -c "'%a %U %G'" /var/lib/printbox/tls/agent.key | tr -d '\r\n') || true
check "after the power cut: key still 0600 printbox: $key_stat" test "$key_stat" = "600 printbox printbox"
# The broken printbox.toml written in the provisioning stage, met by this boot's provisioning.
error=$(vm cat /boot/firmware/printbox-toml.error | tr -d '\r') || true
echo "       printbox-toml.error: $error"
check "broken printbox.toml: not applied, reason beside it" grep -q 'polling.interval_minutes must be an integer' <<<"$error"
prov_state=$(vm systemctl show -p Result,ExecMainStatus printbox-provision.service | tr -d '\r' | sort | tr '\n' ' ') || true
check "broken printbox.toml: provisioning unit did not fail the boot ($prov_state)" grep -q 'ExecMainStatus=0 Result=success' <<<"$prov_state"
check "broken printbox.toml: the state record says refused, with the reason" \
  vm "grep -q '\"message\": \"refused: polling.interval_minutes must be an integer' /var/lib/printbox/provision-state.json"
check "broken printbox.toml: the provisioned account still signs in" signin_retrying
logs=$(authed "https://127.0.0.1:$https_port/logs?level=warn&tail=2000") || true
check "/logs after the power cut: the limiter's warning from before it (previous_run)" \
  grep -q '"msg":"repeated failed sign-in attempts: rate limited"[^}]*"previous_run":true\|"previous_run":true[^}]*"msg":"repeated failed sign-in attempts: rate limited"' <<<"$logs"
slot=$(slot_of) || true
check "after the power cut during the install: slot A again ($slot), version $v_cur" version_is "$v_cur"
for _ in $(seq 1 30); do s=$(status_json); [ "$(field current_slot <<<"$s")" = A ] && break; sleep 1; done
check "status tells the interrupted update (${s:0:0}$(field last_error <<<"$s" | cut -c1-100))" grep -q "the update to $v_next did not come up in slot B" <<<"$s"

# What the database holds before the update (GET /backup): every device and every raw reading must
# still be there, unchanged, on slot B. (The agent goes on reading the USB printer, so slot B may
# hold more; the roll-ups' aggregate rows may be updated, so they are not compared.)
backup_records() { authed --max-time 60 "https://127.0.0.1:$https_port/backup" | grep -E '^\{"kind":"(device"|metrics","tier":"raw")' \
  | sed 's/^\({"kind":"device","serial":"[^"]*"\).*/\1/' | LC_ALL=C sort; }
backup_records >"$tmp/records-before" || true
records_before=$(wc -l <"$tmp/records-before")

# The whole update: force, then the box reboots into slot B by itself and serves the new version.
t_force=$(date +%s)
if wait_down_up 600; then
  t_update=$(( $(date +%s) - t_force )); pass "force -> slot B serving: ${t_update}s"
else fail "force -> reboot -> serving"; show_serial installcut; exit 1; fi
boot_figures "the update's reboot into slot B, HTTPS ${t_update}s after force"
slot=$(slot_of) || true
check "booted from slot B ($slot)" test "$slot" = B
check "slot B serves version $v_next" version_is "$v_next"
VM_TIMEOUT=100 vm "timeout 90 sh -c 'until systemctl is-active --quiet printbox-mark-good.service; do sleep 1; done'" >/dev/null || true
check "slot B marked good (grubenv B_TRY=0), trial file gone" \
  vm "grub-editenv /boot/efi/EFI/BOOT/grubenv list | grep -qx B_TRY=0 && test ! -e /var/lib/printbox/.update-trial"
cert_sum4=$(vm sha256sum /var/lib/printbox/tls/agent.crt | cut -c1-64) || true
check "slot B serves the same certificate and key" test "$cert_sum1" = "$cert_sum4"
check "slot B: the provisioned account signs in (database kept)" signin_retrying
backup_records >"$tmp/records-after" || true
lost=$(LC_ALL=C comm -23 "$tmp/records-before" "$tmp/records-after" | wc -l)
check "slot B keeps every device and reading from before the update ($records_before records before, $(wc -l <"$tmp/records-after") after, $lost lost)" \
  test "$records_before" -gt 1 -a "$lost" = 0
usb_saved=$(authed "https://127.0.0.1:$https_port/devices/list" | grep -o '"serial":"PBTEST0001"' | head -n1) || true
check "slot B: the saved USB printer is still listed" test -n "$usb_saved"
s=$(status_json)
check "status: $v_next on slot B, last update from $v_cur" grep -q "\"last_update\":{\"version\":\"$v_next\",\"from_version\":\"$v_cur\",\"slot\":\"B\"" <<<"$s"
echo "       $s" | cut -c1-400

# The release before, properly signed (older.raucb, with the stand-in image), asked of RAUC by the
# agent's user directly (not through the agent, which refuses an older offer itself): RAUC's
# pre-install handler refuses it before anything is written to slot A.
as_agent="setpriv --reuid=printbox --regid=printbox --clear-groups"
slot_a_head() { vm "head -c 4194304 /dev/disk/by-partlabel/rootA | sha256sum" | cut -c1-64; }
a_before=$(slot_a_head) || true
VM_TIMEOUT=200 vm "cd /var/lib/printbox/update && $as_agent /opt/printbox/node/bin/node -e \"const fs = require('fs'), { Readable } = require('stream'), { pipeline } = require('stream/promises'); fetch(process.argv[1]).then((r) => pipeline(Readable.fromWeb(r.body), fs.createWriteStream('older.raucb')))\" http://10.0.2.100/older.raucb" >/dev/null || true
refused=$(VM_TIMEOUT=200 vm "$as_agent rauc install /var/lib/printbox/update/older.raucb 2>&1; echo exit=\$?; journalctl -b -u rauc --no-pager -n 20 -o cat" | tr -d '\r') || true
vm "rm -f /var/lib/printbox/update/older.raucb" >/dev/null || true
check "an older signed bundle asked of RAUC directly: the install fails ($(grep -o '^exit=[0-9]*' <<<"$refused"))" \
  grep -q '^exit=[1-9]' <<<"$refused"
check "... refused by the pre-install handler, which names both versions" \
  grep -q "version $v_cur is older than the running $v_next" <<<"$refused"
grep -q "older than the running" <<<"$refused" || tail -n 8 <<<"$refused" | sed 's/^/       /'
check "slot A not written by the refused install" test "$(slot_a_head)" = "$a_before"

# An update whose agent never becomes ready: installed into A, booted once, and the box goes back to B.
offer "$v_bad" "printbox-$v_bad.raucb"
t_force=$(date +%s)
if wait_down_up 900; then
  t_back=$(( $(date +%s) - t_force )); pass "an update that never serves: back on a serving box ${t_back}s after force"
else fail "rollback: HTTPS"; show_serial installcut; exit 1; fi
check "signed in on slot B after the rollback" signin_retrying
slot=$(slot_of) || true
check "after the failed update: booted from slot B ($slot), version $v_next" version_is "$v_next"
# (read once slot B's mark-good has written GRUB's environment: read while it is being replaced,
# the block can be found incomplete)
VM_TIMEOUT=100 vm "timeout 90 sh -c 'until systemctl is-active --quiet printbox-mark-good.service; do sleep 1; done'" >/dev/null || true
check "slot A left on trial, so not booted again (grubenv A_TRY=1)" vm "grub-editenv /boot/efi/EFI/BOOT/grubenv list | grep -qx A_TRY=1"
for _ in $(seq 1 30); do s=$(status_json); [ "$(field current_slot <<<"$s")" = B ] && break; sleep 1; done
check "status tells the failed update ($(field last_error <<<"$s" | cut -c1-100))" grep -q "the update to $v_bad did not come up in slot A" <<<"$s"
echo "       A/B: bundle $(( $(stat -c %s "$upd/printbox-$v_next.raucb") / 1048576 )) MiB; force to serving $v_next ${t_update}s; power-on after the cut ${t_icut}s; force of a bad update to serving again ${t_back}s"
stage_end "A/B update with RAUC, through the agent's API"

vm "systemctl poweroff" >/dev/null 2>&1 || true
sleep 2; poweroff_hard
