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

/** The device's stored PrinterInfo with the record's own identity and person-set fields on top. */
export function printerInfoOf(d: Device, latest?: Snapshot): Record<string, unknown> {
  const info: Record<string, unknown> = {
    learned_oids: {},
    ...(d.printer_info ?? {}),
    ip: d.ip,
    serial: d.serial,
    last_seen: formatTime(d.last_seen),
  };
  for (const k of ['manufacturer', 'model', 'hostname', 'firmware', 'mac_address', 'location', 'web_ui_url', 'subnet_mask', 'gateway'] as const) {
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

export function savedEntryJson(d: Device): Record<string, unknown> {
  const info = printerInfoOf(d);
  return serialize(SAVED_ENTRY_FIELDS, {
    ...(d as unknown as Record<string, unknown>),
    path: `${d.serial}.json`,
    printer_info: info,
    info,
  });
}

/** `extra` (the other declared counters) is not a field: it stays in the store, for export. */
export function snapshotJson(s: Snapshot): Record<string, unknown> {
  return serialize(METRICS_FIELDS, s as unknown as Record<string, unknown>);
}
