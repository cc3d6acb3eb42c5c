// The history bench's shortcut for old days (scripts/bench/fleet-history.ts writeHourlyDay, history.ts
// --fast) against the real thing: the same hourly-polled fleet, day by day, once as raw readings
// rolled up by the real roll-up and once as hourly rows written directly, each followed by the real
// roll-up and retention. Every aggregated tier must come out identical, row ids, value types and
// watermarks included (ids: the rows were inserted in the same order, so they lie on the same pages
// as the box would leave them). If the roll-up's output changes (a column, a rounding, JSON number
// text, the order a batch is written in), this fails and the bench's 2,000-printer figures with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type DB } from '../../../src/store/db.js';
import { rollupOnce } from '../../../src/rollup/rollup.js';
import { DAY_MS, HOUR_MS } from '../../../src/store/tier-buckets.js';
import { applyRetention } from '../../../src/rollup/retention.js';
import { SCHEDULED_HOURLY_BATCH } from '../../../src/rollup/schedule.js';
import { AGGREGATE_COLUMNS } from '../../../src/store/metrics.js';
import { RAW_INSERT_SQL, fleetRound, writeHourlyDay } from '../../../scripts/bench/fleet-history.js';

const DEVICES = 7;
// 70 days from mid-January: two month ends (monthly rows), hourly rows past their 30 days (retention).
const START = Date.UTC(2025, 0, 17);
const DAYS = 70;

async function simulate(db: DB, day: (from: number) => void): Promise<void> {
  for (let from = START; from < START + DAYS * DAY_MS; from += DAY_MS) {
    day(from);
    // What history.ts does after each simulated day.
    const clock = new Date(from + DAY_MS + 5 * 60_000);
    await rollupOnce(db, clock, { hourlyBatch: SCHEDULED_HOURLY_BATCH });
    await applyRetention(db, clock, { maintain: false });
  }
}

// Every column with its SQLite type: a REAL where the box stores an INTEGER is a different row on disk.
function tier(db: DB, table: string): unknown[] {
  const cols = ['id', ...AGGREGATE_COLUMNS].map((c) => `${c}, typeof(${c}) AS ${c}_type`).join(', ');
  return db.prepare(`SELECT ${cols} FROM ${table} ORDER BY id`).all();
}

for (const stepH of [1, 8]) test(`the bench fleet polled every ${stepH} h, written as hourly rows, rolls up and ages exactly as its raw readings do`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-shortcut-'));
  const real = openDatabase(join(dir, 'real.db'));
  const fast = openDatabase(join(dir, 'fast.db'));
  try {
    const ins = real.prepare(RAW_INSERT_SQL);
    await simulate(real, (from) =>
      real.transaction(() => {
        for (let ts = from; ts < from + DAY_MS; ts += stepH * HOUR_MS) fleetRound(DEVICES, ts, (r) => ins.run(...r));
      })(),
    );
    await simulate(fast, (from) => writeHourlyDay(fast, DEVICES, from, stepH * HOUR_MS));

    const counts: Record<string, number> = {};
    for (const t of ['metrics_hourly', 'metrics_daily', 'metrics_monthly']) {
      const a = tier(real, t);
      const b = tier(fast, t);
      counts[t] = a.length;
      // Row by row: a failing deepEqual of thousands of rows spends minutes building its diff.
      const at = a.findIndex((row, k) => JSON.stringify(row) !== JSON.stringify(b[k]));
      assert.equal(b.length, a.length, `${t}: ${b.length} rows from the shortcut, ${a.length} from the real roll-up`);
      assert.equal(at, -1, `${t} differs between the shortcut and the real roll-up at row ${at}:\n  real ${JSON.stringify(a[at])}\n  fast ${JSON.stringify(b[at])}`);
    }
    // Not vacuous: each tier holds what its window keeps (hourly: whole days of the last 30 and the
    // day being cut; daily: every day rolled; monthly: January and February).
    assert.ok(counts.metrics_hourly >= (DEVICES * 24 * 30) / stepH, `hourly rows ${counts.metrics_hourly}`);
    assert.ok(counts.metrics_hourly < (DEVICES * 24 * DAYS) / stepH, 'retention removed old hourly rows');
    assert.equal(counts.metrics_daily, DEVICES * DAYS);
    assert.equal(counts.metrics_monthly, DEVICES * 2);
    const state = (db: DB) => db.prepare('SELECT tier, done_until FROM rollup_state ORDER BY tier').all();
    assert.deepEqual(state(fast), state(real));
    // The daily averages are real aggregates of 24 readings (not the integers of one).
    const avg = fast.prepare(`SELECT toner_avg FROM metrics_daily WHERE toner_avg LIKE '%.%' AND toner_avg NOT LIKE '%.0,%' LIMIT 1`).pluck().get();
    assert.ok(typeof avg === 'string', 'some daily toner average has a fraction');
    // And the real path's raw rows are only those of the raw window: the shortcut skips nothing that lasts.
    const oldestRaw = real.prepare('SELECT min(ts) FROM metrics_raw').pluck().get() as number;
    assert.ok(oldestRaw >= START + (DAYS - 8) * DAY_MS, 'raw rows older than the raw window were kept');
  } finally {
    real.close();
    fast.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
