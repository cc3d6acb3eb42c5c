#!/usr/bin/env bash
# Appliance boot test (run by `npm test`): builds the amd64 image and boots it in QEMU with
# software emulation (TCG), user-mode networking with restrict=on and host forwards on 127.0.0.1
# only, so nothing leaves the VM. Checks, from outside the VM:
#   units statically (systemd-analyze verify --root, security exposure < 3.0);
#   power-on -> GET /api/version over HTTPS (timed); 8080 redirects to 8443 (same host and path);
#   agent active and READY (Type=notify); host name printbox-<MAC>; certificate made on first boot
#   (key 0600, owner printbox) and unchanged after a reboot; SIGSTOP on the agent -> the watchdog
#   restarts it; QEMU killed during writes -> next boot: PRAGMA integrity_check ok and serving.
#   Provisioning: a second small FAT disk labelled PBOXBOOT (mounted at /boot/firmware, as the Pi's
#   boot partition) carries printbox.toml; from the host the test signs in with the provisioned
#   password, finds the plaintext gone, discovery on, the banner on the serial console; a broken
#   printbox.toml at the next boot leaves a booting box and printbox-toml.error.
#   USB printers: gadgets on the VM kernel's virtual buses, plugged, read, unplugged and moved
#   (scripts/image/usb-stage.sh).
# The VM is inspected through a root shell on a second serial port that exists only in this
# test's copy of the image (the shipped image has no such thing).
# Prints why and exits 0 only when this machine cannot run QEMU at all.
# Env: PRINTBOX_BOOT_TEST_NO_BUILD=1 uses the existing build/amd64 artifacts.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/build/amd64
t_start=$(date +%s)

skip() { echo "boot test skipped: $*"; exit 0; }
[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 host (this is $(uname -m))"
[ "$(uname -s)" = Linux ] || skip "needs Linux"
if [ "$(id -u)" -ne 0 ]; then
  command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing and not root to install it"
  skip "building the image needs root (mmdebstrap, chroot)"
fi

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v curl >/dev/null || need+=(curl)
command -v debugfs >/dev/null || need+=(e2fsprogs)
command -v openssl >/dev/null || need+=(openssl)
command -v mkfs.vfat >/dev/null || need+=(dosfstools)
command -v mcopy >/dev/null || need+=(mtools)
if [ ${#need[@]} -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || skip "could not install ${need[*]}"
fi
qemu-system-x86_64 -accel help 2>/dev/null | grep -qx tcg || skip "this QEMU has no TCG"

failures=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; failures=$((failures + 1)); }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
stage_start=0
stage() { stage_start=$(date +%s); echo "== boot test: $1"; }
stage_end() { echo "== boot test: $1 took $(( $(date +%s) - stage_start ))s"; }

# ---------------------------------------------------------------------------------------------
if [ "${PRINTBOX_BOOT_TEST_NO_BUILD:-}" != 1 ] || [ ! -s "$out/rootfs.img" ]; then
  stage "build image"
  "$repo/scripts/build-image.sh" amd64
  stage_end "build image"
fi
for f in rootfs.img vmlinuz initrd.img; do [ -s "$out/$f" ] || { echo "missing build/amd64/$f" >&2; exit 1; }; done

# ---------------------------------------------------------------------------------------------
stage "static unit checks"
units=(printbox-agent.service printbox-redirect.socket printbox-redirect.service printbox-cert.service
  printbox-cert-renew.service printbox-cert-renew.timer printbox-hostname.service printbox-ssh.service
  printbox-provision.service printbox-banner.service)
if [ -d "$out/rootfs/usr/lib/systemd/system" ]; then
  verify_out=$(cd "$out/rootfs" && SYSTEMD_LOG_COLOR=0 systemd-analyze verify --root="$out/rootfs" "${units[@]}" 2>&1) || true
  if [ -z "$verify_out" ]; then pass "systemd-analyze verify --root: no output"; else fail "systemd-analyze verify --root said:"; echo "$verify_out" | sed 's/^/       /'; fi
  for u in printbox-agent.service printbox-redirect.service printbox-cert.service; do
    exposure=$(systemd-analyze security --offline=true --root="$out/rootfs" "$u" 2>/dev/null \
      | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    check "$u exposure ${exposure:-?} < 3.0" awk -v e="${exposure:-99}" 'BEGIN { exit !(e < 3.0) }'
  done
  # Root one-shots: as low as their jobs allow (docs/image.md has each one's figure and why).
  for u in printbox-provision.service printbox-banner.service printbox-hostname.service printbox-ssh.service; do
    exposure=$(systemd-analyze security --offline=true --root="$out/rootfs" "$u" 2>/dev/null \
      | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    check "$u exposure ${exposure:-?} < 2.0" awk -v e="${exposure:-99}" 'BEGIN { exit !(e < 2.0) }'
  done
else
  fail "build/amd64/rootfs (the root directory) is missing: cannot verify units"
fi
stage_end "static unit checks"

# ---------------------------------------------------------------------------------------------
# shellcheck source=image/test-vm.sh
TVM_OUT=$out
. "$repo/scripts/image/test-vm.sh"
tmp=$(mktemp -d /tmp/printbox-boot-test.XXXXXX)
cleanup() {
  if [ -n "$TVM_PID" ] && kill -0 "$TVM_PID" 2>/dev/null; then kill -9 "$TVM_PID" 2>/dev/null || true; fi
  if [ "${PRINTBOX_BOOT_TEST_KEEP:-}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# The boot partition: a FAT disk labelled PBOXBOOT with the technician's printbox.toml.
provisioned_password='tech-pass-0451'
cat > "$tmp/printbox.toml" <<TOML
# printbox.toml, as a technician writes it before the first boot
[admin]
user = "tech"
password = "$provisioned_password"

[polling]
interval_minutes = 20

[time]
servers = ["ntp.printbox.invalid"]
TOML
# The test's copy of the disk with the test console (only here), and that boot partition.
TVM_TEST_FILES="$repo/test/vm/usb-printers.mjs"
tvm_prepare "$tmp" "$tmp/printbox.toml"
https_port=$TVM_HTTPS_PORT
http_port=$TVM_HTTP_PORT

expect_host=printbox-b0c7   # from the MAC address test-vm.sh gives the VM
boot() { tvm_boot "$1"; }
poweroff_hard() { tvm_poweroff_hard; }
version_ok() { tvm_https_ok; }
wait_https() { tvm_wait_https "$1"; }
vm() { tvm_sh "$@"; }
wait_console() { tvm_wait_console; }
show_serial() { echo "--- serial console ($1), last lines:"; tail -n 40 "$tmp/serial-$1.log" 2>/dev/null | tr -d '\r' | sed 's/^/    /'; }

# ---------------------------------------------------------------------------------------------
stage "first boot"
boot first
if ! t_first=$(wait_https 300); then
  fail "first boot: /api/version over HTTPS within 300s"; show_serial first; exit 1
fi
pass "first boot: power-on to GET /api/version over HTTPS in ${t_first}s"
wait_console || { fail "test console"; show_serial first; exit 1; }
stage_end "first boot"

stage "first boot checks"
check "printbox-agent active" vm systemctl is-active --quiet printbox-agent.service
state=$(vm systemctl show -p Type,NotifyAccess,ActiveState,SubState,WatchdogUSec,User,StatusText,NRestarts printbox-agent.service | tr -d '\r' | sort | tr '\n' ' ') || true
echo "       $state"
# A Type=notify service is active/running only after READY=1 (before it is activating/start).
check "agent READY (Type=notify and active/running)" \
  grep -q 'ActiveState=active .*SubState=running Type=notify' <<<"$state"
check "agent not restarted during boot (NRestarts=0)" grep -q 'NRestarts=0 ' <<<"$state"
# Why, when it was: the agent's own last words.
grep -q 'NRestarts=0 ' <<<"$state" || vm "journalctl -b -u printbox-agent.service --no-pager | tail -n 40" | sed 's/^/       /'
check "redirect socket active" vm systemctl is-active --quiet printbox-redirect.socket
failed_units=$(vm systemctl list-units --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ') || true
check "no failed units (${failed_units:-none})" test -z "$failed_units"
host=$(vm cat /proc/sys/kernel/hostname | tr -d '\r\n') || true
check "host name $host = $expect_host" test "$host" = "$expect_host"
key_stat=$(vm stat -c "'%a %U %G'" /var/lib/printbox/tls/agent.key | tr -d '\r\n') || true
check "key mode and owner: $key_stat" test "$key_stat" = "600 printbox printbox"
cert_sum1=$(vm sha256sum /var/lib/printbox/tls/agent.crt | cut -c1-64) || true
served=$(echo | openssl s_client -connect "127.0.0.1:$https_port" 2>/dev/null | openssl x509 -outform DER 2>/dev/null | sha256sum | cut -c1-64) || true
file_der=$(vm openssl x509 -in /var/lib/printbox/tls/agent.crt -outform DER \| sha256sum | cut -c1-64) || true
check "served certificate is the one made on first boot" test -n "$served" -a "$served" = "$file_der"
sans=$(vm openssl x509 -in /var/lib/printbox/tls/agent.crt -noout -ext subjectAltName | tr -d '\r\n') || true
echo "       SANs:$sans"
check "certificate names $expect_host.local and the box's address" grep -q "DNS:$expect_host.local.*IP Address:10.0.2.15" <<<"$sans"
# The first request starts the redirect service (socket activation): Node under TCG takes a while.
loc=$(curl -s --max-time 90 -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$http_port/some/path?x=1") || true
echo "       8080 answer: $loc"
check "8080 redirects to https://<same host>:8443<same path>" grep -Eq '^30[1278] https://127\.0\.0\.1:8443/some/path' <<<"$loc"
exposure=$(vm systemd-analyze security printbox-agent.service | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p') || true
check "in the VM: printbox-agent exposure ${exposure:-?} < 3.0" awk -v e="${exposure:-99}" 'BEGIN { exit !(e < 3.0) }'
echo "       $(vm systemd-analyze | head -n1 | tr -d '\r')"
vm "systemd-analyze critical-chain printbox-agent.service | tail -n +3 | head -n 8" | sed 's/^/       /'
stage_end "first boot checks"

stage "provisioning and access from the site network"
# Host requests arrive through QEMU's user network from 10.0.2.2: a peer on the LAN, not loopback.
api() { curl -sk --max-time 20 "$@"; }
code=$(api -o /dev/null -w '%{http_code}' -H 'Accept: application/json' "https://127.0.0.1:$https_port/devices/list") || true
check "from the LAN without a session: /devices/list answers 401 ($code)" test "$code" = 401
code=$(api -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 127.0.0.1' -H 'X-Service-Proxy: server' "https://127.0.0.1:$https_port/settings") || true
check "forged forwarding headers from the LAN: 401 ($code)" test "$code" = 401
code=$(api -o /dev/null -w '%{http_code}' --path-as-is "https://127.0.0.1:$https_port//settings") || true
check "//settings from the LAN: 400 ($code)" test "$code" = 400
login=$(api -D - -o /dev/null -H 'Content-Type: application/json' \
  -d "{\"username\":\"tech\",\"password\":\"$provisioned_password\"}" "https://127.0.0.1:$https_port/api/v1/auth/login" | tr -d '\r') || true
cookie=$(sed -n 's/^[Ss]et-[Cc]ookie: \(pm_agent_session=[^;]*\);.*/\1/p' <<<"$login")
check "sign-in with the provisioned password" test -n "$cookie"
settings=$(api -H "Cookie: $cookie" -H 'Accept: application/json' "https://127.0.0.1:$https_port/settings") || true
check "discovery on out of the box (subnet scan, automatic)" grep -q '"subnet_scan":true.*"auto_discover":true' <<<"$settings"
check "provisioned polling interval applied" grep -q '"interval_minutes":20' <<<"$settings"
left=$(vm "grep -c password /boot/firmware/printbox.toml" | tr -d '\r\n') || true
check "plaintext password line gone from printbox.toml (grep -c: $left)" test "$left" = 0
check "provisioned time servers handed to timesyncd" vm "grep -q 'NTP=ntp.printbox.invalid' /etc/systemd/timesyncd.conf.d/60-printbox-provisioned.conf"
check "no setup code once an account exists" vm "test ! -e /boot/firmware/printbox-setup.txt -a ! -e /run/printbox-setup/code"
fingerprint=$(openssl x509 -in <(vm cat /var/lib/printbox/tls/agent.crt | tr -d '\r') -noout -fingerprint -sha256 2>/dev/null | sed 's/.*=//') || true
# The banner runs after the certificate and the setup code: wait until it has run (or failed).
VM_TIMEOUT=100 vm "timeout 90 sh -c 'while systemctl show -p ActiveState --value printbox-banner.service | grep -qxE \"inactive|activating\"; do sleep 1; done'" >/dev/null || true
serial=$(tr -d '\r' < "$tmp/serial-first.log")
check "console banner: PrintBox $expect_host" grep -qx "PrintBox $expect_host" <<<"$serial"
check "console banner: URL https://$expect_host.local:8443/" grep -qx "URL: https://$expect_host.local:8443/" <<<"$serial"
check "console banner: URL https://10.0.2.15:8443/" grep -qx "URL: https://10.0.2.15:8443/" <<<"$serial"
check "console banner: certificate fingerprint" grep -qxF "Certificate SHA-256: ${fingerprint:-none}" <<<"$serial"
check "console banner: no setup code once an account exists" bash -c '! grep -q "^Setup code:" <<<"$1"' _ "$serial"
banner_state=$(vm systemctl show -p ActiveState,Result,ExecMainStatus printbox-banner.service | tr -d '\r' | sort | tr '\n' ' ') || true
check "printbox-banner.service succeeded ($banner_state)" grep -q 'ActiveState=active ExecMainStatus=0 Result=success' <<<"$banner_state"
check "/etc/issue.d/printbox.issue resolves to the banner file" \
  vm "test \"\$(readlink -e /etc/issue.d/printbox.issue)\" = /run/printbox-banner/printbox.issue && grep -q '^Certificate SHA-256: ' /etc/issue.d/printbox.issue"
check "DNS-SD: resolved loaded printbox.dnssd" \
  vm "busctl tree --list org.freedesktop.resolve1 | grep -qx /org/freedesktop/resolve1/dnssd/printbox"
dnssd=$(VM_TIMEOUT=40 vm timeout 30 resolvectl service "$expect_host" _https._tcp local | tr -d '\r') || true
sed 's/^/       /' <<<"$dnssd"
check "DNS-SD: $expect_host._https._tcp -> $expect_host.local:8443" grep -q "$expect_host.local:8443" <<<"$dnssd"
check "DNS-SD: TXT path=/" grep -qx ' *path=/' <<<"$dnssd"
# A broken file for the next boot: the box must boot anyway and say why.
vm "printf '[polling]\\ninterval_minutes = 0\\n' > /boot/firmware/printbox.toml && sync" >/dev/null || true
stage_end "provisioning and access from the site network"

stage "USB printers (gadgets on dummy_hcd in the VM's kernel)"
# shellcheck source=image/usb-stage.sh
. "$repo/scripts/image/usb-stage.sh"
stage_end "USB printers (gadgets on dummy_hcd in the VM's kernel)"

stage "watchdog (SIGSTOP on the agent)"
pid1=$(vm systemctl show -p MainPID --value printbox-agent.service | tr -d '\r\n') || true
vm kill -STOP "$pid1" >/dev/null
t_stop=$(date +%s)
restarted=""
while [ $(( $(date +%s) - t_stop )) -lt 300 ]; do
  sleep 2
  pid2=$(vm systemctl show -p MainPID --value printbox-agent.service | tr -d '\r\n') || true
  if [ -n "$pid2" ] && [ "$pid2" != 0 ] && [ "$pid2" != "$pid1" ] && vm systemctl is-active --quiet printbox-agent.service; then
    restarted=$(( $(date +%s) - t_stop )); break
  fi
done
check "watchdog restarted the stopped agent (${restarted:-no}s after SIGSTOP)" test -n "$restarted"
check "journal names the watchdog" vm "journalctl -u printbox-agent.service --no-pager | grep -qi watchdog"
t_serve=$(date +%s); while ! version_ok && [ $(( $(date +%s) - t_serve )) -lt 60 ]; do sleep 0.5; done
check "serving again after the watchdog restart" version_ok
stage_end "watchdog (SIGSTOP on the agent)"

stage "journal priorities and warnings kept on the card"
# Six failed sign-ins: the limiter's warning. journald must file it as a warning (the agent's
# <N> prefixes), "agent ready" as info; the card keeps the warning for /logs across the reboot.
for i in 1 2 3 4 5 6; do
  api -o /dev/null -H 'Content-Type: application/json' -d '{"username":"tech","password":"not the password"}' "https://127.0.0.1:$https_port/api/v1/auth/login" || true
done
sleep 1
check "journal: the sign-in limiter's line at priority warning" \
  vm "journalctl -b -u printbox-agent.service -p warning..warning -o cat --no-pager | grep -q 'repeated failed sign-in attempts'"
check "journal: 'agent ready' at priority info, not err" \
  vm "journalctl -b -u printbox-agent.service -p info..info -o cat --no-pager | grep -q 'agent ready' && ! journalctl -b -u printbox-agent.service -p err -o cat --no-pager | grep -q 'agent ready'"
stage_end "journal priorities and warnings kept on the card"

stage "reboot"
vm "systemctl --no-block reboot" >/dev/null || true
sleep 3
TVM_T0=$(date +%s.%N)   # approximately: from the reboot request
while version_ok; do sleep 0.5; done
if t_reboot=$(wait_https 300); then pass "reboot: back on HTTPS ${t_reboot}s after the reboot request"; else fail "reboot: HTTPS"; show_serial first; exit 1; fi
wait_console || { fail "test console after reboot"; exit 1; }
cert_sum2=$(vm sha256sum /var/lib/printbox/tls/agent.crt | cut -c1-64) || true
check "certificate unchanged after reboot" test "$cert_sum1" = "$cert_sum2"
key_stat=$(vm stat -c "'%a %U %G'" /var/lib/printbox/tls/agent.key | tr -d '\r\n') || true
check "key still 0600 printbox: $key_stat" test "$key_stat" = "600 printbox printbox"
error=$(vm cat /boot/firmware/printbox-toml.error | tr -d '\r') || true
echo "       printbox-toml.error: $error"
check "broken printbox.toml: not applied, reason beside it" grep -q 'polling.interval_minutes must be an integer' <<<"$error"
check "broken printbox.toml: provisioning unit did not fail the boot" vm systemctl is-active --quiet printbox-provision.service
login=$(api -D - -o /dev/null -H 'Content-Type: application/json' \
  -d "{\"username\":\"tech\",\"password\":\"$provisioned_password\"}" "https://127.0.0.1:$https_port/api/v1/auth/login" | tr -d '\r') || true
cookie=$(sed -n 's/^[Ss]et-[Cc]ookie: \(pm_agent_session=[^;]*\);.*/\1/p' <<<"$login")
check "broken printbox.toml: the provisioned account still signs in" test -n "$cookie"
logs=$(api -H "Cookie: $cookie" -H 'Accept: application/json' "https://127.0.0.1:$https_port/logs?level=warn&tail=2000") || true
check "/logs after the reboot: the limiter's warning from before it (previous_run)" \
  grep -q '"msg":"repeated failed sign-in attempts: rate limited"[^}]*"previous_run":true\|"previous_run":true[^}]*"msg":"repeated failed sign-in attempts: rate limited"' <<<"$logs"
stage_end "reboot"

stage "power cut during writes"
vm "cd /tmp && NODE_TLS_REJECT_UNAUTHORIZED=0 nohup /opt/printbox/node/bin/node -e '
let i = 0;
(async () => { for (;;) { i++;
  const r = await fetch(\"https://127.0.0.1:8443/settings\", { method: \"POST\", headers: { \"content-type\": \"application/json\" },
    body: JSON.stringify({ discovery: { snmp_timeout_ms: 1000 + (i % 5000) } }) }).catch((e) => ({ status: String(e) }));
  if (i % 20 === 0) console.log(i, r.status);
} })();' >/tmp/writer.log 2>&1 &" >/dev/null
# Node starts slowly under TCG: wait until the writer has been answered, then let it run on.
writes=""
for i in $(seq 1 60); do
  writes=$(vm tail -n1 /tmp/writer.log | tr -d '\r\n') || true
  [ -n "$writes" ] && break
  sleep 2
done
sleep 4
writes=$(vm tail -n1 /tmp/writer.log | tr -d '\r\n') || true
echo "       writer: $writes (requests, last status)"
check "writes were going on" grep -q ' 200$' <<<"$writes"
poweroff_hard
pass "QEMU killed (hard power-off)"
boot afterpowercut
if t_cut=$(wait_https 300); then pass "boot after power cut: HTTPS in ${t_cut}s"; else fail "boot after power cut: HTTPS"; show_serial afterpowercut; exit 1; fi
wait_console || { fail "test console after power cut"; exit 1; }
integrity=$(vm "cd /opt/printbox && ./node/bin/node -e \"const D = require('better-sqlite3'); const db = new D('/var/lib/printbox/printbox.db', { readonly: true }); console.log(db.pragma('integrity_check', { simple: true }))\"" | tr -d '\r\n') || true
check "PRAGMA integrity_check: $integrity" test "$integrity" = ok
check "printbox-agent active after power cut" vm systemctl is-active --quiet printbox-agent.service
cert_sum3=$(vm sha256sum /var/lib/printbox/tls/agent.crt | cut -c1-64) || true
check "certificate unchanged after power cut" test "$cert_sum1" = "$cert_sum3"
stage_end "power cut during writes"

vm "systemctl poweroff" >/dev/null 2>&1 || true
sleep 2; poweroff_hard

total=$(( $(date +%s) - t_start ))
echo "boot-to-ready: first boot ${t_first}s, reboot ${t_reboot}s, after power cut ${t_cut}s (TCG, 2 vCPU); boot test ${total}s"
if [ "$failures" -gt 0 ]; then echo "boot test: $failures check(s) failed"; exit 1; fi
echo "boot test: all checks passed"
