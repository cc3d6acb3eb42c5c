# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
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
# The image is current at its first boot: the units for a /usr changed since the last boot did not
# run (scripts/image/finalize.sh).
ran=$(vm systemctl show -p ConditionResult --value systemd-sysusers.service | tr -d '\r\n') || true
check "first boot: systemd-sysusers skipped, /etc is current (ConditionResult=${ran:-?})" test "$ran" = no
# The early units the box has no use for stay masked (scripts/image/customize.sh says why).
masked=$(vm systemctl is-enabled modprobe@drm.service modprobe@efi_pstore.service modprobe@fuse.service sys-fs-fuse-connections.mount | tr -d '\r' | tr '\n' ' ') || true
check "unused early units masked (${masked:-?})" test "$masked" = "masked masked masked masked "
# The test console itself: a line that arrives cut (its start lost while the port opened, or a
# quote left open) is refused whole, and the next command is answered (one shell reading the
# port waited for the rest of such a line for good).
node -e 'const c = require("net").connect(process.argv[1]); c.end("echo \x27never closed\nZWNobyBwYXJ0 tail of a line\n")' "$TVM_SOCK" || true
check "test console: answers after a cut line" vm true
host=$(vm cat /proc/sys/kernel/hostname | tr -d '\r\n') || true
check "host name $host = $expect_host" test "$host" = "$expect_host"
key_stat=$(vm stat -c "'%a %U %G'" /var/lib/printbox/tls/agent.key | tr -d '\r\n') || true
check "key mode and owner: $key_stat" test "$key_stat" = "600 printbox printbox"
# The first certificate is made before DHCP gives the address (the agent does not wait for it);
# printbox-cert-address.service renews it for the address when that comes: wait for its run.
VM_TIMEOUT=160 vm "timeout 150 sh -c 'while [ \"\$(systemctl show -p ExecMainExitTimestampMonotonic --value printbox-cert-address.service)\" = 0 ]; do sleep 1; done'" >/dev/null || true
echo "       printbox-cert-address.service (waits for the address, renews): $(unit_time printbox-cert-address.service)"
cert_sum1=$(vm sha256sum /var/lib/printbox/tls/agent.crt | cut -c1-64) || true
file_der=$(vm openssl x509 -in /var/lib/printbox/tls/agent.crt -outform DER \| sha256sum | cut -c1-64) || true
# The agent reloads a renewed certificate when the file changes: give that a moment.
served=""
for _ in $(seq 1 30); do
  served=$(echo | openssl s_client -connect "127.0.0.1:$https_port" 2>/dev/null | openssl x509 -outform DER 2>/dev/null | sha256sum | cut -c1-64) || true
  [ "$served" != "$file_der" ] || break
  sleep 1
done
check "served certificate is the one on the box" test -n "$served" -a "$served" = "$file_der"
sans=$(vm openssl x509 -in /var/lib/printbox/tls/agent.crt -noout -ext subjectAltName | tr -d '\r\n') || true
echo "       SANs:$sans"
check "certificate names $expect_host.local and the box's address" grep -q "DNS:$expect_host.local.*IP Address:10.0.2.15" <<<"$sans"
exposure=$(vm systemd-analyze security printbox-agent.service | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p') || true
check "in the VM: printbox-agent exposure ${exposure:-?} < 3.0" awk -v e="${exposure:-99}" 'BEGIN { exit !(e < 3.0) }'
echo "       provisioning unit (Node, a new file): $(unit_time printbox-provision.service)"
only first-boot && first_boot_agent_free_checks
stage_end "first boot checks"
