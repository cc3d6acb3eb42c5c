# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
# The units of the built root filesystem, checked without booting it.
stage "static unit checks"
units=(printbox-agent.service printbox-redirect.socket printbox-redirect.service printbox-cert.service
  printbox-cert-address.service printbox-cert-renew.service printbox-cert-renew.timer printbox-hostname.service printbox-ssh.service
  printbox-provision.service printbox-system-reload.service printbox-banner.service printbox-mark-good.service
  printbox-update-reboot.path printbox-update-reboot.service)
# The image's own systemd-analyze (trixie's 257, not this machine's), run in the root directory
# with a private /proc: the units are read as the box's systemd reads them (a host's older systemd
# would call the box's own units' newer keys unknown).
in_image() { SYSTEMD_COLORS=0 SYSTEMD_LOG_COLOR=0 unshare --mount --pid --fork --propagation private --mount-proc="$out/rootfs/proc" chroot "$out/rootfs" "$@"; }
if [ -d "$out/rootfs/usr/lib/systemd/system" ]; then
  echo "  (the image's $(in_image systemd-analyze --version | head -n 1))"
  verify_out=$(in_image systemd-analyze verify "${units[@]}" 2>&1) || true
  if [ -z "$verify_out" ]; then pass "systemd-analyze verify (the image's, in its root): no output"; else fail "systemd-analyze verify said:"; echo "$verify_out" | sed 's/^/       /'; fi
  for u in printbox-agent.service printbox-redirect.service printbox-cert.service; do
    exposure=$(in_image systemd-analyze security --offline=true "$u" 2>/dev/null \
      | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    check "$u exposure ${exposure:-?} < 3.0" awk -v e="${exposure:-99}" 'BEGIN { exit !(e < 3.0) }'
  done
  # Root one-shots: as low as their jobs allow (docs/image.md has each one's figure and why).
  for u in printbox-provision.service printbox-system-reload.service printbox-banner.service printbox-hostname.service \
      printbox-ssh.service printbox-mark-good.service printbox-update-reboot.service; do
    exposure=$(in_image systemd-analyze security --offline=true "$u" 2>/dev/null \
      | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    check "$u exposure ${exposure:-?} < 2.0" awk -v e="${exposure:-99}" 'BEGIN { exit !(e < 2.0) }'
  done
else
  fail "build/amd64/rootfs (the root directory) is missing: cannot verify units"
fi
stage_end "static unit checks"
