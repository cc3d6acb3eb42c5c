# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
# Power off, then on again: a provisioned box's later boots (compile caches made,
# printbox.toml unchanged), timed from power-on like the first.
stage "second boot (first-boot run only)"
vm "systemctl --no-block poweroff" >/dev/null 2>&1 || true
for _ in $(seq 1 120); do kill -0 "$TVM_PID" 2>/dev/null || break; sleep 0.5; done
poweroff_hard
boot second
if t_second=$(wait_https "$first_boot_s"); then pass "second boot: power-on to HTTPS in ${t_second}s"; else fail "second boot: HTTPS (stalled ${first_boot_s}s, or 3 times that in all)"; show_serial second; exit 1; fi
wait_console || { fail "test console (second boot)"; show_serial second; exit 1; }
check "printbox-agent active (second boot)" vm systemctl is-active --quiet printbox-agent.service
failed_units=$(vm systemctl list-units --failed --plain --no-legend | awk '{print $1}' | tr '\n' ' ') || true
check "no failed units (${failed_units:-none})" test -z "$failed_units"
boot_figures "second boot, HTTPS ${t_second}s after power-on"
stage_end "second boot (first-boot run only)"
vm "systemctl poweroff" >/dev/null 2>&1 || true
sleep 2; poweroff_hard
