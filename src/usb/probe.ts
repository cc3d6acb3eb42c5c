// Reads one USB printer: its identity (descriptors, IEEE 1284 Device ID), port status, and its
// meters in what it speaks (PJL on a bidirectional interface, IPP on an IPP-over-USB interface).
//
// A printer that is printing is not disturbed: the agent claims an interface only when nobody
// holds it, and never detaches a kernel driver (usblp, if it is loaded) nor another program (CUPS's
// usb backend, ipp-usb). Such a printer is reported busy and read again at the next poll; its
// Device ID still comes from usblp's sysfs copy when usblp holds it.
import { readFileSync } from 'node:fs';
import type { DeviceId } from '../snmp/parse/device-id.js';
import type { UsbConfiguration } from 'usb/index.js';
import type { UsbDevice } from './native.js';
import { DEVICE_ID_MAX, decodeDeviceIdReply } from './device-id.js';
import { decodePortStatus, type PortStatus } from './port-status.js';
import { readPjl, type PjlReading } from './pjl.js';
import { readIppPrinter } from './ipp-over-usb.js';
import type { IppPrinterState } from '../ipp/codec.js';
import { bulkPipe } from './usb-pipe.js';
import { errorText } from '../shared/error-text.js';

export const PRINTER_CLASS = 7;
/** bInterfaceProtocol of a printer interface: 1 unidirectional, 2 bidirectional, 4 IPP over USB. */
export const IPP_USB_PROTOCOL = 4;

export interface ProbeOptions {
  /** Each control request and each protocol exchange. */
  timeoutMs: number;
  /** Identity and port status only (what a plug needs at once), or the meters as well. */
  meters: boolean;
  /** sysfs, for usblp's copy of the Device ID (tests point it elsewhere). */
  sysfs?: string;
}

export interface UsbPrinterReport {
  /** The sysfs port path ("1-1.2"): which socket of which hub. */
  portPath: string;
  vendorId: number;
  productId: number;
  manufacturerName?: string;
  productName?: string;
  serialNumber?: string;
  deviceId?: DeviceId;
  ippUsb: boolean;
  portStatus?: PortStatus;
  pjl?: PjlReading;
  ipp?: IppPrinterState;
  /** Why meters were not read now (another holder); the reading is retried shortly after a plug (plug-retry.ts) and at each poll. */
  busy?: string;
  /** What went wrong reading it (logged; the rest of the report stands). */
  problems: string[];
}

interface PrinterAlt {
  interfaceNumber: number;
  alternateSetting: number;
  protocol: number;
  bulkIn?: number;
  bulkOut?: number;
}

/** A printer by its descriptors: some configuration has a printer-class interface (set or not). */
export function isPrinter(device: UsbDevice): boolean {
  try {
    const configs = device.configurations as unknown as UsbConfiguration[];
    return configs.some((c) => c.interfaces.some((i) => i.alternates.some((a) => a.interfaceClass === PRINTER_CLASS)));
  } catch {
    return false;
  }
}

/**
 * The printer-class interfaces of the active configuration (any alternate setting); empty for
 * anything else, and for a printer whose configuration the kernel has not set yet.
 */
export function printerInterfaces(device: UsbDevice): PrinterAlt[] {
  let config: UsbConfiguration | undefined;
  try {
    config = device.configuration as unknown as UsbConfiguration;
  } catch {
    return []; // not configured
  }
  const out: PrinterAlt[] = [];
  for (const iface of config?.interfaces ?? []) {
    const alts = iface.alternates.filter((a) => a.interfaceClass === PRINTER_CLASS);
    // Bidirectional before unidirectional when an interface offers both.
    const alt = alts.find((a) => a.interfaceProtocol === 2) ?? alts[0];
    if (!alt) continue;
    const ep = (dir: string) => alt.endpoints.find((e) => e.type === 'bulk' && e.direction === dir)?.endpointNumber;
    out.push({ interfaceNumber: iface.interfaceNumber, alternateSetting: alt.alternateSetting, protocol: alt.interfaceProtocol, bulkIn: ep('in'), bulkOut: ep('out') });
  }
  return out;
}

/**
 * The sysfs port path ("1-1.2": bus 1, port 1 of the root hub, port 2 of the hub behind it): the
 * socket, which stays the same when a printer is plugged in again. The package gives the bus
 * number zero-padded ("001") and the ports from the root hub down.
 */
export function portPathOf(device: Pick<UsbDevice, 'bus' | 'ports'>): string {
  const bus = /^\d+$/.test(device.bus) ? String(Number(device.bus)) : device.bus;
  return device.ports?.length ? `${bus}-${device.ports.join('.')}` : bus;
}

const message = (err: unknown) => (errorText(err));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens the device; udev may still be giving the node to the agent's group, so EACCES is retried briefly. */
async function openDevice(device: UsbDevice): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await device.open();
    } catch (err) {
      if (attempt >= 10 || !/permission|access/i.test(message(err))) throw err;
      await sleep(100);
    }
  }
}

async function getDeviceId(device: UsbDevice, alt: PrinterAlt, timeoutMs: number): Promise<DeviceId> {
  const reply = await device.nativeControlTransferIn(
    // wIndex: interface in the high byte, alternate setting in the low byte (class spec 4.2.1).
    { requestType: 'class', recipient: 'interface', request: 0, value: 0, index: (alt.interfaceNumber << 8) | alt.alternateSetting },
    timeoutMs,
    DEVICE_ID_MAX,
  );
  if (reply === null) throw new Error('GET_DEVICE_ID stalled');
  const decoded = decodeDeviceIdReply(reply);
  if ('error' in decoded) throw new Error(decoded.error);
  return decoded.id;
}

async function getPortStatus(device: UsbDevice, alt: PrinterAlt, timeoutMs: number): Promise<PortStatus> {
  const reply = await device.nativeControlTransferIn(
    { requestType: 'class', recipient: 'interface', request: 1, value: 0, index: alt.interfaceNumber },
    timeoutMs,
    1,
  );
  if (reply === null || reply.length < 1) throw new Error('GET_PORT_STATUS stalled');
  return decodePortStatus(reply[0]!);
}

/** usblp's copy of the Device ID, when usblp holds the interface. */
function deviceIdFromUsblp(sysfs: string, portPath: string, config: number, alt: PrinterAlt): DeviceId | undefined {
  try {
    const text = readFileSync(`${sysfs}/bus/usb/devices/${portPath}:${config}.${alt.interfaceNumber}/ieee1284_id`, 'latin1');
    const decoded = decodeDeviceIdReply(Buffer.concat([Buffer.from([0, 0]), Buffer.from(text, 'latin1')]));
    return 'id' in decoded ? decoded.id : undefined;
  } catch {
    return undefined;
  }
}

/** Claims an interface if nobody holds it; false when someone does (never taken from them). */
async function claim(device: UsbDevice, alt: PrinterAlt): Promise<boolean> {
  try {
    await device.claimInterface(alt.interfaceNumber);
  } catch {
    return false;
  }
  if (alt.alternateSetting !== 0) await device.selectAlternateInterface(alt.interfaceNumber, alt.alternateSetting);
  return true;
}

export async function probePrinter(device: UsbDevice, opts: ProbeOptions): Promise<UsbPrinterReport> {
  const alts = printerInterfaces(device);
  const str = (get: () => string | null) => {
    try {
      return get()?.trim() || undefined;
    } catch {
      return undefined;
    }
  };
  const report: UsbPrinterReport = {
    portPath: portPathOf(device),
    vendorId: device.vendorId,
    productId: device.productId,
    manufacturerName: str(() => device.manufacturerName),
    productName: str(() => device.productName),
    serialNumber: str(() => device.serialNumber),
    ippUsb: alts.some((a) => a.protocol === IPP_USB_PROTOCOL),
    problems: [],
  };
  const classic = alts.find((a) => a.protocol !== IPP_USB_PROTOCOL);
  const ipp = alts.find((a) => a.protocol === IPP_USB_PROTOCOL);
  const main = classic ?? ipp;
  if (!main) return report;
  try {
    await openDevice(device);
  } catch (err) {
    report.problems.push(`open: ${message(err)}`);
    return report;
  }
  const claimed: number[] = [];
  try {
    const mainClaimed = await claim(device, main);
    if (mainClaimed) {
      claimed.push(main.interfaceNumber);
      try {
        report.deviceId = await getDeviceId(device, main, opts.timeoutMs);
      } catch (err) {
        report.problems.push(`Device ID: ${message(err)}`);
      }
      try {
        report.portStatus = await getPortStatus(device, main, opts.timeoutMs);
      } catch (err) {
        report.problems.push(`port status: ${message(err)}`);
      }
      const speaksPjl = report.deviceId?.commandSet?.some((c) => /^PJL$/i.test(c));
      if (opts.meters && main === classic && speaksPjl && main.bulkIn !== undefined && main.bulkOut !== undefined) {
        try {
          report.pjl = await readPjl(bulkPipe(device, main.bulkIn, main.bulkOut), opts.timeoutMs);
          if (!report.pjl) report.problems.push('PJL: no answer');
        } catch (err) {
          report.problems.push(`PJL: ${message(err)}`);
        }
      }
    } else {
      report.busy = `interface ${main.interfaceNumber} is held by another driver or program`;
      report.deviceId = deviceIdFromUsblp(opts.sysfs ?? '/sys', portPathOf(device), (device.configuration as unknown as UsbConfiguration).configurationValue, main);
    }
    if (opts.meters && ipp && ipp.bulkIn !== undefined && ipp.bulkOut !== undefined) {
      if (ipp === main ? mainClaimed : await claim(device, ipp)) {
        if (ipp !== main) claimed.push(ipp.interfaceNumber);
        try {
          report.ipp = await readIppPrinter(bulkPipe(device, ipp.bulkIn, ipp.bulkOut), { timeoutMs: opts.timeoutMs });
        } catch (err) {
          report.problems.push(`IPP: ${message(err)}`);
        }
      } else report.busy ??= `IPP-USB interface ${ipp.interfaceNumber} is held by another driver or program`;
    }
  } finally {
    for (const n of claimed) await device.releaseInterface(n).catch(() => undefined);
    await device.close().catch(() => undefined);
  }
  return report;
}
