// Turns stored records into the contract's resource shapes (2.1-2.6): what the API serves, the
// upload to the central server sends and the NDJSON backup writes. In the model, not the API, so
// that the store and the server link use the same views without depending on the API layer.
import type { Device, Snapshot } from './device.js';
import { DEVICE_FIELDS } from './device-fields.js';
import { METRICS_FIELDS, PRINTER_INFO_FIELDS, SAVED_ENTRY_FIELDS, serialize } from './serialize.js';
import { formatTime } from './time.js';

export function deviceJson(d: Device): Record<string, unknown> {
  return serialize(DEVICE_FIELDS, d as unknown as Record<string, unknown>);
}

// What printerInfoOf puts on top of the stored PrinterInfo, when the record has it.
const INFO_IDENTITY = ['manufacturer', 'model', 'hostname', 'firmware', 'mac_address', 'location', 'web_ui_url', 'subnet_mask', 'gateway'] as const;
type InfoSource = Pick<Device, 'printer_info' | 'ip' | 'serial' | 'last_seen' | (typeof INFO_IDENTITY)[number]>;

/** The device's stored PrinterInfo with the record's own identity and person-set fields on top. */
export function printerInfoOf(d: InfoSource, latest?: Snapshot): Record<string, unknown> {
  const info: Record<string, unknown> = {
    learned_oids: {},
    ...(d.printer_info ?? {}),
    ip: d.ip,
    serial: d.serial,
    last_seen: formatTime(d.last_seen),
  };
  for (const k of INFO_IDENTITY) {
    if (d[k]) info[k] = d[k];
  }
  if (latest) {
    if (latest.page_count !== undefined) info.page_count = latest.page_count;
    const levels = integerLevels(latest.toner_levels);
    if (levels) info.toner_levels = levels;
  }
  return serialize(PRINTER_INFO_FIELDS, info);
}

// PrinterInfo.toner_levels is an integer map; snapshot levels may be anything JSON.
function integerLevels(levels: Record<string, unknown> | undefined): Record<string, number> | undefined {
  if (!levels) return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(levels)) {
    if (typeof v === 'number' && Number.isFinite(v)) out[k] = Math.round(v);
  }
  return Object.keys(out).length ? out : undefined;
}

// Contract 2.1's entry: serial, path, the PrinterInfo twice (printer_info and info), then fields
// of the record. The PrinterInfo's JSON text is made once and written in both places.
const ENTRY_RECORD_FIELDS = SAVED_ENTRY_FIELDS.slice(4);
// Their names, for the types (test/unit/device-fields.test.ts checks the entry against the whole record).
type EntryRecordField = 'asset_number' | 'location' | 'web_ui_url' | 'device_type' | 'source_type' | 'is_usb'
  | 'initial_page_count' | 'port_name' | 'driver_name' | 'is_default' | 'is_shared' | 'spooler_status';

type EntrySource = InfoSource & Pick<Device, EntryRecordField>;

/** The record fields a saved entry is made of (DeviceStore.eachSaved reads only these). */
export const SAVED_ENTRY_SOURCE: readonly (keyof EntrySource)[] = [
  ...new Set<keyof EntrySource>(['printer_info', 'ip', 'serial', 'last_seen', ...INFO_IDENTITY, ...ENTRY_RECORD_FIELDS.map((f) => f.name as EntryRecordField)]),
];

/** The JSON text of one saved entry (contract 2.1). */
export function savedEntryText(d: EntrySource): string {
  const info = JSON.stringify(printerInfoOf(d));
  const record = JSON.stringify(serialize(ENTRY_RECORD_FIELDS, d as unknown as Record<string, unknown>));
  const head = `{"serial":${JSON.stringify(d.serial)},"path":${JSON.stringify(`${d.serial}.json`)},"printer_info":${info},"info":${info}`;
  return record === '{}' ? `${head}}` : `${head},${record.slice(1)}`;
}

/** `extra` (the other declared counters) is not a field: it stays in the store, for export. */
export function snapshotJson(s: Snapshot): Record<string, unknown> {
  return serialize(METRICS_FIELDS, s as unknown as Record<string, unknown>);
}
