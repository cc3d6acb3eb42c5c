// The bounds on discovered records (src/discovery/record-caps.ts) through the one writer that
// creates records (record-writer.ts), on a real database and a simulated clock: at most 16 new
// identities per address in any hour, at most N unsaved records (the one seen longest ago deleted
// with its history, saved printers never), known printers never refused; and the store's lookups
// by printer-uuid, MAC and address are index seeks, not reads of every record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type DB } from '../../../src/store/db.js';
import { DeviceStore, type Reading } from '../../../src/store/devices.js';
import { MetricsStore } from '../../../src/store/metrics.js';
import { EventBus } from '../../../src/events/bus.js';
import { RecordWriter } from '../../../src/discovery/record-writer.js';
import { RecordCaps, RECORD_LIMITS, type RecordLimits } from '../../../src/discovery/record-caps.js';
import type { Device } from '../../../src/model/device.js';
import type { Logger } from '../../../src/log/logger.js';
import { simClock } from '../../kit/sim-clock.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const START = Date.parse('2026-11-28T10:00:00Z');

function harness(limits: Partial<RecordLimits> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-caps-'));
  const db = openDatabase(join(dir, 'c.db'));
  const devices = new DeviceStore(db);
  const clock = simClock(START);
  const warns: { msg: string; [k: string]: unknown }[] = [];
  const log = { warn: (o: object, msg: string) => warns.push({ ...o, msg }), info() {}, debug() {}, error() {} } as unknown as Logger;
  const events = new EventBus();
  const changes: { serial: string; change: string }[] = [];
  events.subscribe((name, data) => {
    const e = data as { serial: string; change: string };
    if (name === 'device_change') changes.push({ serial: e.serial, change: e.change });
  });
  const caps = new RecordCaps({ devices, log, now: clock.now, limits });
  const writer = new RecordWriter({ devices, events, log }, caps);
  const close = () => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  /** A reading of printer `serial` at `ip`, as a scan or an announced read stores it. */
  const read = (serial: string, ip: string, extra: Partial<Device> = {}) => {
    const now = clock.now();
    const device: Device = {
      serial, ip, last_seen: now, created_at: now, first_seen: now, device_type: 'network', source_type: 'ipp', is_usb: false,
      is_default: false, is_shared: false, usb_webui_available: false, is_saved: false, visible: true, printer_info: { page_count: 1 }, ...extra,
    };
    const r: Reading = { device, snapshot: { serial, ts: now, page_count: 1 }, existed: Boolean(devices.get(serial)) };
    return writer.store([r], 'test', () => (r.existed ? 'updated' : 'discovered'))[0];
  };
  return { db, devices, clock, warns, changes, caps, read, close };
}

test('an address makes at most 16 new records in any hour; known printers and other addresses are not refused', () => {
  const h = harness();
  try {
    assert.equal(RECORD_LIMITS.newPerAddressPerHour, 16);
    for (let i = 0; i < 16; i++) {
      assert.notEqual(h.read(`FLOOD-${i}`, '10.0.0.5'), undefined, `new identity ${i} stored`);
      h.clock.advance(MINUTE);
    }
    assert.equal(h.read('FLOOD-16', '10.0.0.5'), undefined, 'the 17th of the hour is refused');
    assert.equal(h.devices.get('FLOOD-16'), undefined, 'and not stored');
    assert.equal(h.read('FLOOD-17', '10.0.0.5'), undefined);
    // One line for both: refusals are logged at most once a minute.
    assert.equal(h.warns.filter((w) => /too many new printer records/.test(w.msg)).length, 1);
    // A printer already known at that address is still read and stored.
    assert.notEqual(h.read('FLOOD-3', '10.0.0.5'), undefined);
    // Another address is not held back by this one's flood.
    assert.notEqual(h.read('OTHER-1', '10.0.0.6'), undefined);
    assert.deepEqual(h.caps.status(), { limits: { unsaved: 2000, new_per_address_per_hour: 16 }, evicted: 0, refused: 2 });
    // The hour slides: 16 minutes after the first new record, one more fits (the window is an hour from each).
    h.clock.advance(HOUR - 16 * MINUTE);
    assert.notEqual(h.read('FLOOD-18', '10.0.0.5'), undefined, 'an hour after the first, one more');
    assert.equal(h.read('FLOOD-19', '10.0.0.5'), undefined, 'but only one: the second was a minute later');
    assert.equal(h.warns.filter((w) => /too many new printer records/.test(w.msg)).length, 2, 'logged again, more than a minute later');
    h.clock.advance(MINUTE);
    assert.notEqual(h.read('FLOOD-19', '10.0.0.5'), undefined, 'a minute later the second has left the hour');
    assert.equal(h.caps.status().refused, 3);
  } finally {
    h.close();
  }
});

test('over N unsaved records the one seen longest ago is deleted with its history; saved printers are never deleted nor counted', () => {
  const h = harness({ maxUnsaved: 5 });
  try {
    const metrics = new MetricsStore(h.db);
    // Saved printers, seen before every unsaved one.
    for (let i = 0; i < 3; i++) {
      h.read(`SAVED-${i}`, `10.0.1.${i + 1}`);
      assert.equal(h.devices.save(`SAVED-${i}`), true);
    }
    h.clock.advance(MINUTE);
    for (let i = 0; i < 5; i++) {
      h.read(`U-${i}`, `10.0.2.${i + 1}`);
      h.clock.advance(MINUTE);
    }
    // U-0 is read again: now U-1 is the one seen longest ago.
    h.read('U-0', '10.0.2.1', { printer_info: { page_count: 2 } });
    h.clock.advance(MINUTE);
    assert.equal(h.devices.countUnsaved(), 5);
    assert.ok(metrics.latestRaw('U-1'), 'U-1 has a reading');
    h.changes.length = 0;
    assert.notEqual(h.read('NEW-1', '10.0.3.1'), undefined, 'a new record over the cap is stored');
    assert.equal(h.devices.get('U-1'), undefined, 'the unsaved record seen longest ago is deleted');
    assert.equal(metrics.latestRaw('U-1'), undefined, 'with its history');
    assert.ok(h.changes.some((c) => c.serial === 'U-1' && c.change === 'deleted'), 'and its deletion is an event');
    assert.ok(h.changes.some((c) => c.serial === 'NEW-1' && c.change === 'discovered'));
    assert.ok(h.devices.get('U-0'), 'seen again since: kept');
    assert.equal(h.devices.countUnsaved(), 5);
    for (let i = 0; i < 3; i++) assert.ok(h.devices.get(`SAVED-${i}`), `saved SAVED-${i} kept though seen first`);
    assert.notEqual(h.read('NEW-2', '10.0.3.2'), undefined);
    assert.equal(h.devices.get('U-2'), undefined);
    assert.equal(h.caps.status().evicted, 2);
    assert.equal(h.warns.filter((w) => /unsaved printer records/.test(w.msg)).length, 1, 'evictions logged at most once a minute');
  } finally {
    h.close();
  }
});

test("the store's lookups by printer-uuid, MAC and address are index seeks", () => {
  const h = harness();
  try {
    h.read('UUID-1', '10.0.0.1', { printer_info: { printer_uuid: 'aaaaaaaa-0000-1000-8000-000000000001' } });
    h.read('MAC-A', '10.0.0.2', { mac_address: '00:11:22:33:44:AA' });
    h.read('PLAIN', '10.0.0.2');
    assert.deepEqual(h.devices.withPrinterUuid('aaaaaaaa-0000-1000-8000-000000000001').map((d) => d.serial), ['UUID-1']);
    assert.deepEqual(h.devices.withMac('00:11:22:33:44:aa').map((d) => d.serial), ['MAC-A']);
    assert.deepEqual(h.devices.atAddress('10.0.0.2').map((d) => d.serial), ['MAC-A', 'PLAIN']);
    // A record whose JSON is damaged (written by hand, an old bug) is still stored and found by serial.
    h.db.prepare("UPDATE devices SET printer_info = '{not json' WHERE serial = 'PLAIN'").run();
    assert.equal(h.devices.withPrinterUuid('x').length, 0);
    // As the store asks (a joined statement binds through a CAST, store/bound.ts; uuid's and MAC's, unjoined, do not).
    const plan = (sql: string) => (h.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('; ');
    const uuidPlan = plan("SELECT d.serial FROM devices d WHERE CASE WHEN json_valid(d.printer_info) THEN json_extract(d.printer_info, '$.printer_uuid') END = 'u'");
    assert.match(uuidPlan, /USING INDEX devices_printer_uuid/);
    assert.match(plan("SELECT d.serial FROM devices d WHERE lower(d.mac_address) = 'm'"), /USING INDEX devices_mac/);
    assert.match(plan("SELECT d.serial FROM devices d WHERE d.ip = CAST('1' AS TEXT)"), /USING (COVERING )?INDEX devices_ip/);
  } finally {
    h.close();
  }
});
