# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
# The boot test's shared functions, sourced by scripts/boot-test.sh before its stages: how a check
# reports, how a stage is named and timed, how the VM is reached (through scripts/image/test-vm.sh),
# how a technician signs in, and the figures of a boot. They read the run's values ($tmp,
# $https_port, ...) when called, set by the stages before.

# A machine that cannot run the test says why and passes, unless the run is required to happen
# (PRINTBOX_BOOT_TEST_REQUIRED=1: scripts/test.sh on a root x86_64 host, where a skip would hide a
# stage, as a failed install of the VM's tools once did).
skip() {
  if [ "${PRINTBOX_BOOT_TEST_REQUIRED:-}" = 1 ]; then echo "boot test could not run: $* (PRINTBOX_BOOT_TEST_REQUIRED=1)"; exit 1; fi
  echo "boot test skipped: $*"; exit 0
}
# PRINTBOX_BOOT_TEST_ONLY / _SKIP name a part of the run (scripts/boot-test.sh lists them).
only() { [ "${PRINTBOX_BOOT_TEST_ONLY:-}" = "$1" ]; }
skipped() { [ "${PRINTBOX_BOOT_TEST_SKIP:-}" = "$1" ]; }

failures=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; failures=$((failures + 1)); explain_failure; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
stage_start=0 stage_name="" explained_stage="" explain_units=""
stage() { stage_start=$(date +%s); stage_name=$1; echo "== boot test: $1"; }
# Why a check failed, once per stage while the VM runs: the failed units' journal, the
# provisioning and agent units' last lines (and the stage's own, explain_units), the console's last lines.
explain_failure() {
  [ "$explained_stage" != "$stage_name" ] || return 0
  explained_stage=$stage_name
  [ -n "${TVM_PID:-}" ] && kill -0 "$TVM_PID" 2>/dev/null || return 0
  [ -S "${TVM_SOCK:-}" ] || return 0
  local failed u
  failed=$(VM_TIMEOUT=15 tvm_sh systemctl list-units --failed --plain --no-legend 2>/dev/null | tr -d '\r' | awk '{print $1}') || true
  for u in $failed printbox-provision.service printbox-agent.service $explain_units; do
    echo "       --- journal of $u (this boot, last lines):"
    VM_TIMEOUT=15 tvm_sh "journalctl -b -u $u --no-pager -o short-monotonic | tail -n 25" 2>/dev/null | tr -d '\r' | sed 's/^/       /' || true
  done
  echo "       --- console, last lines:"
  tail -n 30 "${serial_now:-/dev/null}" 2>/dev/null | tr -d '\r' | sed 's/^/       /' || true
}
stage_end() { echo "== boot test: $1 took $(( $(date +%s) - stage_start ))s"; }

boot() { serial_now=$tmp/serial-$1.log; tvm_boot "$1"; }
poweroff_hard() { tvm_poweroff_hard; }
version_ok() { tvm_https_ok; }
wait_https() { tvm_wait_https "$1"; }
vm() { tvm_sh "$@"; }
wait_console() { tvm_wait_console; }
# Host requests arrive through QEMU's user network from 10.0.2.2: a peer on the LAN, not loopback.
api() { curl -sk --max-time 20 "$@"; }
# Signs in as USER with PASSWORD (default: the provisioned technician); sets $cookie, fails when
# no session cookie came back, and then says what came instead (signin_said). Sessions live in the
# agent's memory: again after each reboot.
cookie="" signin_said=""
signin() {
  local login
  # (a sign-in hashes the password: under TCG on a loaded host that took over 20 s once, so it gets
  # a longer bound than other requests; it returns as soon as the agent answers)
  login=$(curl -sk --max-time 120 -D - -o /dev/null -w 'http_code=%{http_code}\n' -H 'Content-Type: application/json' \
    -d "{\"username\":\"${1:-tech}\",\"password\":\"${2:-$provisioned_password}\"}" "https://127.0.0.1:$https_port/api/v1/auth/login"; echo "curl_exit=$?")
  login=$(tr -d '\r' <<<"$login")
  cookie=$(sed -n 's/^[Ss]et-[Cc]ookie: \(pm_agent_session=[^;]*\);.*/\1/p' <<<"$login")
  signin_said="HTTP $(sed -n 's/^http_code=//p' <<<"$login"), curl exit $(sed -n 's/^curl_exit=//p' <<<"$login")"
  [ -n "$cookie" ] || { echo "       sign-in as ${1:-tech}: no session ($signin_said)"; return 1; }
}
# Signs in as a technician would after a boot: again while the agent is not answering yet, is
# busy with its start (curl failed: no answer, or the connection cut) or the limiter's lock holds
# (429), for up to 180 s. Wrong credentials (401) fail at once.
signin_retrying() {
  local t0=$SECONDS
  until signin "$@"; do
    case $signin_said in "HTTP 401"*) return 1 ;; esac
    [ $(( SECONDS - t0 )) -lt 180 ] || return 1
    sleep 2
  done
}
authed() { api -H "Cookie: $cookie" -H 'Accept: application/json' "$@"; }
# Where the boot just timed went, seen from inside the VM once it has finished booting:
# systemd-analyze's total, the agent's critical chain, the slowest units, and the agent's own
# start-up phases (ms; its log line, at the journal's monotonic time since the kernel started).
boot_figures() {
  echo "       --- figures: $1"
  VM_TIMEOUT=200 vm "timeout 180 systemctl is-system-running --wait >/dev/null; systemd-analyze 2>&1 | head -n 1; \
    systemd-analyze critical-chain printbox-agent.service 2>&1 | tail -n +3; echo 'slowest units:'; systemd-analyze blame 2>&1 | head -n 15; \
    journalctl -b -u printbox-agent.service -o short-monotonic --no-pager | grep 'start-up phases' | tail -n 1 \
      | sed 's/^\(\[ *[0-9.]*\]\).*\"phases_ms\":{\([^}]*\)},\"total_ms\":\([0-9]*\).*/agent start-up phases (ms): \2; total \3 ms from its start; logged at \1/'; \
    pings=\$(journalctl -b -u printbox-agent.service -o short-monotonic --no-pager | grep 'watchdog ping'); \
    echo \"watchdog ping warnings (late: the event loop blocked; slow: systemd-notify): \$(printf '%s' \"\$pings\" | grep -c .)\"; \
    printf '%s\n' \"\$pings\" | grep . | tail -n 3" \
    | tr -d '\r' | sed 's/^/       /' || true
}
# How long a one-shot unit's last run took (activation to deactivation, from its timestamps).
unit_time() {
  vm systemctl show -p InactiveExitTimestampMonotonic,InactiveEnterTimestampMonotonic "$1" | tr -d '\r' \
    | awk -F= '/^InactiveExit/ { a = $2 } /^InactiveEnter/ { b = $2 } END { if (a > 0 && b > a) printf "%.2fs", (b - a) / 1e6; else print "?" }'
}
# Seconds from one unit's timestamp to another's (systemctl show's monotonic properties).
unit_gap() {
  local a b
  a=$(vm systemctl show -p "$2" --value "$1" | tr -d '\r\n') || true
  b=$(vm systemctl show -p "$4" --value "$3" | tr -d '\r\n') || true
  awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.1fs", (b - a) / 1e6; else print "?" }'
}
# Provisioning's run at this boot has ended (bounded; the checks after it say what is missing).
wait_provisioned() {
  VM_TIMEOUT=200 vm "timeout 180 sh -c 'while [ \"\$(systemctl show -p ExecMainExitTimestampMonotonic --value printbox-provision.service)\" = 0 ]; do sleep 1; done'" >/dev/null || true
}
# timesyncd's own idea of its servers (over D-Bus), not the file: it waits for the reload.
timesyncd_servers() {
  VM_TIMEOUT=160 vm "timeout 150 sh -c 'until [ \"\$(timedatectl show-timesync -p SystemNTPServers --value)\" = $1 ]; do sleep 1; done'" >/dev/null \
    || { echo "       timesyncd: $(vm timedatectl show-timesync -p SystemNTPServers | tr -d '\r')"; return 1; }
}
# The banner (a one-shot, not kept active): wait until it has run at least once.
wait_banner() {
  VM_TIMEOUT=100 vm "timeout 90 sh -c 'while [ \"\$(systemctl show -p ExecMainExitTimestampMonotonic --value printbox-banner.service)\" = 0 ]; do sleep 1; done'" >/dev/null || true
}
show_serial() { echo "--- serial console ($1), last lines:"; tail -n 40 "$tmp/serial-$1.log" 2>/dev/null | tr -d '\r' | sed 's/^/    /'; }
# The first boot's checks that need the VM but not the agent. In a whole run they are made while
# the agent is stopped for the watchdog stage (which waits 60 s for systemd either way): the
# VM's one vCPU would otherwise spend that time idle and this time on them.
first_boot_agent_free_checks() {
  # (before the watchdog restarts the agent: the start-up phases read are the first start's)
  boot_figures "first boot, HTTPS ${t_first}s after power-on"
  # The first request starts the redirect service (socket activation): Node under TCG takes a while.
  loc=$(curl -s --max-time 90 -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$http_port/some/path?x=1") || true
  echo "       8080 answer: $loc"
  check "8080 redirects to https://<same host>:8443<same path>" grep -Eq '^30[1278] https://127\.0\.0\.1:8443/some/path' <<<"$loc"
}
# The slot the VM booted (A or B), from the kernel's command line.
slot_of() { vm "sed -n 's/.*rauc\.slot=\([AB]\).*/\1/p' /proc/cmdline" | tr -d '\r\n'; }
