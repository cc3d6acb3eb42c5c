#!/usr/bin/env bash
# Appliance boot test (run by `npm test`, `npm run test:vm`): builds the amd64 image and boots it in QEMU with
# software emulation (TCG), user-mode networking with restrict=on and host forwards on 127.0.0.1
# only, so nothing leaves the VM. Checks, from outside the VM:
#   units statically (systemd-analyze verify --root, security exposure < 3.0);
#   power-on -> GET /api/version over HTTPS (timed); 8080 redirects to 8443 (same host and path);
#   agent active and READY (Type=notify); host name printbox-<MAC>; certificate made on first boot
#   (key 0600, owner printbox) and unchanged after a power cut and on slot B; SIGSTOP on the agent
#   -> the watchdog restarts it; QEMU killed while the agent writes its database and RAUC writes
#   slot B -> next boot: PRAGMA integrity_check ok, slot A serving. Each boot under TCG costs a
#   minute or more, so one boot serves several checks: the update's own reboot into slot B is the
#   test's warm reboot.
#   Provisioning: a second small FAT disk labelled PBOXBOOT (mounted at /boot/firmware, as the Pi's
#   boot partition) carries printbox.toml; from the host the test signs in with the provisioned
#   password, finds the plaintext gone, discovery on, the banner on the serial console; a broken
#   printbox.toml at the next boot (after the power cut) leaves a booting box and printbox-toml.error.
#   USB printers: gadgets on the VM kernel's virtual buses, plugged, read, unplugged and moved
#   (scripts/image/usb-stage.sh).
#   The boot partition missing, then appearing late: a fresh copy booted without it says
#   "no boot partition found" and shows the setup code; the disk then hot-plugged (QEMU monitor)
#   while the agent serves is mounted and applied, the running agent takes the account and the
#   settings; the same file again is skipped without Node.
# On a failed check: the failed units' journal, the provisioning and agent units' last lines and
# the console's last lines, once per stage.
# The VM is inspected through a root shell on a second serial port that exists only in this
# test's copy of the image (the shipped image has no such thing).
# Prints why and exits 0 only when this machine cannot run QEMU at all (and fails instead when
# PRINTBOX_BOOT_TEST_REQUIRED=1, as scripts/test.sh sets on a root x86_64 host).
# Env: PRINTBOX_BOOT_TEST_NO_BUILD=1 uses the existing build/amd64 artifacts.
#      PRINTBOX_BOOT_TEST_ONLY=boot-partition runs the static checks and the late/missing boot
#      partition stage only, in a VM of its own (scripts/test.sh runs it beside the rest);
#      PRINTBOX_BOOT_TEST_SKIP=boot-partition runs everything else.
#      PRINTBOX_BOOT_TEST_ONLY=first-boot runs the static checks, the first boot and its checks,
#      then a second boot from power-on, each with its figures (a quick run while working on boot
#      time).
#      PRINTBOX_BOOT_TEST_FIRST_BOOT_S (default 300): how long a first boot may go without progress
#      (its serial console) before HTTPS answers (test-vm.sh, tvm_wait_https).
# Figures of each timed boot: systemd-analyze's total, the agent's critical chain, the
# slowest units (blame), and the agent's own start-up phases (its "start-up phases" log line).
#
# The run is told as numbered stages (scripts/boot-test/NN-*.sh), sourced in order into this one
# shell on the one VM: a stage reads what the ones before it set (the VM, its ports, the session,
# the figures). Their shared functions are scripts/boot-test/lib.sh. `scripts/boot-test.sh --list`
# prints which stages this environment (the knobs above) runs, and does nothing else.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC2034 # out and t_start are read by the stages
out=$repo/build/amd64
t_start=$(date +%s)
stages_dir=$repo/scripts/boot-test
# shellcheck source=boot-test/lib.sh
. "$stages_dir/lib.sh"

# Each stage, and when it runs: always; !only:X unless PRINTBOX_BOOT_TEST_ONLY=X; only:X only then;
# !skipped:X unless PRINTBOX_BOOT_TEST_SKIP=X.
bt_stages=(
  "00-host                always"
  "10-build               always"
  "20-static-units        always"
  "30-vm-setup            always"
  "40-first-boot          !only:boot-partition"
  "41-update-bundles      !only:boot-partition !only:first-boot"
  "42-first-boot-checks   !only:boot-partition"
  "45-second-boot         !only:boot-partition only:first-boot"
  "50-provisioning        !only:boot-partition !only:first-boot"
  "60-watchdog            !only:boot-partition !only:first-boot"
  "70-journal             !only:boot-partition !only:first-boot"
  "80-usb                 !only:boot-partition !only:first-boot"
  "90-ab-update           !only:boot-partition !only:first-boot"
  "95-boot-partition      !only:first-boot !skipped:boot-partition"
)
bt_wanted() {
  local c
  for c in "$@"; do
    case $c in
      always) ;;
      '!only:'*) ! only "${c#!only:}" || return 1 ;;
      'only:'*) only "${c#only:}" || return 1 ;;
      '!skipped:'*) ! skipped "${c#!skipped:}" || return 1 ;;
      *) echo "scripts/boot-test.sh: unknown condition $c" >&2; exit 2 ;;
    esac
  done
}
# Every stage file is in the list, and every listed stage has its file. (Matched in bash, not by
# `printf | grep -q`: under pipefail, grep leaving early makes printf's SIGPIPE fail the pipeline.)
bt_names=" ${bt_stages[*]%% *} "
for bt_file in "$stages_dir"/[0-9][0-9]-*.sh; do
  [[ $bt_names == *" $(basename "$bt_file" .sh) "* ]] \
    || { echo "scripts/boot-test.sh: $bt_file is not in the list of stages" >&2; exit 2; }
done
for bt_entry in "${bt_stages[@]}"; do
  [ -f "$stages_dir/${bt_entry%% *}.sh" ] || { echo "scripts/boot-test.sh: no file for stage ${bt_entry%% *}" >&2; exit 2; }
done

if [ "${1:-}" = --list ]; then
  for bt_entry in "${bt_stages[@]}"; do
    read -r bt_stage bt_conds <<<"$bt_entry"
    # shellcheck disable=SC2086 # the conditions are words
    if bt_wanted $bt_conds; then echo "run   $bt_stage.sh"; else echo "skip  $bt_stage.sh ($bt_conds)"; fi
  done
  exit 0
fi

for bt_entry in "${bt_stages[@]}"; do
  read -r bt_stage bt_conds <<<"$bt_entry"
  # shellcheck disable=SC2086 # the conditions are words
  bt_wanted $bt_conds || continue
  # shellcheck source=/dev/null
  . "$stages_dir/$bt_stage.sh"
done

total=$(( $(date +%s) - t_start ))
echo "boot-to-ready: first boot ${t_first:-?}s${t_second:+, second boot ${t_second}s}, after power cut ${t_icut:-?}s, update reboot into slot B ${t_update:-?}s after force, first boot without a boot partition ${t_nopart:-?}s (TCG, $TVM_SMP vCPU); boot test ${total}s"
if [ "$failures" -gt 0 ]; then echo "boot test: $failures check(s) failed"; exit 1; fi
echo "boot test: all checks passed"
