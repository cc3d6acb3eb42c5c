// Billing meter reads survive roll-ups and retention: two years of a fleet's raw
// readings every 6 hours, with a read per printer each month, rolled up and pruned by the real
// pass (rollup/schedule.ts rollupPass). Retention thins raw, hourly and daily rows as always; every
// meter read is still there, unchanged, and lists with its delta.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rollupPass } from '../../../src/rollup/schedule.js';
import { MeterReadStore } from '../../../src/store/meter-reads.js';
import { periodOf } from '../../../src/model/billing-time.js';
import { openTemp, inserter, reading, HOUR, DAY } from '../../kit/rollup-db.js';

test('two years rolled up and pruned: every billing read stays as written', async () => {
  const { db } = openTemp('meter-reads-');
  const now = Date.parse('2028-03-15T10:00:00Z');
  const serials = ['MR-1', 'MR-2', 'MR-3'];
  const insert = inserter(db);
  const rows = [];
  for (let t = now - 730 * DAY; t < now; t += 6 * HOUR) for (const [i, s] of serials.entries()) rows.push(reading(s, i, t));
  insert(rows);
  const reads = new MeterReadStore(db);
  const settings = { day: 31, time: '23:30', time_zone: 'Europe/Berlin' };
  let written = 0;
  for (let m = 0; m < 24; m++) {
    const d = new Date(now - (m + 1) * 30 * DAY);
    const p = periodOf(d.getUTCFullYear(), d.getUTCMonth() + 1, settings);
    for (const [i, serial] of serials.entries()) {
      const r = reading(serial, i, p.due + 60_000);
      written += Number(reads.insert({
        serial, period: p.period, due_at: p.due, read_at: p.due + 60_000, source: 'poll', attempts: 1,
        counters: { page_count: r.page_count!, mono_pages: r.mono_pages!, color_pages: r.color_pages! },
      }, now));
    }
  }
  assert.equal(written, 72);
  const before = db.prepare('SELECT * FROM meter_reads ORDER BY id').all();
  const rawBefore = db.prepare('SELECT count(*) FROM metrics_raw').pluck().get() as number;

  const { retention } = await rollupPass(db, new Date(now), 24);

  assert.ok(retention.raw > 0.9 * rawBefore, `retention removed ${retention.raw} of ${rawBefore} raw rows`);
  assert.ok(retention.hourly > 0 && retention.daily > 0, 'hourly and daily rows past their windows were removed too');
  assert.deepEqual(db.prepare('SELECT * FROM meter_reads ORDER BY id').all(), before);
  // A second pass (the next hour's) changes nothing either.
  await rollupPass(db, new Date(now + HOUR), 24);
  assert.deepEqual(db.prepare('SELECT * FROM meter_reads ORDER BY id').all(), before);
  // Each period lists every printer with its delta against the month before (its oldest has none).
  const periods = reads.periods();
  assert.equal(periods.length, 24);
  const oldest = periods[periods.length - 1].period;
  for (const { period } of periods) {
    const listed = [...reads.iterate(period)];
    assert.deepEqual(listed.map((r) => r.serial), serials);
    for (const r of listed) {
      if (period === oldest) assert.equal(r.previous, null);
      else assert.ok(r.counters.page_count! > r.previous!.counters.page_count!, `${period} ${r.serial} grew`);
    }
  }
  db.close();
});
