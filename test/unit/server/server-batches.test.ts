// How an upload batch is cut (server/uploader.ts sameTimeBatch): the central server stamps
// every reading of a batch with the batch's one time, so a batch holds one reading round's readings,
// never two of one printer, within a minute. Real SQLite for the rounds the store keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore, type Reading } from '../../../src/store/devices.js';
import { MetricsStore, type RoundSnapshot } from '../../../src/store/metrics.js';
import type { Device } from '../../../src/model/device.js';
import { newRoundId } from '../../../src/model/round.js';
import { BATCH_SPAN_MS, sameTimeBatch } from '../../../src/server/uploader.js';

const T = Date.UTC(2026, 10, 29, 12, 48, 0);

/** Cuts `rows` into batches as the uploader does, one after the other. */
function batches(rows: RoundSnapshot[]): { serials: string[]; timestamp: number }[] {
  const out: { serials: string[]; timestamp: number }[] = [];
  for (let rest = rows; rest.length; ) {
    const b = sameTimeBatch(rest, (r) => r.ts, (r) => r.round);
    out.push({ serials: b.rows.map((r) => r.serial), timestamp: b.timestamp });
    rest = rest.slice(b.rows.length);
  }
  return out;
}

const row = (serial: string, ts: number, round?: number): RoundSnapshot => ({ id: 0, serial, ts, ...(round === undefined ? {} : { round }) });

test('two rounds a second apart (a discover, then a collect) are two batches at two times', () => {
  const rows = [row('A', T, 1), row('B', T + 200, 1), row('A', T + 1_000, 2), row('B', T + 1_100, 2)];
  assert.deepEqual(batches(rows), [
    { serials: ['A', 'B'], timestamp: T + 100 },
    { serials: ['A', 'B'], timestamp: T + 1_050 },
  ]);
});

test('requests for different printers a second apart are still two batches', () => {
  assert.deepEqual(batches([row('A', T, 1), row('B', T + 1_000, 2)]).map((b) => b.serials), [['A'], ['B']]);
});

test('after an outage, the rounds of 12:48 and 12:49 go as two batches, each at its own time', () => {
  const rows = [row('A', T, 1), row('B', T + 300, 1), row('A', T + 60_000, 2), row('B', T + 60_300, 2)];
  const b = batches(rows);
  assert.equal(b.length, 2);
  assert.ok(Math.abs(b[0].timestamp - T) <= 300 && Math.abs(b[1].timestamp - (T + 60_000)) <= 300, JSON.stringify(b));
});

test('rows without a round (older rows, imports) never put one printer twice in a batch, nor span more than a minute', () => {
  assert.deepEqual(batches([row('A', T), row('B', T + 10_000), row('A', T + 20_000), row('C', T + 30_000)]).map((b) => b.serials), [['A', 'B'], ['A', 'C']]);
  assert.deepEqual(batches([row('A', T), row('B', T + BATCH_SPAN_MS + 1)]).map((b) => b.serials), [['A'], ['B']]);
});

test('a long round is cut where its span passes a minute: no reading moves by more than 30 s', () => {
  const rows = [0, 20_000, 40_000, 70_000, 90_000].map((dt, i) => row(`P${i}`, T + dt, 7));
  const b = batches(rows);
  assert.deepEqual(b.map((x) => x.serials), [['P0', 'P1', 'P2'], ['P3', 'P4']]);
  for (const x of b) for (const r of rows.filter((r) => x.serials.includes(r.serial))) assert.ok(Math.abs(r.ts - x.timestamp) <= BATCH_SPAN_MS / 2);
});

test('the store keeps each reading\'s round; a write without one is its own round', () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-rounds-'));
  const db = openDatabase(join(dir, 'r.db'));
  try {
    const devices = new DeviceStore(db);
    const dev = (serial: string): Device => ({
      serial, ip: '127.0.0.9', last_seen: T, created_at: T, first_seen: T, device_type: 'network', source_type: 'snmp',
      is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true, printer_info: {},
    });
    const reading = (serial: string, ts: number, round?: number): Reading => ({ device: { ...dev(serial), last_seen: ts }, snapshot: { serial, ts, page_count: 1 }, ...(round ? { round } : {}) });
    const round = newRoundId(T);
    // A polling round written in two transactions, then two single collects a second apart.
    devices.recordReadings([reading('A', T, round)]);
    devices.recordReadings([reading('B', T + 100, round)]);
    devices.recordReadings([reading('A', T + 1_000)]);
    devices.recordReadings([reading('B', T + 1_100)]);
    const rows = new MetricsStore(db).rawAfter(0, 100);
    assert.equal(rows[0].round, round);
    assert.equal(rows[1].round, round);
    assert.ok(rows[2].round !== undefined && rows[3].round !== undefined && rows[2].round !== rows[3].round && rows[2].round !== round);
    assert.deepEqual(batches(rows).map((b) => b.serials), [['A', 'B'], ['A'], ['B']]);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('round ids are unique even for rounds begun in the same millisecond', () => {
  const a = newRoundId(T + 5_000);
  const b = newRoundId(T + 5_000);
  assert.ok(b > a);
});
