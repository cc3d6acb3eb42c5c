import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { rollupOnce, getWatermark } from '../../../src/rollup/rollup.js';
import { applyRetention } from '../../../src/rollup/retention.js';
import { rollupPass } from '../../../src/rollup/schedule.js';
import { DAY, HOUR, MIN, dump, inserter, openTemp, reading, tempDbFile } from '../../kit/rollup-db.js';

const here = dirname(fileURLToPath(import.meta.url));
type Row = Record<string, any>;

test('hourly, daily and monthly aggregates: sample_count, min/max/avg, toner last and average', async () => {
  const { db } = openTemp();
  const ins = inserter(db);
  const h = Date.UTC(2026, 0, 31, 22); // the last hours of January
  ins([
    { serial: 'A', ts: h + 0 * MIN, page_count: 100, color_pages: 10, toner: { black: 80, cyan: 'low' } },
    { serial: 'A', ts: h + 15 * MIN, page_count: 103, color_pages: null, toner: { black: 79 } },
    { serial: 'A', ts: h + 30 * MIN, page_count: 110, color_pages: 13, toner: '{not json' },
    { serial: 'A', ts: h + HOUR + 5 * MIN, page_count: 120, toner: { black: 70, cyan: 40 } },
    { serial: 'B', ts: h + 10 * MIN, page_count: 5 },
    { serial: 'A', ts: h + 2 * HOUR, page_count: 130 }, // February 1st 00:00, next day and month
  ]);
  const r = await rollupOnce(db, new Date(Date.UTC(2026, 1, 1, 0, 30)));
  assert.equal(r.hourly, 3);
  const hourly = db.prepare('SELECT * FROM metrics_hourly ORDER BY serial, ts').all() as Row[];
  assert.equal(hourly.length, 3); // A 22h, A 23h, B 22h; February 00h is still open
  const a22 = hourly[0];
  assert.equal(a22.ts, h);
  assert.equal(a22.sample_count, 3);
  assert.equal(a22.page_count_min, 100);
  assert.equal(a22.page_count_max, 110);
  assert.equal(a22.page_count_avg, 313 / 3); // a non-integer average is stored, never an error
  assert.equal(a22.color_pages_min, 10);
  assert.equal(a22.color_pages_avg, 11.5);
  assert.equal(a22.mono_pages_max, null);
  assert.deepEqual(JSON.parse(a22.toner_last), { black: 79 }); // the bad JSON cell is skipped
  assert.deepEqual(JSON.parse(a22.toner_avg), { black: 79.5 }); // 'low' is not a number
  // January 31st is closed by the time the day after has begun; monthly January too.
  const daily = db.prepare('SELECT * FROM metrics_daily ORDER BY serial, ts').all() as Row[];
  assert.equal(daily.length, 2);
  assert.equal(daily[0].ts, Date.UTC(2026, 0, 31));
  assert.equal(daily[0].sample_count, 4);
  assert.equal(daily[0].page_count_min, 100);
  assert.equal(daily[0].page_count_max, 120);
  assert.equal(daily[0].page_count_avg, (313 + 120) / 4);
  assert.deepEqual(JSON.parse(daily[0].toner_last), { black: 70, cyan: 40 });
  assert.deepEqual(JSON.parse(daily[0].toner_avg), { black: (79.5 * 3 + 70) / 4, cyan: 40 });
  const monthly = db.prepare('SELECT * FROM metrics_monthly ORDER BY serial, ts').all() as Row[];
  assert.equal(monthly.length, 2);
  assert.equal(monthly[0].ts, Date.UTC(2026, 0, 1));
  assert.equal(monthly[0].sample_count, 4);
  assert.equal(monthly[1].serial, 'B');
  assert.equal(getWatermark(db, 'hourly'), Date.UTC(2026, 1, 1));
});

test('idempotent: a second pass at the same time, and a later pass with nothing new, change nothing', async () => {
  const { db } = openTemp();
  const ins = inserter(db);
  const t0 = Date.UTC(2026, 4, 1);
  const rows = [];
  for (let ts = t0; ts < t0 + 3 * DAY; ts += 15 * MIN) for (let i = 0; i < 4; i++) rows.push(reading(`S${i}`, i, ts));
  rows.push(reading('S0', 0, t0 + 3 * DAY + 5 * MIN)); // in the hour still open at `now`
  ins(rows);
  const now = new Date(t0 + 3 * DAY + 10 * MIN);
  await rollupPass(db, now);
  const first = dump(db);
  const r2 = await rollupPass(db, now);
  assert.equal(dump(db), first);
  assert.deepEqual([r2.rollup.hourly, r2.rollup.daily, r2.rollup.monthly], [0, 0, 0]);
  // The partial hour is not closed: a later pass closes it with its final rows only.
  ins([reading('S0', 0, t0 + 3 * DAY + 20 * MIN)]);
  await rollupOnce(db, new Date(t0 + 3 * DAY + HOUR));
  const last = db.prepare('SELECT sample_count FROM metrics_hourly WHERE serial = ? AND ts = ?').get('S0', t0 + 3 * DAY) as Row;
  assert.equal(last.sample_count, 2);
});

test('catch-up after 40 days off: every missed bucket is rolled, then retention trims', async () => {
  const { db, file } = openTemp();
  const ins = inserter(db);
  const t0 = Date.UTC(2026, 0, 10);
  const rows = [];
  for (let ts = t0; ts < t0 + 2 * DAY; ts += 15 * MIN) for (let i = 0; i < 3; i++) rows.push(reading(`S${i}`, i, ts));
  ins(rows);
  await rollupPass(db, new Date(t0 + DAY + 5 * MIN)); // the box ran one day, then went off
  const now = new Date(t0 + 42 * DAY + 5 * MIN);
  const res = await rollupPass(db, now);
  assert.ok(res.rollup.batches > 1);
  const count = (sql: string) => db.prepare(sql).pluck().get();
  assert.equal(count('SELECT count(*) FROM metrics_raw'), 0); // all older than 7 days
  assert.equal(count('SELECT count(*) FROM metrics_hourly'), 0); // all older than 30 days
  assert.equal(count('SELECT count(*) FROM metrics_daily'), 6); // 2 days x 3 devices
  assert.equal(count('SELECT sum(sample_count) FROM metrics_daily'), rows.length);
  assert.equal(count('SELECT sum(sample_count) FROM metrics_monthly'), rows.length);
  assert.equal(getWatermark(db, 'hourly'), Date.UTC(2026, 1, 21));
  assert.equal(getWatermark(db, 'monthly'), Date.UTC(2026, 1, 1));
  db.close();
  const { checkMetricsIntegrity } = await import('../../kit/integrity.js');
  const rep = checkMetricsIntegrity(
    file,
    rows.map((r, i) => ({ id: i + 1, serial: r.serial, ts: r.ts })),
  );
  assert.deepEqual(rep.problems, []);
});

test('buckets are UTC: month ends, the 2028 leap day and DST dates give the same rows in any TZ', () => {
  const script = join(here, 'tz-run.js');
  const outs = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe'].map((tz) =>
    execFileSync(process.execPath, [script, tempDbFile('tz-')], { env: { ...process.env, TZ: tz }, encoding: 'utf8' }),
  );
  for (const o of outs) assert.equal(o, outs[0]);
  const d = JSON.parse(outs[0]);
  const days = new Set(d.metrics_daily.map((r: Row) => r.ts));
  assert.ok(days.has(Date.UTC(2028, 1, 29)), 'leap day bucket');
  assert.ok(days.has(Date.UTC(2026, 2, 29)), 'DST day bucket');
  const dst = d.metrics_daily.find((r: Row) => r.ts === Date.UTC(2026, 2, 29) && r.serial === 'SN0');
  assert.equal(dst.sample_count, 96); // 24 UTC hours, whatever the local clock did
  const months = new Set(d.metrics_monthly.map((r: Row) => r.ts));
  for (const m of [Date.UTC(2026, 2, 1), Date.UTC(2026, 9, 1), Date.UTC(2028, 1, 1)]) assert.ok(months.has(m));
  const feb = d.metrics_monthly.find((r: Row) => r.ts === Date.UTC(2028, 1, 1) && r.serial === 'SN0');
  assert.equal(feb.sample_count, 4 * 28); // 2028-02-28 20:00 .. 02-29 24:00 = 28 hours
  const hourly = d.metrics_hourly.filter((r: Row) => r.serial === 'SN0');
  for (const r of hourly) assert.equal(r.ts % HOUR, 0);
});

test('retention boundaries: whole UTC days (months for daily) older than 7/30/365 days go; monthly kept', async () => {
  const { db } = openTemp();
  const ins = inserter(db);
  const now = Date.UTC(2027, 5, 15, 12, 34, 56, 789);
  const dayOf = (d: number) => Math.floor((now - d * DAY) / DAY) * DAY; // start of the day holding now-d
  ins([
    { serial: 'A', ts: dayOf(7) - 1, page_count: 1 }, // its whole day is older than 7 days: deleted
    { serial: 'A', ts: dayOf(7), page_count: 2 }, // same day as now-7d: kept until that day has passed
    { serial: 'A', ts: now - 3 * DAY, page_count: 3 },
  ]);
  const agg = (table: string, t: number) =>
    db.prepare(`INSERT INTO ${table} (serial, ts, sample_count, page_count_max) VALUES ('A', ?, 1, 1)`).run(t);
  agg('metrics_hourly', dayOf(30) - HOUR);
  agg('metrics_hourly', dayOf(30));
  const monthOf365 = Date.UTC(2026, 5, 1); // the month holding now-365d
  agg('metrics_daily', monthOf365 - DAY);
  agg('metrics_daily', monthOf365);
  agg('metrics_monthly', now - 3000 * DAY);
  // Retention alone (no roll-up before it): deleted rows are still accounted for by parent buckets.
  await applyRetention(db, new Date(now));
  const col = (table: string) => db.prepare(`SELECT ts FROM ${table} ORDER BY ts`).pluck().all();
  assert.deepEqual(col('metrics_raw'), [dayOf(7), now - 3 * DAY]);
  const near = (t0: number) => (t: any) => t >= t0 - 2 * DAY && t <= t0 + DAY;
  assert.deepEqual(col('metrics_hourly').filter(near(dayOf(30))), [dayOf(30)]);
  assert.deepEqual(col('metrics_daily').filter(near(monthOf365)), [monthOf365]);
  assert.ok(col('metrics_monthly').includes(now - 3000 * DAY));
  // The deleted raw row's hour was written before the delete, and the deleted hourly's day, etc.
  const one = (sql: string, ...p: number[]) => db.prepare(sql).pluck().get(...p);
  assert.equal(one('SELECT sample_count FROM metrics_hourly WHERE ts = ?', dayOf(7) - HOUR), 1);
  assert.equal(one('SELECT sample_count FROM metrics_daily WHERE ts = ?', dayOf(31)), 1);
  assert.equal(one('SELECT sample_count FROM metrics_monthly WHERE ts = ?', Date.UTC(2026, 4, 1)), 1);
  // Nothing older than the limits is left.
  assert.equal(one('SELECT count(*) FROM metrics_raw WHERE ts < ?', dayOf(7)), 0);
  assert.equal(one('SELECT count(*) FROM metrics_hourly WHERE ts < ?', dayOf(30)), 0);
  assert.equal(one('SELECT count(*) FROM metrics_daily WHERE ts < ?', monthOf365), 0);
});

test('the file stops growing at steady state (60 days of polls, roll-up and retention)', async () => {
  const { db } = openTemp();
  const ins = inserter(db);
  const devices = 20;
  let t = Date.UTC(2026, 0, 1);
  const pages: number[] = [];
  for (let day = 0; day < 60; day++) {
    for (let q = 0; q < 4; q++) {
      const rows = [];
      for (let k = 0; k < 24; k++, t += 15 * MIN) for (let i = 0; i < devices; i++) rows.push(reading(`S${i}`, i, t));
      ins(rows);
      await rollupPass(db, new Date(t + 5 * MIN));
    }
    pages.push(db.pragma('page_count', { simple: true }) as number);
  }
  const growthLate = pages[59] - pages[44];
  const growthEarly = pages[14] - pages[0];
  // After 30 days raw and hourly are at steady state; only daily/monthly rows (a few per device and
  // day) are still added, which is a small fraction of what the first weeks grew.
  assert.ok(growthLate * 10 < growthEarly, `pages ${pages.join(',')}`);
});

// Retention first checks that each parent bucket already counts every source row, and recomputes
// it only if not. The check must find rolled buckets through the bucketed keys (store/keys.ts),
// whatever the bucket's alignment: a day is rarely a multiple of the daily table's 30-day bucket.
test('the coverage check finds rolled buckets, aligned to the key bucket or not', async () => {
  const { db } = openTemp();
  const { ensureBucket, uncoveredSerials } = await import('../../../src/rollup/rollup.js');
  const { TIER_DEFS, dayStart } = await import('../../../src/store/tier-buckets.js');
  const day0 = Date.UTC(2026, 9, 7); // not a multiple of 30 days since the epoch
  assert.notEqual(day0 % (30 * DAY), 0);
  const rows = [];
  for (let t = day0; t < day0 + 2 * DAY; t += 15 * MIN) rows.push({ serial: 'C', ts: t, page_count: t / MIN });
  inserter(db)(rows);
  await rollupOnce(db, new Date(day0 + 3 * DAY));
  assert.ok(getWatermark(db, 'daily')! >= dayStart(day0 + 2 * DAY));
  // Nothing is uncovered, so retention recomputes nothing.
  for (let h = day0; h < day0 + 2 * DAY; h += HOUR) assert.equal(uncoveredSerials(db, TIER_DEFS.hourly, h), 0, `hour ${h}`);
  assert.equal(uncoveredSerials(db, TIER_DEFS.daily, day0), 0);
  assert.equal(uncoveredSerials(db, TIER_DEFS.daily, day0 + DAY), 0);
  // A late raw row is uncovered until its hour is recomputed (a millisecond off the polling grid:
  // a second reading at a time the device has one is not stored, migration 7).
  inserter(db)([{ serial: 'C', ts: day0 + 90 * MIN + 1, page_count: 1 }]);
  assert.equal(uncoveredSerials(db, TIER_DEFS.hourly, day0 + HOUR), 1);
  assert.equal(db.transaction(() => ensureBucket(db, TIER_DEFS.hourly, day0 + HOUR))(), 1);
  assert.equal(uncoveredSerials(db, TIER_DEFS.hourly, day0 + HOUR), 0);
  db.close();
});

// The scheduled pass writes a day of hourly rows in one transaction, device by device: one
// device's rows of the day get consecutive ids, so its history reads a page or two, not 24.
test('a batch of hourly buckets is written device by device', async () => {
  const { db } = openTemp();
  const day0 = Date.UTC(2026, 9, 7);
  const rows = [];
  for (let t = day0; t < day0 + DAY; t += 15 * MIN) for (const serial of ['A', 'B', 'C']) rows.push({ serial, ts: t, page_count: t / MIN });
  inserter(db)(rows);
  await rollupOnce(db, new Date(day0 + DAY + 5 * MIN), { hourlyBatch: 24 });
  for (const serial of ['A', 'B', 'C']) {
    const ids = db.prepare('SELECT id FROM metrics_hourly WHERE serial = ? ORDER BY ts').pluck().all(serial) as number[];
    assert.equal(ids.length, 24);
    assert.deepEqual(ids, ids.map((_, i) => ids[0] + i), `${serial}: consecutive ids in time order`);
  }
  db.close();
});

// The scheduled day batch must not hold the event loop for the whole day's reads: it reads an hour
// at a time and yields between hours, outside any transaction, then writes the day at once.
test('a batch of hourly buckets is read an hour at a time, yielding between hours', async () => {
  const { db } = openTemp();
  const day0 = Date.UTC(2026, 9, 7);
  const rows = [];
  for (let t = day0; t < day0 + DAY; t += 15 * MIN) rows.push({ serial: 'A', ts: t, page_count: t / MIN });
  inserter(db)(rows);
  const hourlyRows = db.prepare('SELECT count(*) FROM metrics_hourly').pluck();
  const seen: number[] = [];
  const yieldFn = async () => {
    assert.equal(db.inTransaction, false, 'no yield inside a transaction');
    seen.push(hourlyRows.get() as number);
  };
  await rollupOnce(db, new Date(day0 + DAY + 5 * MIN), { hourlyBatch: 24, yieldFn });
  assert.equal(seen.filter((n) => n === 0).length, 23, 'a yield between each two of the 24 hours read, before the write');
  assert.equal(hourlyRows.get(), 24);
  db.close();
});

// Roll-up and retention read a time range of all devices through the bucketed key (store/keys.ts):
// every statement they prepare against a metrics table must SEARCH an index, never SCAN a table,
// or a pass would read the whole tier (years of rows) to roll or delete one day.
test('EXPLAIN QUERY PLAN: roll-up and retention statements search an index, never scan a metrics table', async () => {
  const { db } = openTemp();
  const sql = new Set<string>();
  const prepare = db.prepare.bind(db);
  (db as unknown as { prepare: (s: string) => unknown }).prepare = (s: string) => {
    sql.add(s);
    return prepare(s);
  };
  const t0 = Date.UTC(2026, 0, 10);
  const rows = [];
  for (let ts = t0; ts < t0 + 2 * DAY; ts += 15 * MIN) for (let i = 0; i < 3; i++) rows.push(reading(`S${i}`, i, ts));
  inserter(db)(rows);
  await rollupPass(db, new Date(t0 + 400 * DAY)); // rolls every tier, then deletes raw, hourly, daily
  (db as unknown as { prepare: unknown }).prepare = prepare;
  const reads = [...sql].filter((s) => /\b(FROM|JOIN) metrics_/.test(s));
  // per aggregated tier: counters, toner last, toner average, first bucket, first ts, coverage; plus
  // retention's delete and count of its source
  assert.ok(reads.length >= 3 * 6 + 3 * 2, reads.join('\n---\n'));
  for (const s of reads) {
    // EXPLAIN needs every parameter bound; NULL does not change the plan.
    const named = Object.fromEntries([...s.matchAll(/@(\w+)/g)].map((m) => [m[1], null]));
    const positional = (s.match(/\?/g) ?? []).map(() => null);
    const stmt = prepare(`EXPLAIN QUERY PLAN ${s}`);
    const args: unknown[] = Object.keys(named).length ? [...positional, named] : positional;
    const details = (stmt.all(...args) as { detail: string }[]).map((p) => p.detail);
    assert.deepEqual(details.filter((d) => /^SCAN (metrics_|r\b|b\b)/.test(d)), [], `${s}\n${details.join('\n')}`);
    assert.ok(details.some((d) => /^SEARCH .*(INDEX|PRIMARY KEY)/.test(d)), `${s}\n${details.join('\n')}`);
  }
  db.close();
});
