# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
# The run's working directory and its cleanup, the technician's printbox.toml on a boot partition,
# the test's copy of the disk, and the update server the VM reaches at http://10.0.2.100/.
tmp=$(mktemp -d /tmp/printbox-boot-test.XXXXXX)
upd_pid="" bundles_pid=""
cleanup() {
  tvm_poweroff_hard
  if [ -s "$tmp/repeated-resets.log" ]; then
    echo "test VM: the firmware went silent after a reboot and the harness cut the power (test-vm.sh, tvm_reset_watch):"
    sed 's/^/    /' "$tmp/repeated-resets.log"
  fi
  for p in $upd_pid $bundles_pid; do kill "$p" 2>/dev/null || true; done
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
# Updates for the A/B stage come from a web server on the host's loopback, which the VM reaches
# at http://10.0.2.100/ (a guestfwd: nothing else is reachable from the VM).
upd=$tmp/updates
mkdir -p "$upd"
upd_port=$(tvm_pick_port)
python3 -m http.server --bind 127.0.0.1 --directory "$upd" "$upd_port" >"$tmp/update-server.log" 2>&1 &
upd_pid=$!
# QEMU runs this for each connection the VM opens to 10.0.2.100:80 (its stdin and stdout are it).
cat >"$tmp/relay.sh" <<RELAY
#!/bin/bash
exec 3<>/dev/tcp/127.0.0.1/$upd_port
cat <&3 &
cat >&3
wait
RELAY
chmod 755 "$tmp/relay.sh"
TVM_NETDEV_EXTRA=",guestfwd=tcp:10.0.2.100:80-cmd:$tmp/relay.sh"
https_port=$TVM_HTTPS_PORT
http_port=$TVM_HTTP_PORT

expect_host=printbox-b0c7   # from the MAC address test-vm.sh gives the VM
