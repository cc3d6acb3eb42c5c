# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
stage "first boot"
boot first
first_boot_s=${PRINTBOX_BOOT_TEST_FIRST_BOOT_S:-300}
if ! t_first=$(wait_https "$first_boot_s"); then
  fail "first boot: /api/version over HTTPS (the boot stalled ${first_boot_s}s, or took 3 times that)"; show_serial first; exit 1
fi
pass "first boot: power-on to GET /api/version over HTTPS in ${t_first}s"
wait_console || { fail "test console"; show_serial first; exit 1; }
stage_end "first boot"
