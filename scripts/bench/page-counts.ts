// Pages per period: the cost of GET /api/devices/page-counts's computation over the
// longest history it reads. See scripts/bench/README, section "page-counts".
//
//   node dist/scripts/bench/page-counts.js [--devices 100] [--iterations 50]
//
// A database in every tier as retention leaves it, at the worst polling interval (1 minute) for the
// measured printer: raw 7 days (10,080 readings), hourly to 30 days, daily to 365 days, monthly for
// two years before, beside `devices` other printers polled every 15 minutes (their rows share the
// tables' bucketed keys). Then, directly on SQLite (no HTTP), p50/p99 of the longest answers:
// 1,100 days (the most one answer holds), 157 weeks, 36 months, in Europe/Berlin, and the default
// 31 days.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/db.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { TIER_DEFS, hourStart, dayStart, monthStart } from '../../src/store/tier-buckets.js';
import { periodsOf, type PeriodKind } from '../../src/model/periods.js';
import { pageCounts } from '../../src/store/page-counts.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string): number => {
  const i = args.indexOf(`--${name}`);
  return Number(i >= 0 && i + 1 < args.length ? args[i + 1] : def);
};
const DEVICES = opt('devices', '100');
const ITER = opt('iterations', '50');
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const now = Date.now();
const TARGET = 'BENCH-PAGES';

const dir = mkdtempSync(join(tmpdir(), 'pbx-bench-pages-'));
const db = openDatabase(join(dir, 'printbox.db'));
const metrics = new MetricsStore(db);
const pagesAt = (t: number) => Math.round((t - (now - 3 * 365 * DAY)) / MIN / 3);

function fill(serial: string, rawStep: number): void {
  db.transaction(() => {
    for (let t = now - 7 * DAY; t < now; t += rawStep) metrics.insertRaw({ serial, ts: t, page_count: pagesAt(t), color_pages: Math.floor(pagesAt(t) / 4) });
    const agg = (tier: 'hourly' | 'daily' | 'monthly', from: number, to: number) => {
      for (let s = from; s < to; s = TIER_DEFS[tier].next(s)) {
        const e = TIER_DEFS[tier].next(s) - MIN;
        metrics.upsertAggregate(tier, {
          serial, ts: s, sample_count: 60,
          counters: { page_count: { min: pagesAt(s), max: pagesAt(e), avg: pagesAt(s) }, color_pages: { min: Math.floor(pagesAt(s) / 4), max: Math.floor(pagesAt(e) / 4), avg: 0 } },
        });
      }
    };
    agg('hourly', hourStart(now - 30 * DAY), hourStart(now));
    agg('daily', dayStart(now - 365 * DAY), dayStart(now));
    agg('monthly', monthStart(now - 3 * 365 * DAY), monthStart(now));
  })();
}

let t0 = performance.now();
fill(TARGET, MIN);
for (let d = 0; d < DEVICES; d++) fill(`BENCH-OTHER-${String(d).padStart(4, '0')}`, 15 * MIN);
console.log(`generated: ${DEVICES + 1} printers in ${Math.round(performance.now() - t0)} ms`);

const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const cases: [string, PeriodKind, number][] = [['31 days', 'day', 31 * DAY], ['1,100 days', 'day', 1099 * DAY], ['157 weeks', 'week', 157 * 7 * DAY], ['36 months', 'month', 3 * 365 * DAY]];
for (const [name, kind, span] of cases) {
  const times: number[] = [];
  // CPU time too: on a shared machine the wall clock measures the neighbours.
  const cpu: number[] = [];
  let known = 0;
  let n = 0;
  for (let i = 0; i < ITER; i++) {
    t0 = performance.now();
    const c0 = process.cpuUsage();
    const periods = periodsOf(kind, 'Europe/Berlin', now - span, now, 1100)!;
    const out = pageCounts(db, metrics, TARGET, kind, periods, { now, bridgeMs: 6 * HOUR });
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    times.push(performance.now() - t0);
    known = out.filter((p) => p.pages !== null).length;
    n = out.length;
  }
  console.log(`${name.padEnd(11)} ${String(n).padStart(5)} periods (${known} known): wall p50 ${pct(times, 0.5).toFixed(1)} ms, p99 ${pct(times, 0.99).toFixed(1)} ms; CPU p50 ${pct(cpu, 0.5).toFixed(1)} ms, p99 ${pct(cpu, 0.99).toFixed(1)} ms`);
}
db.close();
rmSync(dir, { recursive: true, force: true });
