# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
stage "watchdog (SIGSTOP on the agent), and the checks that need no agent meanwhile"
# printbox-mark-good asks the agent whether it serves: it has run before the agent is stopped.
VM_TIMEOUT=100 vm "timeout 90 sh -c 'until systemctl is-active --quiet printbox-mark-good.service; do sleep 1; done'" >/dev/null || true
pid1=$(vm systemctl show -p MainPID --value printbox-agent.service | tr -d '\r\n') || true
vm kill -STOP "$pid1" >/dev/null
t_stop=$(date +%s)
# systemd kills and restarts the stopped agent once WatchdogSec (60 s) has passed without a ping;
# until then the VM's one vCPU does what needs no agent.
first_boot_agent_free_checks
# For the A/B stage: the slot booted, marked good once the agent served; the data partition; who
# may use RAUC.
slot=$(slot_of) || true
check "booted from slot A (rauc.slot=$slot)" test "$slot" = A
check "printbox-mark-good.service ran" vm systemctl is-active --quiet printbox-mark-good.service \
  || vm "journalctl -b -u printbox-mark-good.service --no-pager | tail -n 20" | sed 's/^/       /'
check "slot A marked good (grubenv A_OK=1 A_TRY=0)" vm "grub-editenv /boot/efi/EFI/BOOT/grubenv list | grep -qx A_TRY=0"
check "/var/lib/printbox is the data partition" vm "findmnt -n -o SOURCE /var/lib/printbox | grep -qx \$(readlink -f /dev/disk/by-partlabel/data)"
# The test disk is TVM_GROW_MB larger than the image, as a card is: the data partition and its
# filesystem took the rest at the first boot.
DATA_MB=$(sed -n 's/^DATA_MB=//p' "$repo/image/layers/amd64.conf")
grown=$(vm "blockdev --getsize64 /dev/disk/by-partlabel/data; dumpe2fs -h /dev/disk/by-partlabel/data 2>/dev/null | sed -n 's/^Block \(count\|size\): *//p'" | tr -d '\r' | xargs) || true
read -r data_bytes fs_blocks fs_block_size <<<"$grown"
check "the data partition grew to the end of the disk at the first boot ($(( ${data_bytes:-0} / 1048576 )) MiB of $(( DATA_MB + TVM_GROW_MB )))" \
  test "$(( ${data_bytes:-0} / 1048576 ))" -ge "$(( DATA_MB + TVM_GROW_MB - 2 ))"
check "its filesystem grew with it ($(( ${fs_blocks:-0} * ${fs_block_size:-0} / 1048576 )) MiB)" \
  test "$(( ${fs_blocks:-0} * ${fs_block_size:-0} ))" = "${data_bytes:-x}"
# A slot whose kernel hangs without a panic is reset by the hardware watchdog, then GRUB takes the
# other slot. (That a hang is reset is not shown here: nothing stops PID 1's pings on demand.)
wd=$(vm "cat /sys/class/watchdog/watchdog0/state /sys/class/watchdog/watchdog0/timeout" | tr -d '\r' | xargs) || true
check "the hardware watchdog is armed by systemd: $wd" test "$wd" = "active 60"
check "RAUC's installer refuses a user other than root and the agent's" \
  vm "! setpriv --reuid=65534 --regid=65534 --clear-groups busctl get-property de.pengutronix.rauc / de.pengutronix.rauc.Installer Operation"
check "the agent's user reads RAUC's slot status" vm "setpriv --reuid=printbox --regid=printbox --clear-groups rauc status >/dev/null"
check "the agent's user may not mark slots" \
  vm "! setpriv --reuid=printbox --regid=printbox --clear-groups busctl call de.pengutronix.rauc / de.pengutronix.rauc.Installer Mark ss bad other"

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
back_in=""; t_serve=$(date +%s)
while [ $(( $(date +%s) - t_serve )) -lt 120 ]; do version_ok && { back_in=$(( $(date +%s) - t_serve )); break; }; sleep 0.5; done
check "serving again after the watchdog restart (${back_in:-not within 120}s after it)" test -n "$back_in"
stage_end "watchdog (SIGSTOP on the agent), and the checks that need no agent meanwhile"
