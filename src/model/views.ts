// Turns stored records into the contract's resource shapes (2.1-2.6): what the API serves, the
// upload to the central server sends and the NDJSON backup writes. In the model, not the API, so
// that the store and the server link use the same views without depending on the API layer.
import type { Device, Snapshot } from './device.js';
import { DEVICE_FIELDS } from './device-fields.js';
import { METRICS_FIELDS, PRINTER_INFO_FIELDS, SAVED_ENTRY_FIELDS, serialize } from './serialize.js';
import { formatTime } from './time.js';
import { storableKey } from './inherited-keys.js';
import { trustInRawData } from './trust.js';

export function deviceJson(d: Device): Record<string, unknown> {
  return serialize(DEVICE_FIELDS, trustInRawData(d) as unknown as Record<string, unknown>);
}

// What printerInfoOf puts on top of the stored PrinterInfo, when the record has it.
const INFO_IDENTITY = ['manufacturer', 'model', 'hostname', 'firmware', 'mac_address', 'location', 'web_ui_url', 'subnet_mask', 'gateway'] as const;
type InfoSource = Pick<Device, 'printer_info' | 'ip' | 'serial' | 'last_seen' | (typeof INFO_IDENTITY)[number]> & Partial<Pick<Device, 'status_messages' | 'raw_data' | 'trust'>>;

/** The device's stored PrinterInfo with the record's own identity and person-set fields on top. */
export function printerInfoOf(d: InfoSource, latest?: Snapshot): Record<string, unknown> {
  const info = infoSource(d);
  info.last_seen = formatTime(d.last_seen);
  if (latest) {
    if (latest.page_count !== undefined) info.page_count = latest.page_count;
    const levels = integerLevels(latest.toner_levels);
    if (levels) info.toner_levels = levels;
  }
  return serialize(PRINTER_INFO_FIELDS, info);
}

/** What a PrinterInfo is made from: the stored one, with the record's identity on top (all but last_seen). */
function infoSource(d: Omit<InfoSource, 'last_seen'>): Record<string, unknown> {
  const info: Record<string, unknown> = { learned_oids: {}, ...(d.printer_info ?? {}), ip: d.ip, serial: d.serial };
  for (const k of INFO_IDENTITY) {
    if (d[k]) info[k] = d[k];
  }
  // The record's own status lines (not answering, a pending move, a goodbye) over the last read's.
  if (d.status_messages?.length) info.status_messages = d.status_messages;
  const raw = d.raw_data ?? {};
  if (typeof raw.not_answering_since === 'string') info.not_answering_since = raw.not_answering_since;
  const move = d.trust?.pending_move as { ip?: unknown; reason?: unknown; seen_at?: unknown } | undefined;
  if (move && typeof move.ip === 'string' && typeof move.reason === 'string' && typeof move.seen_at === 'string') info.pending_move = { ip: move.ip, reason: move.reason, seen_at: move.seen_at };
  return info;
}

// PrinterInfo.toner_levels is an integer map; snapshot levels may be anything JSON.
function integerLevels(levels: Record<string, unknown> | undefined): Record<string, number> | undefined {
  if (!levels) return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(levels)) {
    // A stored supply name from before renaming (`__proto__`) is shown by its renamed name. A
    // negative level (Printer-MIB's -2 unknown, -3 some remaining) is no measurement.
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[storableKey(k, 'supply')] = Math.round(v);
  }
  return Object.keys(out).length ? out : undefined;
}

// Contract 2.1's entry: serial, path, the PrinterInfo twice (printer_info and info), then fields
// of the record. The PrinterInfo's JSON text is made once and written in both places.
const ENTRY_RECORD_FIELDS = SAVED_ENTRY_FIELDS.slice(4);
// Their names, for the types (test/unit/model/device-fields.test.ts checks the entry against the whole record).
type EntryRecordField = 'asset_number' | 'location' | 'web_ui_url' | 'device_type' | 'source_type' | 'is_usb'
  | 'initial_page_count' | 'port_name' | 'driver_name' | 'is_default' | 'is_shared' | 'spooler_status';

type EntrySource = InfoSource & Pick<Device, EntryRecordField>;

/**
 * A saved entry's text in the pieces that do not change with the device's last_seen, which a
 * poll notes beside the record (device_latest) rather than in it:
 *   {"serial":S,"path":P,"printer_info":HEAD"LAST_SEEN"TAIL,"info":HEADLAST_SEEN"TAIL RECORD}
 * The store keeps them with the record (store/device-rows.ts), so /devices/list writes each
 * entry's bytes as they are instead of parsing and writing again every stored PrinterInfo
 * (docs/performance.md, a large site). savedEntryText is made from the same pieces, so the two
 * cannot differ. The PrinterInfo is cut at last_seen by serializing the fields before and after
 * it, in their order (both are never empty: ip and learned_oids are required).
 */
export interface SavedEntryParts {
  /** The PrinterInfo up to its last_seen's value: `{"ip":...,"last_seen":`. */
  head: string;
  /** The PrinterInfo after it: `,...}`. */
  tail: string;
  /** The record's fields, each with its leading comma, and the entry's closing brace. */
  record: string;
}

const SEEN_AT = PRINTER_INFO_FIELDS.findIndex((f) => f.name === 'last_seen');
const INFO_BEFORE_SEEN = PRINTER_INFO_FIELDS.slice(0, SEEN_AT);
const INFO_AFTER_SEEN = PRINTER_INFO_FIELDS.slice(SEEN_AT + 1);
const inner = (text: string) => text.slice(1, -1);

export function savedEntryParts(d: Omit<EntrySource, 'last_seen'>): SavedEntryParts {
  const info = infoSource(d);
  const before = inner(JSON.stringify(serialize(INFO_BEFORE_SEEN, info)));
  const after = inner(JSON.stringify(serialize(INFO_AFTER_SEEN, info)));
  const record = inner(JSON.stringify(serialize(ENTRY_RECORD_FIELDS, d as unknown as Record<string, unknown>)));
  return {
    head: `{${before}${before ? ',' : ''}"last_seen":`,
    tail: `${after ? ',' : ''}${after}}`,
    record: `${record ? ',' : ''}${record}}`,
  };
}

/** The entry's text before its PrinterInfo: `{"serial":S,"path":P,"printer_info":`. */
export const savedEntryOpening = (serial: string): string =>
  `{"serial":${JSON.stringify(serial)},"path":${JSON.stringify(`${serial}.json`)},"printer_info":`;

/** Between the two PrinterInfos. */
export const SAVED_ENTRY_INFO = ',"info":';

/** The JSON text of one saved entry (contract 2.1). */
export function savedEntryText(d: EntrySource): string {
  const { head, tail, record } = savedEntryParts(d);
  const info = head + JSON.stringify(formatTime(d.last_seen)) + tail;
  return savedEntryOpening(d.serial) + info + SAVED_ENTRY_INFO + info + record;
}

/**
 * The counters of a snapshot as its JSON names them (page_count, color_pages ... and the category
 * counters), without its id, time, levels or tier: what a device's upload carries of its latest reading.
 */
export function snapshotCounters(s: Snapshot | undefined): Record<string, number> {
  if (!s) return {};
  const { id: _i, serial: _s, timestamp: _t, toner_levels: _l, paper_trays: _p, tier: _r, ...counters } = snapshotJson(s);
  return counters as Record<string, number>;
}

/** A snapshot's JSON: its `extra` counters (the category counters) served beside the others. */
export function snapshotJson(s: Snapshot): Record<string, unknown> {
  return serialize(METRICS_FIELDS, (s.extra ? { ...s.extra, ...s } : s) as unknown as Record<string, unknown>);
}
