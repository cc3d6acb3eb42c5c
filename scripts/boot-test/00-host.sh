# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
# Whether this machine can run the boot test at all (else it says why and the run ends with 0),
# and the test VM's helpers with the tools they need.
[ "$(uname -m)" = x86_64 ] || skip "needs an x86_64 host (this is $(uname -m))"
[ "$(uname -s)" = Linux ] || skip "needs Linux"
if [ "$(id -u)" -ne 0 ]; then
  command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing and not root to install it"
  skip "building the image needs root (mmdebstrap, chroot)"
fi

# The test VM's helpers (scripts/image/test-vm.sh), and the tools they need, installed if missing.
TVM_OUT=$out
# shellcheck source=../image/test-vm.sh
. "$repo/scripts/image/test-vm.sh"
tvm_install_tools || skip "could not install the test VM's tools (scripts/image/test-vm.sh, tvm_install_tools)"
qemu-system-x86_64 -accel help 2>/dev/null | grep -qx tcg || skip "this QEMU has no TCG"
