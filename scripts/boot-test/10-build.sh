# shellcheck shell=bash
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2034,SC2154 # the stages share one shell and its variables (scripts/boot-test.sh)
# The amd64 image, built unless PRINTBOX_BOOT_TEST_NO_BUILD=1 and a built disk is there.
if [ "${PRINTBOX_BOOT_TEST_NO_BUILD:-}" != 1 ] || [ ! -s "$out/disk.img" ]; then
  stage "build image"
  "$repo/scripts/build-image.sh" amd64
  stage_end "build image"
fi
for f in disk.img rootfs.img parts/esp.vfat parts/data.ext4 parts/genimage.cfg; do [ -s "$out/$f" ] || { echo "missing build/amd64/$f" >&2; exit 1; }; done
