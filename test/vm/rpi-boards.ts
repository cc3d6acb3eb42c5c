// The Raspberry Pi boards the card supports, each with what its boot needs from the card, as the
// boards' documentation and the mainline device trees describe it (docs/image.md, "Flashing a
// Raspberry Pi"). test/vm/rpi-card.test.ts checks each against the built card's files.
//   Raspberry Pi documentation, "Boot sequence" and "config.txt" (conditional filters, gpu_mem,
//   upstream_kernel): the Pi 3 family's ROM loads bootcode.bin, then start.elf/fixup.dat (with
//   gpu_mem=16: start_cd.elf/fixup_cd.dat); the Pi 4 family's EEPROM loads start4.elf/fixup4.dat
//   (start4cd.elf/fixup4cd.dat); the Pi 5's EEPROM bootloader loads no firmware from the card, only
//   config.txt, the device tree and the kernel= file.

/** A device on the board the box needs: the device tree node that describes it (when it is one: a
 *  USB network chip is found on its bus), the kernel modules that drive it and what they rely on. */
export interface Device {
  what: string;
  /** Compatible strings, any one of which an enabled node of the board's device tree claims. */
  compatible?: string[];
  modules: string[];
}

export interface Board {
  name: string;
  /** config.txt filters that match the board ([all] and lines outside a section always do). */
  filters: string[];
  /** The section of config.txt written for it (image/layers/arm64.overlay/etc/default/raspi-firmware-custom). */
  section: string;
  /** Device trees the firmware hands on (mainline names: config.txt's upstream_kernel=1). */
  dtbs: string[];
  /** Firmware files its boot loads from the card, and their cut-down variants (gpu_mem=16). */
  firmware: string[];
  cutDownFirmware: string[];
  /** The SD card it boots from: in the initramfs (or built in), and driven by U-Boot. */
  sd: Device;
  /** What else the box uses: in the root filesystem's module tree (or built in). */
  devices: Device[];
}

const pi3Firmware = { firmware: ['bootcode.bin', 'start.elf', 'fixup.dat'], cutDownFirmware: ['start_cd.elf', 'fixup_cd.dat'] };
const pi4Firmware = { firmware: ['start4.elf', 'fixup4.dat'], cutDownFirmware: ['start4cd.elf', 'fixup4cd.dat'] };
// BCM2837's SD card slot is its SD host controller; its Arasan SDHCI drives the Wi-Fi's SDIO.
const bcm2837Sd: Device = { what: 'SD card (BCM2835 SD host)', compatible: ['brcm,bcm2835-sdhost'], modules: ['bcm2835'] };
const bcm2837Wifi: Device = { what: 'Wi-Fi (CYW43xxx on SDIO)', compatible: ['brcm,bcm2835-sdhci'], modules: ['sdhci_iproc', 'brcmfmac'] };
const dwc2: Device = { what: 'USB (DWC2 OTG controller)', compatible: ['brcm,bcm2835-usb'], modules: ['dwc2'] };
const bcm2711Sd: Device = { what: 'SD card (EMMC2, its power a fixed regulator)', compatible: ['brcm,bcm2711-emmc2'], modules: ['sdhci_iproc', 'sdhci_pltfm', 'fixed'] };
const genet: Device = { what: 'Ethernet (GENET v5, BCM54213PE PHY)', compatible: ['brcm,bcm2711-genet-v5'], modules: ['genet', 'broadcom'] };
const vl805: Device = { what: 'USB (VL805 xHCI behind PCIe, its firmware loaded through the firmware reset)', compatible: ['brcm,bcm2711-pcie'], modules: ['pcie_brcmstb', 'xhci_pci', 'reset_raspberrypi'] };
const bcm2711Wifi: Device = { what: 'Wi-Fi (CYW43455 on SDIO)', compatible: ['brcm,bcm2711-emmc2', 'brcm,bcm2835-sdhci'], modules: ['sdhci_iproc', 'brcmfmac'] };

export const boards: Board[] = [
  {
    name: 'Raspberry Pi 3 Model B', filters: ['pi3'], section: 'pi3', dtbs: ['bcm2837-rpi-3-b.dtb'], ...pi3Firmware,
    sd: bcm2837Sd,
    devices: [dwc2, { what: 'Ethernet (LAN9514 on USB)', modules: ['smsc95xx'] }, bcm2837Wifi],
  },
  {
    name: 'Raspberry Pi 3 Model B+', filters: ['pi3'], section: 'pi3', dtbs: ['bcm2837-rpi-3-b-plus.dtb'], ...pi3Firmware,
    sd: bcm2837Sd,
    devices: [dwc2, { what: 'Ethernet (LAN7515 on USB)', modules: ['lan78xx'] }, bcm2837Wifi],
  },
  {
    name: 'Raspberry Pi Zero 2 W', filters: ['pi0', 'pi02'], section: 'pi02', dtbs: ['bcm2837-rpi-zero-2-w.dtb'], ...pi3Firmware,
    sd: bcm2837Sd,
    devices: [dwc2, bcm2837Wifi],
  },
  {
    name: 'Raspberry Pi 4 Model B', filters: ['pi4'], section: 'pi4', dtbs: ['bcm2711-rpi-4-b.dtb'], ...pi4Firmware,
    sd: bcm2711Sd, devices: [genet, vl805, bcm2711Wifi],
  },
  {
    name: 'Raspberry Pi 400', filters: ['pi4', 'pi400'], section: 'pi4', dtbs: ['bcm2711-rpi-400.dtb'], ...pi4Firmware,
    sd: bcm2711Sd, devices: [genet, vl805, bcm2711Wifi],
  },
  {
    name: 'Compute Module 4 (on its IO board)', filters: ['pi4', 'cm4'], section: 'pi4', dtbs: ['bcm2711-rpi-cm4-io.dtb'], ...pi4Firmware,
    // The IO board's USB 2 hub is on the SoC's own OTG controller; its PCIe goes to the slot.
    sd: bcm2711Sd, devices: [genet, { ...dwc2, compatible: ['brcm,bcm2835-usb'] }],
  },
  {
    name: 'Raspberry Pi 5', filters: ['pi5'], section: 'pi5',
    // C1 stepping, and the D0 stepping (2 GB and 16 GB boards, later others) with its own pin controllers.
    dtbs: ['bcm2712-rpi-5-b.dtb', 'bcm2712-d-rpi-5-b.dtb'],
    firmware: [], cutDownFirmware: [],
    // The SD slot's power and 1.8/3.3 V switch are GPIO regulators on the always-on GPIO block,
    // whose pins the BCM2712 pin controller muxes: the SD controller waits for all of them.
    sd: {
      what: 'SD card (BCM2712 SDHCI, GPIO regulators)',
      compatible: ['brcm,bcm2712-sdhci'],
      modules: ['sdhci_brcmstb', 'sdhci_pltfm', 'fixed', 'gpio_regulator', 'gpio_brcmstb', 'pinctrl_brcmstb_bcm2712'],
    },
    devices: [
      { what: 'SD card power (GPIO regulator)', compatible: ['regulator-gpio'], modules: ['gpio_regulator'] },
      { what: 'always-on GPIO block', compatible: ['brcm,brcmstb-gpio'], modules: ['gpio_brcmstb'] },
      { what: 'pin controller', compatible: ['brcm,bcm2712c0-pinctrl', 'brcm,bcm2712d0-pinctrl'], modules: ['pinctrl_brcmstb_bcm2712'] },
      // RP1, the I/O chip behind the BCM2712's third PCIe port (its MSI controller: the MIP).
      { what: 'RP1 (PCIe, MSI)', compatible: ['brcm,bcm2712-pcie'], modules: ['pcie_brcmstb', 'irq_bcm2712_mip', 'rp1_pci'] },
      { what: 'RP1 clocks', compatible: ['raspberrypi,rp1-clocks'], modules: ['clk_rp1'] },
      { what: 'RP1 pins (Ethernet PHY reset, USB power)', compatible: ['raspberrypi,rp1-gpio'], modules: ['pinctrl_rp1'] },
      { what: 'Ethernet (RP1 GEM, BCM54213PE PHY)', compatible: ['raspberrypi,rp1-gem'], modules: ['macb', 'broadcom'] },
      { what: 'USB (RP1 DWC3 xHCI)', compatible: ['snps,dwc3'], modules: ['dwc3', 'xhci_plat_hcd'] },
    ],
  },
];
