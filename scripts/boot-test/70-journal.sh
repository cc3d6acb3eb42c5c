# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
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
