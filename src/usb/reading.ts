// A USB printer's report as a device record and a raw snapshot, the way a scan's answer becomes
// one for a network printer. The serial rule (docs/decisions/0007-device-identity.md): the Device
// ID's serial, else the USB iSerialNumber, else USB-<vid>:<pid>-<port path>.
import type { Device, Snapshot } from '../model/device.js';
import { foldReadFields } from '../model/record-fold.js';
import { ippCounters } from '../ipp/observation.js';
import { ippSupplies } from '../ipp/supplies.js';
import { portStatusMessages } from './port-status.js';
import { pjlStatusMessages } from './pjl.js';
import type { UsbPrinterReport } from './probe.js';

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

export function usbSerial(r: UsbPrinterReport): string {
  return r.deviceId?.serial || r.serialNumber || `USB-${hex4(r.vendorId)}:${hex4(r.productId)}-${r.portPath}`;
}

export function portName(portPath: string): string {
  return `usb:${portPath}`;
}

/** Status lines: port status, the PJL panel, IPP's state reasons, and why meters were not read. */
export function statusMessages(r: UsbPrinterReport): string[] {
  const out: string[] = [];
  if (r.portStatus) out.push(...portStatusMessages(r.portStatus));
  if (r.pjl) out.push(...pjlStatusMessages(r.pjl));
  for (const reason of r.ipp?.stateReasons ?? []) if (reason !== 'none') out.push(reason);
  if (r.busy) out.push(`busy: ${r.busy}`);
  return [...new Set(out)];
}

/** The counters a poll stores: IPP's (over USB), else PJL's total (PJL has no category counters). */
function meters(r: UsbPrinterReport): Pick<Snapshot, 'page_count' | 'color_pages' | 'mono_pages' | 'extra'> {
  const page_count = r.ipp?.pageCount ?? r.pjl?.pageCount;
  const extra = r.ipp ? ippCounters(r.ipp) : undefined;
  return {
    ...(page_count !== undefined ? { page_count } : {}),
    ...(r.ipp?.colorPages !== undefined ? { color_pages: r.ipp.colorPages } : {}),
    ...(r.ipp?.monoPages !== undefined ? { mono_pages: r.ipp.monoPages } : {}),
    ...(extra ? { extra } : {}),
  };
}

/**
 * The record after this report: `existing` (found by serial, so a printer moved to another port
 * keeps its record) with what the printer said. What a person set is kept
 * (docs/decisions/0008-person-fields.md).
 */
export function usbDevice(existing: Device | undefined, r: UsbPrinterReport, now: number): Device {
  const serial = usbSerial(r);
  const supplies = r.ipp ? ippSupplies(r.ipp) : undefined;
  const m = meters(r);
  const status = statusMessages(r);
  const read: Partial<Device> = {
    manufacturer: r.deviceId?.manufacturer ?? r.manufacturerName,
    model: r.deviceId?.model ?? r.ipp?.makeAndModel ?? r.productName,
    firmware: r.ipp?.firmware,
    consumables: supplies?.consumables,
    status_messages: status,
    port_name: portName(r.portPath),
    usb_webui_available: r.ippUsb,
  };
  const d: Device = existing
    ? { ...existing }
    : { serial, ip: '', last_seen: now, created_at: now, first_seen: now, device_type: 'usb', source_type: 'usb', is_usb: true, is_default: false, is_shared: false, usb_webui_available: false, is_saved: false, visible: true };
  foldReadFields(d, read);
  Object.assign(d, { last_seen: now, discovery_method: 'usb', device_type: 'usb', source_type: 'usb', is_usb: true });
  d.raw_data = {
    ...(existing?.raw_data ?? {}),
    usb: {
      vendor_id: hex4(r.vendorId),
      product_id: hex4(r.productId),
      ...(r.deviceId ? { device_id: r.deviceId.fields, command_set: r.deviceId.commandSet ?? [] } : {}),
      ...(r.portStatus ? { port_status: r.portStatus } : {}),
      ...(r.pjl ? { pjl: r.pjl } : {}),
      ...(r.ipp ? { ipp_state: r.ipp.state, ipp_uuid: r.ipp.uuid } : {}),
    },
  };
  delete (d.raw_data as Record<string, unknown>).unplugged_at;
  d.printer_info = {
    ip: '',
    manufacturer: d.manufacturer,
    model: d.model,
    serial,
    last_seen: new Date(now).toISOString(),
    ...(m.page_count !== undefined ? { page_count: m.page_count } : {}),
    ...(m.color_pages !== undefined ? { color_impressions: m.color_pages } : {}),
    ...(m.mono_pages !== undefined ? { mono_impressions: m.mono_pages } : {}),
    ...(supplies ? { consumables: supplies.consumables, toner_levels: supplies.levels } : {}),
    ...(supplies && Object.keys(supplies.partNumbers).length ? { supply_part_numbers: supplies.partNumbers } : {}),
    ...(supplies && Object.keys(supplies.types).length ? { supply_types: supplies.types } : {}),
    ...(d.firmware ? { firmware: d.firmware } : {}),
    status_messages: status,
    learned_oids: {},
  };
  return d;
}

/** The raw snapshot of a report (a printer that gave no meter still was seen then: last_seen). */
export function usbSnapshot(r: UsbPrinterReport, now: number): Omit<Snapshot, 'id'> {
  return { serial: usbSerial(r), ts: now, ...meters(r), toner_levels: (r.ipp && ippSupplies(r.ipp)?.levels) || {} };
}

/** The status line of a USB printer that is not plugged in (in any port). */
export const UNPLUGGED = 'offline: unplugged';

/** An unplugged printer: kept, said to be unplugged, last_seen untouched. */
export function markUnplugged(d: Device, now: number): Device {
  const others = (d.status_messages ?? []).filter((m) => m !== UNPLUGGED);
  return { ...d, status_messages: [UNPLUGGED, ...others].slice(0, 32), raw_data: { ...(d.raw_data ?? {}), unplugged_at: new Date(now).toISOString() } };
}
