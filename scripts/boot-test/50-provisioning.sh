# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
stage "provisioning and access from the site network"
code=$(api -o /dev/null -w '%{http_code}' -H 'Accept: application/json' "https://127.0.0.1:$https_port/devices/list") || true
check "from the LAN without a session: /devices/list answers 401 ($code)" test "$code" = 401
code=$(api -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 127.0.0.1' -H 'X-Service-Proxy: server' "https://127.0.0.1:$https_port/settings") || true
check "forged forwarding headers from the LAN: 401 ($code)" test "$code" = 401
code=$(api -o /dev/null -w '%{http_code}' --path-as-is "https://127.0.0.1:$https_port//settings") || true
check "//settings from the LAN: 400 ($code)" test "$code" = 400
# Provisioning runs beside the agent: HTTPS may answer before the account exists. Progress: the
# unit's run has ended (the timesyncd check below waits for printbox-system-reload on its own).
wait_provisioned
echo "       provisioning ended $(unit_gap printbox-agent.service ExecMainStartTimestampMonotonic printbox-provision.service ExecMainExitTimestampMonotonic) after the agent's start"
check "sign-in with the provisioned password" signin_retrying
settings=$(authed "https://127.0.0.1:$https_port/settings") || true
check "discovery on out of the box (subnet scan, automatic)" grep -q '"subnet_scan":true.*"auto_discover":true' <<<"$settings"
check "provisioned polling interval applied" grep -q '"interval_minutes":20' <<<"$settings"
left=$(vm "grep -c password /boot/firmware/printbox.toml" | tr -d '\r\n') || true
check "plaintext password line gone from printbox.toml (grep -c: $left)" test "$left" = 0
check "provisioned time servers handed to timesyncd" vm "grep -q 'NTP=ntp.printbox.invalid' /etc/systemd/timesyncd.conf.d/60-printbox-provisioned.conf"
check "timesyncd uses the provisioned time servers" timesyncd_servers ntp.printbox.invalid
check "no setup code once an account exists" vm "test ! -e /boot/firmware/printbox-setup.txt -a ! -e /run/printbox-setup/code"
fingerprint=$(openssl x509 -in <(vm cat /var/lib/printbox/tls/agent.crt | tr -d '\r') -noout -fingerprint -sha256 2>/dev/null | sed 's/.*=//') || true
# The banner runs after the certificate and the setup code: wait until it has run (or failed).
wait_banner
serial=$(tr -d '\r' < "$tmp/serial-first.log")
check "console banner: PrintBox $expect_host" grep -qx "PrintBox $expect_host" <<<"$serial"
check "console banner: URL https://$expect_host.local:8443/" grep -qx "URL: https://$expect_host.local:8443/" <<<"$serial"
check "console banner: URL https://10.0.2.15:8443/" grep -qx "URL: https://10.0.2.15:8443/" <<<"$serial"
check "console banner: certificate fingerprint" grep -qxF "Certificate SHA-256: ${fingerprint:-none}" <<<"$serial"
check "console banner: no setup code once an account exists" bash -c '! grep -q "^Setup code:" <<<"$1"' _ "$serial"
check "console banner: Provisioning: printbox.toml applied at ..." grep -q "^Provisioning: printbox.toml applied at 20" <<<"$serial"
check "GET /settings provisioning: applied" grep -q '"provisioning":{"state":"applied","message":"printbox.toml applied at 20' <<<"$settings"
banner_state=$(vm systemctl show -p ActiveState,Result,ExecMainStatus printbox-banner.service | tr -d '\r' | sort | tr '\n' ' ') || true
check "printbox-banner.service succeeded ($banner_state)" grep -q 'ExecMainStatus=0 Result=success' <<<"$banner_state"
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
