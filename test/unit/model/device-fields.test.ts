// The device record's one field table (model/device-fields.ts) against what is built from it and
// what it must match: the devices table the migrations build (migrations stay literal SQL, so this
// is where the two meet), the store's row reader and writer, the API's Device, the saved list and
// the backup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore } from '../../../src/store/devices.js';
import { COLUMNS, LIST_COLUMNS } from '../../../src/store/device-rows.js';
import { DEVICE_BACKUP_FIELDS, DEVICE_FIELDS, DEVICE_RECORD, columnOf, type DeviceField } from '../../../src/model/device-fields.js';
import type { Device } from '../../../src/model/device.js';
import { SAVED_ENTRY_FIELDS, serialize } from '../../../src/model/serialize.js';
import { printerInfoOf, deviceJson } from '../../../src/model/views.js';
import { savedListBody } from '../../../src/api/saved-list.js';

const RECORD: readonly DeviceField[] = DEVICE_RECORD;

function withStore(fn: (store: DeviceStore, db: ReturnType<typeof openDatabase>) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-fields-'));
  const db = openDatabase(join(dir, 'f.db'));
  try {
    fn(new DeviceStore(db), db);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// How each kind is stored (store/device-rows.ts): the column type the migrations must have given it.
const COLUMN_TYPE: Record<DeviceField['kind'], string> = {
  string: 'TEXT', int: 'INTEGER', time: 'INTEGER', bool: 'INTEGER', array: 'TEXT', object: 'TEXT',
};

test('the field table names every column of the devices table the migrations build, with its type', () => {
  withStore((_store, db) => {
    const schema = db.prepare('SELECT name, type FROM pragma_table_info(?)').all('devices') as { name: string; type: string }[];
    const fromTable = RECORD.map((f) => ({ name: columnOf(f), type: COLUMN_TYPE[f.kind] }));
    // Beside the record: its list entry's pieces and the build that made them (device-rows.ts).
    fromTable.push(...LIST_COLUMNS.map((name) => ({ name, type: name === 'list_entry' ? 'BLOB' : 'INTEGER' })));
    const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    assert.deepEqual([...fromTable].sort(byName), [...schema].sort(byName));
    // Booleans are NOT NULL DEFAULT 0 (the row reader relies on it: it leaves one out only when the
    // query did not select it).
    const notNull = new Set((db.prepare('SELECT name FROM pragma_table_info(?) WHERE "notnull"').pluck().all('devices')) as string[]);
    for (const f of RECORD.filter((x) => x.kind === 'bool')) assert.ok(notNull.has(columnOf(f)), `${f.name} NOT NULL`);
    assert.deepEqual(COLUMNS, RECORD.map(columnOf));
  });
});

const FULL: Device = {
  serial: 'F-1', ip: '10.0.0.1', manufacturer: 'Acme', model: 'M', hostname: 'h', firmware: 'fw', mac_address: 'aa:bb',
  subnet_mask: '255.0.0.0', gateway: '10.0.0.254', consumables: ['K'], status_messages: ['Ready'],
  last_seen: 3_000, created_at: 1_000, first_seen: 2_000, discovery_method: 'snmp', asset_number: 'A1', location: 'L',
  description: 'D', web_ui_url: 'https://10.0.0.1/', raw_data: { a: [1, { b: null }] }, device_type: 'network',
  source_type: 'snmp', port_name: 'p', driver_name: 'd', spooler_status: 's', is_usb: true, is_default: true,
  is_shared: true, usb_webui_available: true, initial_page_count: 12, dns_servers: ['1.1.1.1'], dhcp_server: '10.0.0.2',
  is_saved: true, visible: false, walk_filename: 'w', last_scan_id: 9007199254740991,
  locked_fields: [{ field: 'location', locked_at: '2026-01-01T00:00:00Z' }], trust: { neighbour_mac: 'aa:bb:cc:00:00:01', snmp_engine_id: '80001f8880' },
  printer_info: { ip: '10.0.0.1', meters: { x: 1 } },
};

test('the Device JSON is the record without printer_info; the backup line carries the whole record; both show trust inside raw_data', () => {
  assert.deepEqual(DEVICE_FIELDS.map((f) => f.name), RECORD.filter((f) => f.name !== 'printer_info' && f.name !== 'trust').map((f) => f.name));
  assert.deepEqual(DEVICE_BACKUP_FIELDS.map((f) => f.name), RECORD.filter((f) => f.name !== 'trust').map((f) => f.name));
  assert.deepEqual(deviceJson(FULL).raw_data, { ...FULL.raw_data, ...FULL.trust }, 'the trust state is served inside raw_data');
});

test('a record goes through the devices table unchanged: every field, and no field it did not have', () => {
  withStore((store) => {
    assert.deepEqual(
      Object.keys(FULL).sort(), RECORD.map((f) => f.name).sort(), 'FULL sets every field of the table',
    );
    store.put(FULL);
    assert.deepEqual(store.get('F-1'), FULL);
    const bare: Device = {
      serial: 'B-1', ip: '10.0.0.2', last_seen: 5, created_at: 5, first_seen: 5, device_type: 'network', source_type: 'import',
      is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: false, visible: true,
    };
    store.put(bare);
    const got = store.get('B-1')!;
    assert.deepEqual(got, bare);
    assert.deepEqual(Object.keys(got).sort(), Object.keys(bare).sort(), 'absent fields stay absent, not undefined');
  });
});

test('eachSaved reads only the fields asked for (and last_seen), of saved devices, in serial order', () => {
  withStore((store) => {
    store.put({ ...FULL, serial: 'F-2' });
    store.put(FULL);
    store.put({ ...FULL, serial: 'F-0', is_saved: false });
    const got = [...store.eachSaved(['serial', 'is_usb', 'raw_data', 'location'])];
    assert.deepEqual(got, [
      { serial: 'F-1', last_seen: 3_000, is_usb: true, raw_data: FULL.raw_data, location: 'L' },
      { serial: 'F-2', last_seen: 3_000, is_usb: true, raw_data: FULL.raw_data, location: 'L' },
    ]);
  });
});

test('/devices/list is the contract entry (2.1) of each whole saved record, from its stored pieces or, where they are stale, from the record', () => {
  withStore((store, db) => {
    const bare: Device = {
      serial: 'B-1', ip: '10.0.0.2', last_seen: 5, created_at: 5, first_seen: 5, device_type: 'network', source_type: 'import',
      is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
    };
    const other = { ...FULL, serial: 'F-3', location: 'Büro ☃ "3"', printer_info: { ...FULL.printer_info, last_seen: 'stored, not current' } };
    store.put(FULL);
    store.put(bare);
    store.put(other);
    store.put({ ...FULL, serial: 'F-0', is_saved: false });
    // The entry as the generic serializer makes it from the full record.
    const entry = (d: Device) => {
      const info = printerInfoOf(d);
      return serialize(SAVED_ENTRY_FIELDS, { ...d, path: `${d.serial}.json`, printer_info: info, info });
    };
    const listed = () => Buffer.concat(savedListBody(store)).toString('utf8');
    const expected = () => JSON.stringify(store.listSaved().map(entry)) + '\n';
    assert.equal(listed(), expected());
    assert.equal((JSON.parse(listed()) as unknown[]).length, 3);
    // A newer reading moves last_seen (device_latest), not the stored pieces: the list has it.
    db.prepare('INSERT INTO device_latest (serial, ts, raw_id) VALUES (?, ?, 0)').run('B-1', 86_400_000);
    assert.match(listed(), /"last_seen":"1970-01-02T00:00:00Z"/);
    assert.equal(listed(), expected());
    // Pieces another build made, or none (rows from before migration 14): the record is listed.
    db.prepare("UPDATE devices SET list_made_by = list_made_by + 1, list_entry = CAST('{\"x\":' AS BLOB) WHERE serial = 'F-1'").run();
    db.prepare("UPDATE devices SET list_entry = NULL, list_head_bytes = NULL, list_tail_bytes = NULL, list_made_by = NULL WHERE serial = 'F-3'").run();
    assert.equal(listed(), expected());
  });
});

test('a polling round\'s write keeps the stored list entry current: what the printer reports changes it, a reading alone moves last_seen', () => {
  withStore((store) => {
    store.put(FULL);
    const listed = () => JSON.parse(Buffer.concat(savedListBody(store)).toString('utf8')) as { printer_info: Record<string, unknown> }[];
    const read = (device: Device, ts: number) => store.recordReadings([{ device, snapshot: { serial: device.serial, ts, page_count: 100 } }]);
    // Only the meters and last_seen: the record is not rewritten, the list has the new last_seen.
    read({ ...FULL, last_seen: 4_000, printer_info: { ...FULL.printer_info, page_count: 99 } }, 4_000);
    assert.equal(listed()[0].printer_info.last_seen, '1970-01-01T00:00:04Z');
    assert.equal(listed()[0].printer_info.firmware, 'fw');
    // New firmware: the record and its list entry are rewritten, the person's location kept.
    read({ ...FULL, last_seen: 5_000, firmware: 'fw2', location: 'from the printer' }, 5_000);
    assert.equal(listed()[0].printer_info.firmware, 'fw2');
    assert.equal(listed()[0].printer_info.location, 'L');
    assert.equal(listed()[0].printer_info.last_seen, '1970-01-01T00:00:05Z');
  });
});
