// A roll-up or retention pass stops between batches when its signal is aborted (bounded shutdown):
// the batches before are committed whole, the next is not begun, the database is
// intact, and a later pass carries on to exactly what an uninterrupted pass writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { getWatermark, rollupOnce } from '../../../src/rollup/rollup.js';
import { hourStart, HOUR_MS } from '../../../src/store/tier-buckets.js';
import { applyRetention } from '../../../src/rollup/retention.js';
import { abortableYield, rollupPass, startRollupSchedule } from '../../../src/rollup/schedule.js';
import { openDatabase, type DB } from '../../../src/store/db.js';
import { checkMetricsIntegrity, type CommittedSnapshot } from '../../kit/integrity.js';
import { dump, inserter, openTemp, reading, DAY, MIN } from '../../kit/rollup-db.js';

const DEVICES = 50;

/** `days` days of polls every 15 min for DEVICES devices, ending at `end`; returns what was inserted. */
function fill(db: DB, end: number, days: number): CommittedSnapshot[] {
  const ins = inserter(db);
  const committed: CommittedSnapshot[] = [];
  for (let ts = end - days * DAY; ts < end; ts += 15 * MIN) {
    const rows = Array.from({ length: DEVICES }, (_, d) => reading(`S${String(d).padStart(3, '0')}`, d, ts));
    ins(rows).forEach((id, i) => committed.push({ id, serial: rows[i].serial, ts }));
  }
  return committed;
}

/** A copy of the database file (checkpointed first), opened. */
function copyOf(db: DB, file: string): DB {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const copy = join(dirname(file), 'copy.db');
  copyFileSync(file, copy);
  return openDatabase(copy);
}

const isAbortError = (e: unknown) => e instanceof Error && e.name === 'AbortError';

test('a roll-up pass aborted mid-way stops between batches; the next pass finishes it exactly', async () => {
  const { db, file } = openTemp('abort-');
  const now = Date.UTC(2026, 4, 20, 12, 5);
  const committed = fill(db, hourStart(now), 3);
  const reference = copyOf(db, file);
  await rollupOnce(reference, new Date(now), { hourlyBatch: 1 });

  // Abort at the third yield after a commit: two batches written, the third not begun.
  const ac = new AbortController();
  const inner = abortableYield(ac.signal);
  const hourly = db.prepare('SELECT count(*) FROM metrics_hourly').pluck();
  let commits = 0;
  let last = 0;
  const yieldFn = async () => {
    assert.equal(db.inTransaction, false, 'never stopped inside a transaction');
    const n = hourly.get() as number;
    if (n !== last) commits++;
    last = n;
    if (commits === 2) ac.abort();
    await inner();
  };
  await assert.rejects(rollupOnce(db, new Date(now), { hourlyBatch: 1, yieldFn }), isAbortError);
  const first = hourStart(now - 3 * DAY);
  assert.equal(getWatermark(db, 'hourly'), first + 2 * HOUR_MS, 'the watermark at the end of the second batch');
  assert.equal(hourly.get(), 2 * DEVICES, 'two whole hours of every device, nothing of the third');
  assert.equal(getWatermark(db, 'daily'), undefined, 'the daily tier not begun');
  assert.deepEqual(checkMetricsIntegrity(file, committed).problems, []);

  // An aborted signal stops a pass before it writes anything.
  const before = dump(db);
  await assert.rejects(rollupPass(db, new Date(now), 1, AbortSignal.abort()), isAbortError);
  assert.equal(dump(db), before);

  await rollupOnce(db, new Date(now), { hourlyBatch: 1 });
  assert.equal(dump(db), dump(reference), 'carried on to what an uninterrupted pass writes');
  reference.close();
  db.close();
});

test('rollupPass: aborted while it runs, it rejects at the next batch boundary with every batch whole', async () => {
  const { db, file } = openTemp('abort-');
  const now = Date.UTC(2026, 4, 20, 12, 5);
  const committed = fill(db, hourStart(now), 2);
  const ac = new AbortController();
  // Abort as soon as the first hourly batch is committed (the pass yields with setImmediate).
  const watch = () => (getWatermark(db, 'hourly') !== undefined ? ac.abort() : setImmediate(watch));
  setImmediate(watch);
  await assert.rejects(rollupPass(db, new Date(now), 1, ac.signal), isAbortError);
  const wm = getWatermark(db, 'hourly')!;
  const first = hourStart(now - 2 * DAY);
  assert.ok(wm > first && wm < hourStart(now), 'stopped part-way');
  assert.equal((wm - first) % HOUR_MS, 0);
  assert.equal(db.prepare('SELECT count(*) FROM metrics_hourly').pluck().get(), ((wm - first) / HOUR_MS) * DEVICES, 'whole batches only');
  assert.deepEqual(checkMetricsIntegrity(file, committed).problems, []);
  db.close();
});

test('a retention pass aborted after its first batch: that batch deleted whole and accounted for, the rest kept', async () => {
  const { db, file } = openTemp('abort-');
  const now = Date.UTC(2026, 4, 20, 12, 5);
  // From 10 days ago to 6 days ago: 60 hours past raw retention (7 days, whole days), 200 rows an
  // hour, i.e. 12,000 rows to delete in batches of about 8,000.
  const committed = fill(db, hourStart(now) - 6 * DAY, 4);
  await rollupOnce(db, new Date(now), { hourlyBatch: 24 });
  const raw = db.prepare('SELECT count(*) FROM metrics_raw').pluck();
  const total = raw.get() as number;
  const reference = copyOf(db, file);
  const full = await applyRetention(reference, new Date(now));
  assert.ok(full.batches >= 2, `the reference deletes in ${full.batches} batches`);

  const ac = new AbortController();
  const inner = abortableYield(ac.signal);
  let yields = 0;
  const yieldFn = async () => {
    assert.equal(db.inTransaction, false, 'never stopped inside a transaction');
    if (++yields === 1) ac.abort();
    await inner();
  };
  await assert.rejects(applyRetention(db, new Date(now), { yieldFn }), isAbortError);
  const deleted = total - (raw.get() as number);
  assert.ok(deleted > 0 && deleted < full.raw, `one batch deleted (${deleted} of ${full.raw})`);
  const oldest = db.prepare('SELECT min(ts) FROM metrics_raw').pluck().get() as number;
  assert.equal(oldest % HOUR_MS, 0, 'deleted by whole hours');
  assert.deepEqual(checkMetricsIntegrity(file, committed).problems, [], 'every deleted row counted by its hourly bucket');

  await applyRetention(db, new Date(now));
  assert.equal(raw.get(), reference.prepare('SELECT count(*) FROM metrics_raw').pluck().get(), 'the next pass carries on');
  reference.close();
  db.close();
});

test('stopping the schedule stops the start-up pass between batches and waits for it', async () => {
  const { db, file } = openTemp('abort-');
  const committed = fill(db, hourStart(Date.now()) - 2 * HOUR_MS, 10); // 10 days to catch up: 10 day batches
  const lines: string[] = [];
  const log = { info: (o: object, m?: string) => lines.push(`${m} ${JSON.stringify(o)}`), error: (o: object, m?: string) => lines.push(`ERR ${m} ${JSON.stringify(o)}`) };
  const { stop } = startRollupSchedule(db, log, '0 0 1 1 *');
  await new Promise<void>((r) => {
    const watch = () => (getWatermark(db, 'hourly') !== undefined ? r() : setImmediate(watch));
    setImmediate(watch);
  });
  await stop();
  const wm = getWatermark(db, 'hourly')!;
  assert.ok(wm < hourStart(Date.now()) - 3 * HOUR_MS, 'the pass did not run to the end');
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(lines[0], /^rollup pass stopped between batches/);
  assert.deepEqual(checkMetricsIntegrity(file, committed).problems, []);
  db.close();
});
