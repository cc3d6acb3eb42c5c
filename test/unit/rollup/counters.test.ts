// The category counters in every tier: a raw reading keeps them in `extra`, each
// roll-up keeps each one's value at the end of its bucket (max: counters are cumulative), history
// serves them from raw, hourly, daily and monthly rows alike, and a backup restores them. A counter
// a reading did not have stays absent from its bucket. Real SQLite files throughout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { rollupPass } from '../../../src/rollup/schedule.js';
import { dayStart, hourStart, monthStart, nextMonth } from '../../../src/store/tier-buckets.js';
import { MetricsStore } from '../../../src/store/metrics.js';
import { DeviceStore } from '../../../src/store/devices.js';
import { exportNdjson, importNdjson } from '../../../src/store/ndjson.js';
import { snapshotJson } from '../../../src/model/views.js';
import type { Device, Snapshot, Tier } from '../../../src/model/device.js';
import { DAY, HOUR, openTemp, tempDbFile } from '../../kit/rollup-db.js';
import { openDatabase } from '../../../src/store/db.js';

const SERIAL = 'KYO-59';
const T0 = Date.UTC(2025, 0, 1);
const STEP = 12 * HOUR;
const DAYS = 400;
const NOW = T0 + DAYS * DAY + 30 * 60_000;

/** The i-th reading: counters that grow; duplex only in the first 200 days; a counter that stays 0. */
function extraAt(i: number): Record<string, number> {
  return {
    print_pages: 7 * i,
    copy_pages: 3 * i,
    single_color_pages: 0,
    ...(i * STEP < 200 * DAY ? { duplex_pages: 2 * i } : {}),
  };
}

const device = (now: number): Device => ({
  serial: SERIAL, ip: '192.0.2.59', last_seen: now, created_at: T0, first_seen: T0, device_type: 'network',
  source_type: 'snmp', is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
});

/** The counters of the last reading in [start, end): what an aggregated row of that bucket must hold. */
function lastIn(start: number, end: number): Record<string, number> {
  const i = Math.ceil((end - T0) / STEP) - 1;
  assert.ok(T0 + i * STEP >= start, 'a reading in the bucket');
  return extraAt(i);
}

const BUCKET_END: Record<Exclude<Tier, 'raw'>, (ts: number) => number> = {
  hourly: (ts) => hourStart(ts) + HOUR,
  daily: (ts) => dayStart(ts) + DAY,
  monthly: (ts) => nextMonth(monthStart(ts)),
};

test('category counters survive every roll-up tier, retention and a backup round trip', async () => {
  const { db } = openTemp('counters-rollup-');
  const metrics = new MetricsStore(db);
  new DeviceStore(db).put(device(NOW));
  db.transaction(() => {
    for (let i = 0; T0 + i * STEP < NOW; i++) {
      metrics.insertRaw({ serial: SERIAL, ts: T0 + i * STEP, page_count: 10 * i + 1, extra: extraAt(i), toner_levels: { black: 50 } });
    }
  })();
  await rollupPass(db, new Date(NOW));

  const rows = metrics.history(SERIAL, T0, NOW, NOW);
  const tiers = new Set(rows.map((r) => r.tier));
  assert.deepEqual([...tiers], ['raw', 'hourly', 'daily', 'monthly']);
  for (const r of rows) {
    const want = r.tier === 'raw' ? extraAt((r.ts - T0) / STEP) : lastIn(r.ts, BUCKET_END[r.tier as Exclude<Tier, 'raw'>](r.ts));
    assert.deepEqual(r.extra, want, `${r.tier} ${new Date(r.ts).toISOString()}`);
  }
  // The contract's JSON: counters beside the others, zero omitted (contract 2.3), absent stays absent.
  const oldest = rows.find((r) => r.tier === 'monthly')!;
  const json = snapshotJson(oldest);
  assert.equal(json.copy_pages, lastIn(oldest.ts, nextMonth(oldest.ts)).copy_pages);
  assert.equal(json.duplex_pages, lastIn(oldest.ts, nextMonth(oldest.ts)).duplex_pages);
  assert.equal(Object.hasOwn(json, 'single_color_pages'), false);
  const newest = rows.find((r) => r.tier === 'raw')!;
  assert.equal(Object.hasOwn(snapshotJson(newest), 'duplex_pages'), false, 'no duplex counter after day 200');

  // Backup: export, import into an empty database, export again: the same bytes, counters included.
  const first = `${tempDbFile('counters-backup-')}.ndjson`;
  const out = createWriteStream(first);
  await exportNdjson(db, out);
  out.end();
  await once(out, 'close');
  const text = readFileSync(first, 'utf8');
  const monthlyLine = text.split('\n').find((l) => l.includes('"tier":"monthly"'))!;
  assert.match(monthlyLine, /"copy_pages":\d+/);
  assert.match(monthlyLine, /"single_color_pages":0/, 'a reported zero is backed up');
  const restored = openDatabase(tempDbFile('counters-restore-'));
  await importNdjson(restored, createReadStream(first));
  const second = `${first}.again`;
  const out2 = createWriteStream(second);
  await exportNdjson(restored, out2);
  out2.end();
  await once(out2, 'close');
  // Ids are the database's own (import ignores them) and the trailer's checksum covers them.
  const records = (t: string) => t.split('\n').filter((l) => l && !l.includes('"kind":"trailer"')).map((l) => {
    const { id: _id, ...rest } = JSON.parse(l) as Record<string, unknown>;
    return rest;
  });
  assert.deepEqual(records(readFileSync(second, 'utf8')), records(text));
  const again = new MetricsStore(restored).history(SERIAL, T0, NOW, NOW);
  assert.deepEqual(again.map((r: Snapshot) => r.extra), rows.map((r) => r.extra));
  db.close();
  restored.close();
});
