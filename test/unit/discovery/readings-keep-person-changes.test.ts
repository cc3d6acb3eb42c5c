// A polling round reads each record, awaits the printer, and stores what it read after the round:
// a change a person made meanwhile (location, saved, hidden, a locked field) must survive, and a
// device deleted meanwhile must not come back (the kill -9 soak found the lost update).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore } from '../../../src/store/devices.js';
import { mergeObservation } from '../../../src/discovery/merge.js';
import type { Device } from '../../../src/model/device.js';

function setUp() {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-person-'));
  const db = openDatabase(join(dir, 'printbox.db'));
  return { db, devices: new DeviceStore(db), done: () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
}
const observe = (copy: Device | undefined, now: number) =>
  mergeObservation(copy, { serial: 'P1', ip: '127.0.0.9', now, fields: { model: 'M2', firmware: 'F2', location: 'sysLocation' }, printerInfo: {} });
const count = (db: ReturnType<typeof openDatabase>) => db.prepare('SELECT count(*) FROM metrics_raw').pluck().get() as number;

test('what a person changed while a reading was taken is kept; what the printer said is stored', () => {
  const { db, devices, done } = setUp();
  try {
    devices.put(observe(undefined, 1000));
    const copy = devices.get('P1')!; // the round's copy, taken before it reads the printer
    // Meanwhile, a person: a location, an asset number, saved, hidden, and the model locked.
    devices.put({ ...copy, location: 'Reception', asset_number: 'A-7', is_saved: true, visible: false, model: 'Mine', locked_fields: [{ field: 'model', locked_at: 'x' }] });
    const [id] = devices.recordReadings([{ device: observe(copy, 2000), snapshot: { serial: 'P1', ts: 2000, page_count: 5 }, existed: true }]);
    assert.equal(typeof id, 'number');
    const now = devices.get('P1')!;
    assert.equal(now.location, 'Reception');
    assert.equal(now.asset_number, 'A-7');
    assert.equal(now.is_saved, true);
    assert.equal(now.visible, false);
    assert.equal(now.model, 'Mine', 'a field locked meanwhile keeps the value it was locked with');
    assert.equal(now.firmware, 'F2', 'what the printer said is stored');
  } finally {
    done();
  }
});

test('a device deleted while it was read stays deleted, and its reading is not stored; a new one is', () => {
  const { db, devices, done } = setUp();
  try {
    devices.put(observe(undefined, 1000));
    const copy = devices.get('P1')!;
    db.prepare('DELETE FROM devices WHERE serial = ?').run('P1'); // as POST /devices/delete
    const ids = devices.recordReadings([{ device: observe(copy, 2000), snapshot: { serial: 'P1', ts: 2000, page_count: 5 }, existed: true }]);
    assert.deepEqual(ids, [undefined]);
    assert.equal(devices.get('P1'), undefined);
    assert.equal(count(db), 0);
    // A scan's first reading of a printer (no record before it): stored.
    const [first] = devices.recordReadings([{ device: observe(undefined, 3000), snapshot: { serial: 'P1', ts: 3000, page_count: 6 }, existed: false }]);
    assert.equal(typeof first, 'number');
    assert.equal(devices.get('P1')?.location, 'sysLocation');
  } finally {
    done();
  }
});
