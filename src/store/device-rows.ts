// The devices table's side of the device record, derived from its field table (model/device-fields.ts):
// the column list, the row reader and writer, and the upsert. Each field's kind fixes its codec:
// arrays and objects are JSON text, booleans 0/1, times epoch ms; the others are stored as they are.
import { DEVICE_RECORD, columnOf, type DeviceField } from '../model/device-fields.js';
import type { Device } from '../model/device.js';
import { savedEntryParts } from '../model/views.js';
import { versionInfo } from '../shared/version.js';
import { liftTrust } from '../model/trust.js';
import { createHash } from 'node:crypto';

type Row = Record<string, unknown>;

const FIELDS: readonly DeviceField[] = DEVICE_RECORD;

/** The devices table's columns, in the record's order. */
export const COLUMNS: readonly string[] = FIELDS.map(columnOf);

/**
 * Beside the record, not part of it (migration 14): its /devices/list entry's pieces (model/views.ts
 * savedEntryParts) as one run of bytes, head, tail and record (one value reads at half the cost of
 * three), the head's and the tail's lengths, and which build made them. Made whenever the record is written.
 * Derived data, so never backed up: a build that makes entries differently must not use another's,
 * and a row whose pieces another build made is listed from its record instead (DeviceStore.eachSavedEntry).
 */
export const LIST_COLUMNS = ['list_entry', 'list_head_bytes', 'list_tail_bytes', 'list_made_by'] as const;

/** The build that makes entries here: a number from its version, commit and build time. */
export const LIST_MADE_BY: number = (() => {
  const v = versionInfo();
  return createHash('sha256').update(`${v.version} ${v.git_commit} ${v.build_time}`).digest().readUIntBE(0, 6);
})();

const WRITTEN = [...COLUMNS, ...LIST_COLUMNS];

/** INSERT of a whole record (named parameters, one per column) that replaces a stored one. */
export const UPSERT_SQL = `INSERT INTO devices (${WRITTEN.join(', ')}) VALUES (${WRITTEN.map((c) => '@' + c).join(', ')})
       ON CONFLICT (serial) DO UPDATE SET ${WRITTEN.filter((c) => c !== 'serial').map((c) => `${c} = excluded.${c}`).join(', ')}`;

// Reader and writer are compiled from the table once, with each name written out, as
// model/serialize.ts does for JSON: a property read and write at a fixed name, which V8 caches,
// where a loop over the columns reads by a computed key and tests each column's codec per row
// (/devices/list reads 500 rows). The names are the table's own constants, quoted by JSON.stringify.
const q = (s: string) => JSON.stringify(s);

function readLine(f: DeviceField): string {
  const [col, name] = [q(columnOf(f)), q(f.name)];
  switch (f.kind) {
    // NOT NULL DEFAULT 0 columns: never NULL, and absent only from a row that did not select them
    case 'bool':
      return `v = row[${col}]; if (v !== undefined) d[${name}] = v === 1;`;
    case 'array':
    case 'object':
      return `v = row[${col}]; if (v !== null && v !== undefined) d[${name}] = JSON.parse(v);`;
    default:
      return `v = row[${col}]; if (v !== null && v !== undefined) d[${name}] = v;`;
  }
}

function writeLine(f: DeviceField): string {
  const [col, name] = [q(columnOf(f)), q(f.name)];
  const encoded = f.kind === 'array' || f.kind === 'object' ? 'JSON.stringify(v)' : f.kind === 'bool' ? '(v ? 1 : 0)' : 'v';
  return `v = d[${name}]; row[${col}] = v === undefined || v === null ? null : ${encoded};`;
}

// A device's last_seen is the later of its record's and its newest snapshot's: the devices query
// (store/devices.ts) reads that as `seen`, and it comes first in the record, as it always has.
const others = FIELDS.filter((f) => f.name !== 'last_seen');
const compile = (param: string, body: string[]) =>
  new Function(`return (${param}) => {\n ${body.join('\n ')}\n};`)();

const recordOf: (row: Row) => Device = compile('row', [
  'const d = { last_seen: row.seen ?? row.last_seen };', 'let v;', ...others.map(readLine), 'return d;',
]);

/**
 * The record of a devices row (a row of the devices query: `seen` is its last_seen). A row that
 * selected only some columns gives a record with only those fields. Trust state that a row still
 * keeps in raw_data (one changed by hand since migration 21 moved the others) is read as trust.
 */
export const fromRow = (row: Row): Device => liftTrust(recordOf(row));

const recordRow: (d: Device) => Row = compile('d', ['const row = {};', 'let v;', ...FIELDS.map(writeLine), 'return row;']);

/** The devices row of a record: every column, NULL where the record has no value, and its list entry's pieces. */
export function toRow(d: Device): Row {
  const row = recordRow(d);
  let parts;
  try {
    parts = savedEntryParts(d);
  } catch {
    // A record the entry cannot be made from (none is known) is still stored, and listed from itself.
    parts = undefined;
  }
  row.list_entry = parts ? Buffer.from(parts.head + parts.tail + parts.record) : null;
  row.list_head_bytes = parts ? Buffer.byteLength(parts.head) : null;
  row.list_tail_bytes = parts ? Buffer.byteLength(parts.tail) : null;
  row.list_made_by = parts ? LIST_MADE_BY : null;
  return row;
}
