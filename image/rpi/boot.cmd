# PrintBox (Raspberry Pi card): U-Boot's choice of root filesystem slot, in RAUC's U-Boot scheme
# (docs/image.md, "Updates"). scripts/build-image.sh compiles it to boot.scr on the boot partition,
# where U-Boot's distro boot finds it: on a Pi the firmware starts U-Boot (config.txt
# kernel=u-boot.bin), in the QEMU smoke boot Debian's qemu_arm64 U-Boot does.
#   BOOT_ORDER     slots to try, preferred first ("A B" or "B A"): RAUC puts a new install first
#   BOOT_A_LEFT    boots slot A may still try (B likewise): one is taken here before the slot
#                  boots; RAUC sets it back to 3 once the agent serves (printbox-mark-good), to 0
#                  when the slot is marked bad. A slot at 0 is skipped.
#   EXTRA_CMDLINE  kernel arguments added by a test's copy of the card only
# They live in rauc.env on this partition, in U-Boot's binary environment format (16 KiB, CRC32),
# not in U-Boot's own environment: Linux writes them with fw_setenv (/etc/fw_env.config), and the
# file means the same to whichever U-Boot reads it. An unreadable file means the defaults (slot A).
# panic=10: a kernel that panics restarts after 10 s; the hardware watchdog resets one that hangs.

setexpr pb_env ${kernel_addr_r} + 0x0c000000
if load ${devtype} ${devnum}:1 ${pb_env} rauc.env; then
  env import -c ${pb_env} 0x4000 BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT EXTRA_CMDLINE || echo "PrintBox: rauc.env unreadable: defaults"
fi
test -n "${BOOT_ORDER}" || setenv BOOT_ORDER "A B"
test -n "${BOOT_A_LEFT}" || setenv BOOT_A_LEFT 3
test -n "${BOOT_B_LEFT}" || setenv BOOT_B_LEFT 3

setenv pb_slot
for s in "${BOOT_ORDER}"; do
  if test -n "${pb_slot}"; then
    true
  elif test "${s}" = "A" && test ${BOOT_A_LEFT} -gt 0; then
    setexpr BOOT_A_LEFT ${BOOT_A_LEFT} - 1
    setenv pb_slot A
    setenv pb_part 2
  elif test "${s}" = "B" && test ${BOOT_B_LEFT} -gt 0; then
    setexpr BOOT_B_LEFT ${BOOT_B_LEFT} - 1
    setenv pb_slot B
    setenv pb_part 3
  fi
done
if test -z "${pb_slot}"; then
  # Neither slot has a try left: give both new ones and start again with the preferred slot,
  # rather than boot none.
  echo "PrintBox: no slot has a try left: both get 3 again"
  setenv BOOT_A_LEFT 3
  setenv BOOT_B_LEFT 3
fi
# The try is counted on the card before the slot boots, so a slot that never comes up runs out.
env export -c -s 0x4000 ${pb_env} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT EXTRA_CMDLINE
fatwrite ${devtype} ${devnum}:1 ${pb_env} rauc.env 0x4000 || echo "PrintBox: rauc.env not written"
test -n "${pb_slot}" || reset

echo "PrintBox: booting slot ${pb_slot} (tries left: A ${BOOT_A_LEFT}, B ${BOOT_B_LEFT})"
# The initrd sits well above the kernel (Debian's arm64 Image: 50 MiB with the backports kernel,
# booti moves it to the next 2 MiB boundary) on every board; a compressed kernel would be unpacked
# by booti through kernel_comp_addr_r, above both (the initrd may take 48 MiB).
setexpr ramdisk_addr_r ${kernel_addr_r} + 0x05000000
setexpr kernel_comp_addr_r ${kernel_addr_r} + 0x08000000
setenv kernel_comp_size 0x04000000
# The firmware's kernel arguments (cmdline.txt, the Pi's MAC address and console) come first; the
# slot's root comes last, and the kernel takes the last root= it is given.
setenv pb_fwargs
fdt addr ${fdt_addr} && fdt get value pb_fwargs /chosen bootargs
setenv bootargs "${pb_fwargs} root=PARTUUID=7062626f-0${pb_part} rauc.slot=${pb_slot} rw rootwait panic=10 ${EXTRA_CMDLINE}"
if load ${devtype} ${devnum}:${pb_part} ${kernel_addr_r} /vmlinuz; then
  if load ${devtype} ${devnum}:${pb_part} ${ramdisk_addr_r} /initrd.img; then
    booti ${kernel_addr_r} ${ramdisk_addr_r}:${filesize} ${fdt_addr}
  fi
fi
echo "PrintBox: slot ${pb_slot} did not boot: restarting (the try is counted)"
reset
