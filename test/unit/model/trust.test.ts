// The device record's trust state (model/trust.ts): a column of its own since migration 21, which
// moves it out of raw_data; the API's Device and the backup line still show it inside raw_data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore } from '../../../src/store/devices.js';
import { deviceJson } from '../../../src/model/views.js';
import { counterFlagOf, liftTrust, pendingMoveOf, trustInRawData, withTrust } from '../../../src/model/trust.js';

const MOVE = {
  ip: '10.0.0.20', snmp: 'v2c', first_seen_at: '2026-11-28T10:00:00Z', seen_at: '2026-11-28T10:05:00Z', sightings: 2, saved_address_answers: false,
  checks: { neighbour_mac: 'unknown', reported_mac: 'match', engine_id: 'unknown', identity: 'match' }, reason: 'a reply with this serial came from 10.0.0.20',
};
const FLAG = { ip: '10.0.0.10', seen_at: '2026-11-28T09:00:00Z', page_count: 5, stored_page_count: 9, reading: { page_count: 5 } };

test('migration 21 moves the trust state out of raw_data into its column; other raw_data keys and other rows stay', () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-trust-'));
  const file = join(dir, 't.db');
  try {
    const old = openDatabase(file, { migrateTo: 20 });
    const insert = old.prepare(
      `INSERT INTO devices (serial, ip, last_seen, created_at, first_seen, device_type, source_type, is_saved, visible, raw_data)
       VALUES (?, '10.0.0.10', 1, 1, 1, 'network', 'snmp', 1, 1, ?)`,
    );
    insert.run('T1', JSON.stringify({ ipp: { port: 631 }, pending_move: MOVE, counter_flag: FLAG, neighbour_mac: 'aa:bb:cc:00:00:01', snmp_engine_id: '8000' }));
    insert.run('T2', JSON.stringify({ ipp: { port: 631 } }));
    insert.run('T3', 'not json');
    old.close();

    const db = openDatabase(file);
    const rows = db.prepare('SELECT serial, raw_data, trust FROM devices ORDER BY serial').all() as { serial: string; raw_data: string; trust: string | null }[];
    assert.deepEqual(JSON.parse(rows[0].raw_data), { ipp: { port: 631 } });
    assert.deepEqual(JSON.parse(rows[0].trust!), { pending_move: MOVE, counter_flag: FLAG, neighbour_mac: 'aa:bb:cc:00:00:01', snmp_engine_id: '8000' });
    assert.deepEqual([rows[1].raw_data, rows[1].trust], [JSON.stringify({ ipp: { port: 631 } }), null]);
    assert.deepEqual([rows[2].raw_data, rows[2].trust], ['not json', null]);

    const store = new DeviceStore(db);
    const d = store.get('T1')!;
    assert.equal(pendingMoveOf(d)?.ip, '10.0.0.20');
    assert.equal(counterFlagOf(d)?.page_count, 5);
    // What the API serves is what it served before the column.
    assert.deepEqual(deviceJson(d).raw_data, { ipp: { port: 631 }, pending_move: MOVE, counter_flag: FLAG, neighbour_mac: 'aa:bb:cc:00:00:01', snmp_engine_id: '8000' });
    // Cleared, it is gone from the column, and from what is served.
    store.put(withTrust(d, { pending_move: undefined, counter_flag: undefined, neighbour_mac: undefined, snmp_engine_id: undefined }));
    assert.equal((db.prepare("SELECT trust FROM devices WHERE serial = 'T1'").pluck().get() as string | null), null);
    assert.deepEqual(deviceJson(store.get('T1')!).raw_data, { ipp: { port: 631 } });
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the raw_data form and the record form turn into each other; raw_data\'s parts win (only a hand writes them there now)', () => {
  const base = { serial: 'S', raw_data: { ipp: { port: 631 } } };
  const record = { ...base, trust: { neighbour_mac: 'aa:bb:cc:00:00:01' } };
  const shown = trustInRawData(record);
  assert.deepEqual(shown, { serial: 'S', raw_data: { ipp: { port: 631 }, neighbour_mac: 'aa:bb:cc:00:00:01' } });
  assert.deepEqual(liftTrust(shown), record);
  assert.equal(liftTrust(base), base, 'nothing to lift: the same record');
  assert.deepEqual(liftTrust({ ...shown, trust: { neighbour_mac: 'old' } }).trust, { neighbour_mac: 'aa:bb:cc:00:00:01' });
});
