// Pages per period over a seeded history in a real SQLite file, with a fake clock: two
// months of readings every 15 minutes (test/kit/seed.ts, imported as a backup), rolled up and
// thinned by the box's own roll-up and retention at `NOW`, so days are served from raw, hourly and
// daily rows and months from daily and monthly ones. Checked against the counter the history was
// made from: a month end and a DST change in Europe/Berlin (a 23-hour day), a counter reset in raw,
// hourly and daily rows, a gap the counter moved across and one it did not, and monthly-only
// history (months known, days unknown).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { openTemp } from '../../kit/rollup-db.js';
import { DAY, HOUR, MINUTE, device, metrics, ndjson, type MetricsLine } from '../../kit/seed.js';
import { importNdjson } from '../../../src/store/ndjson.js';
import { MetricsStore } from '../../../src/store/metrics.js';
import { rollupOnce } from '../../../src/rollup/rollup.js';
import { applyRetention } from '../../../src/rollup/retention.js';
import { periodsOf, type PeriodKind } from '../../../src/model/periods.js';
import { pageCounts, tierSegments, totalsOf, type PeriodPages } from '../../../src/store/page-counts.js';
import type { DB } from '../../../src/store/db.js';

/** The fake clock: 3 April 2026, 10:00 UTC (Berlin on summer time since 29 March). */
const NOW = Date.UTC(2026, 3, 3, 10);
const START = Date.UTC(2026, 1, 1);
const STEP = 15 * MINUTE;
const BRIDGE = 6 * HOUR;
const BERLIN = 'Europe/Berlin';

/** Pages printed in the 15 minutes before reading time t: varies by hour and day, never 0 in the daytime. */
function printedBefore(t: number): number {
  const h = new Date(t).getUTCHours();
  return h >= 6 && h < 18 ? 1 + ((t / STEP) % 4) + (new Date(t).getUTCDate() % 3) : (t / STEP) % 2;
}

/** A printer's counter over the history: readings every 15 minutes; `mutate` changes or drops one. */
function history(mutate: (t: number, v: number) => number | null = (_t, v) => v): Map<number, number> {
  const out = new Map<number, number>();
  let v = 10_000;
  for (let t = START; t < NOW; t += STEP) {
    if (t > START) v += printedBefore(t);
    const m = mutate(t, v);
    if (m !== null) out.set(t, m);
  }
  return out;
}

const PLAIN = 'PC-PLAIN';
const RESET = 'PC-RESET';
const GAP = 'PC-GAP';
const OLD = 'PC-OLD';
const truth = history();
/** A board replaced at each of these times: the counter starts again at 100 (plus what follows). */
const RESETS = [
  Date.UTC(2026, 3, 1, 9, 7), // raw
  Date.UTC(2026, 2, 20, 11, 20), // inside an hourly bucket (11:00-12:00)
  Date.UTC(2026, 1, 20, 13, 0), // inside a daily bucket
];
/** The first reading at or after t. */
const readingAt = (t: number) => Math.ceil(t / STEP) * STEP;
/** The new board's counter: 100 at the first reading after the reset, then what the printer prints. */
function afterResets(t: number, v: number): number {
  const last = RESETS.filter((r) => readingAt(r) <= t).sort((a, b) => b - a)[0];
  return last === undefined ? v : 100 + v - truth.get(readingAt(last))!;
}
// Gap 1: nothing from 30 March 20:00 UTC to 1 April 06:00 UTC (31 March has no reading), the
// counter moving across it. Gap 2: the printer off 28 March 19:00-22:00 UTC with no page printed.
const GAP1: [number, number] = [Date.UTC(2026, 2, 30, 20), Date.UTC(2026, 3, 1, 6)];
const GAP2: [number, number] = [Date.UTC(2026, 2, 28, 19), Date.UTC(2026, 2, 28, 22)];

let db: DB;
let store: MetricsStore;

const lines = (serial: string, h: Map<number, number>, colour = false): MetricsLine[] =>
  [...h].map(([t, v]) => metrics(serial, 'raw', t, colour ? { page_count: v, color_pages: Math.floor(v / 4), mono_pages: v - Math.floor(v / 4) } : { page_count: v }));

before(async () => {
  ({ db } = openTemp('page-counts-'));
  const gapped = new Map([...truth].filter(([t]) => !(t > GAP1[0] && t < GAP1[1]) && !(t > GAP2[0] && t < GAP2[1])));
  // Gap 2 prints nothing: the counter after it is where it was before it (the rest shifted down).
  const during2 = [...truth].filter(([t]) => t > GAP2[0] && t <= GAP2[1]).reduce((a, [t]) => a + printedBefore(t), 0);
  for (const [t, v] of gapped) if (t >= GAP2[1]) gapped.set(t, v - during2);
  const seed = ndjson([
    device(PLAIN, '192.0.2.1', NOW), device(RESET, '192.0.2.2', NOW), device(GAP, '192.0.2.3', NOW), device(OLD, '192.0.2.4', NOW),
    ...lines(PLAIN, truth, true), ...lines(RESET, history(afterResets)), ...lines(GAP, gapped),
    // Two years ago: only monthly rows are left of it.
    ...[0, 1, 2].map((m) => metrics(OLD, 'monthly', Date.UTC(2024, m, 1), { page_count: 5000 + m * 1000 })),
  ]);
  await importNdjson(db, Readable.from([seed]));
  // The box's own passes at the fake time: roll up every closed bucket, then drop what each tier
  // no longer serves (raw before 27 March, hourly before 4 March).
  await rollupOnce(db, new Date(NOW), { yieldFn: async () => {} });
  await applyRetention(db, new Date(NOW), { maintain: false, yieldFn: async () => {} });
  store = new MetricsStore(db);
  // The 2024 months were imported as monthly rows: the other tiers hold nothing of them.
  const oldestRaw = db.prepare('SELECT min(ts) FROM metrics_raw').pluck().get() as number;
  assert.equal(oldestRaw, Date.UTC(2026, 2, 27), 'raw rows from 27 March on');
  assert.equal(db.prepare('SELECT min(ts) FROM metrics_hourly').pluck().get(), Date.UTC(2026, 2, 4), 'hourly rows from 4 March on');
});

function count(serial: string, kind: PeriodKind, zone: string, from: number, to: number): PeriodPages[] {
  return pageCounts(db, store, serial, kind, periodsOf(kind, zone, from, to, 2000)!, { now: NOW, bridgeMs: BRIDGE });
}
/** The true pages between two reading times. */
const between = (a: number, b: number) => truth.get(b)! - truth.get(a)!;
const byLabel = (ps: PeriodPages[], label: string) => {
  const p = ps.find((x) => x.label === label);
  assert.ok(p, `a period ${label}`);
  return p;
};

test('days in Berlin from raw and hourly rows are exact, the DST day has 23 hours, and periods tell their tier', () => {
  const days = count(PLAIN, 'day', BERLIN, Date.UTC(2026, 2, 4), NOW);
  // Local midnight: 23:00 UTC in winter, 22:00 UTC in summer.
  const mar28 = byLabel(days, '2026-03-28');
  assert.equal(mar28.start, Date.UTC(2026, 2, 27, 23));
  const dst = byLabel(days, '2026-03-29');
  assert.equal(dst.end - dst.start, 23 * HOUR, 'the day the clocks go forward');
  assert.equal(dst.end, Date.UTC(2026, 2, 29, 22));
  for (const p of days) {
    if (p.start < Date.UTC(2026, 2, 5)) continue; // 4 March Berlin began on 3 March UTC, before the hourly rows
    // Today so far: up to the last reading.
    assert.equal(p.pages, between(p.start, p.end > NOW ? NOW - STEP : p.end), `${p.label} (${p.tier})`);
    assert.equal(p.reset, false);
    // Today: up to now, and the last reading was a quarter of an hour ago.
    if (p.end <= NOW) assert.equal(p.coverage, 1, p.label);
    else assert.ok(p.coverage > 0.95 && p.coverage < 1, p.label);
  }
  assert.equal(byLabel(days, '2026-03-10').tier, 'hourly');
  assert.equal(byLabel(days, '2026-03-30').tier, 'raw');
  // Mono and colour where reported, from their own counters.
  const mar10 = byLabel(days, '2026-03-10');
  const q = (t: number) => Math.floor(truth.get(t)! / 4);
  assert.equal(mar10.color_pages, q(mar10.end) - q(mar10.start));
  assert.equal(mar10.mono_pages, mar10.pages! - mar10.color_pages!);
});

test('a month end: March in Berlin from hourly and raw rows, February in UTC from daily rows, both exact', () => {
  const months = count(PLAIN, 'month', BERLIN, Date.UTC(2026, 2, 5), NOW);
  const march = byLabel(months, '2026-03');
  assert.equal(march.start, Date.UTC(2026, 1, 28, 23), 'March begins at midnight Berlin, 23:00 UTC');
  assert.equal(march.end, Date.UTC(2026, 2, 31, 22), 'and ends at midnight Berlin on summer time');
  // 28 February 23:00 UTC to 4 March is daily rows (a bucket boundary inside it): the share of
  // 28 February is estimated by time. The rest is exact.
  const exactPart = between(Date.UTC(2026, 2, 1), march.end);
  const feb28 = between(Date.UTC(2026, 1, 28), Date.UTC(2026, 2, 1));
  assert.ok(march.pages! >= exactPart && march.pages! <= exactPart + feb28, `${march.pages} within [${exactPart}, ${exactPart + feb28}]`);
  assert.equal(march.tier, 'daily');
  const utc = count(PLAIN, 'month', 'UTC', Date.UTC(2026, 1, 1), Date.UTC(2026, 2, 31));
  assert.deepEqual(utc.map((p) => p.label), ['2026-02', '2026-03']);
  assert.equal(utc[0].pages, between(Date.UTC(2026, 1, 1), Date.UTC(2026, 2, 1)), 'February from daily rows');
  assert.equal(utc[1].pages, between(Date.UTC(2026, 2, 1), Date.UTC(2026, 3, 1)), 'March from daily, hourly and raw rows');
  // Days in Berlin from daily rows (UTC buckets): estimated, but what is shared is not lost.
  const febDays = count(PLAIN, 'day', BERLIN, Date.UTC(2026, 1, 2), Date.UTC(2026, 1, 26));
  const sum = totalsOf(febDays).pages!;
  // Only the ends are estimated: each by at most the pages of the UTC day it falls in.
  const first = febDays[0].start;
  const last = febDays[febDays.length - 1].end;
  const slack = between(first - 23 * HOUR, first + HOUR) + between(last - 23 * HOUR, last + HOUR);
  assert.ok(Math.abs(sum - between(first, last)) <= slack, `${sum} ≈ ${between(first, last)} (± ${slack})`);
  assert.ok(febDays.every((p) => p.tier === 'daily' && p.pages !== null && p.pages > 0));
});

test('weeks start on Monday (ISO) and hold their seven days', () => {
  const weeks = count(PLAIN, 'week', BERLIN, Date.UTC(2026, 2, 9), NOW);
  assert.equal(weeks[0].label, '2026-W11');
  assert.equal(new Date(weeks[0].start + HOUR).getUTCDay(), 1, 'a Monday');
  const w13 = byLabel(weeks, '2026-W13');
  assert.equal(w13.end - w13.start, 7 * DAY - HOUR, 'the week of the DST change');
  const days = count(PLAIN, 'day', BERLIN, w13.start, w13.end - 1);
  assert.equal(days.length, 7);
  assert.equal(w13.pages, totalsOf(days).pages);
});

test('a counter reset counts nothing across it and never goes negative: raw, inside an hourly bucket, inside a daily bucket', () => {
  const days = count(RESET, 'day', 'UTC', Date.UTC(2026, 1, 1), NOW);
  assert.ok(days.every((p) => p.pages === null || p.pages >= 0), 'no negative period');
  for (const r of RESETS) {
    const day = days.find((p) => p.start <= r && r < p.end)!;
    assert.equal(day.reset, true, `${day.label} marked`);
    assert.ok(day.coverage < 1);
    const full = between(day.start, day.end);
    assert.ok(day.pages! < full, `${day.label}: ${day.pages} pages, a lower bound of ${full}`);
    // A daily bucket holding the reset counts nothing of its day; finer rows lose only the reset's interval.
    if (day.tier === 'daily') assert.equal(day.pages, 0, day.label);
    else assert.ok(day.pages! > full / 2, `${day.label}: ${day.pages} of ${full}`);
  }
  // In raw rows only the 15 minutes holding the reset are lost.
  const raw = days.find((p) => p.label === '2026-04-01')!;
  const slot = RESETS[0] - (RESETS[0] % STEP);
  assert.equal(raw.pages, between(raw.start, raw.end) - between(slot, slot + STEP));
  // The days around are whole again.
  const after = days.find((p) => p.label === '2026-04-02')!;
  assert.equal(after.pages, between(after.start, after.end));
  assert.equal(after.reset, false);
});

test('a gap: a day without readings is unknown, the pages across it are not guessed; a gap with no pages printed is complete', () => {
  const days = count(GAP, 'day', 'UTC', Date.UTC(2026, 2, 27), NOW);
  const mar31 = byLabel(days, '2026-03-31');
  assert.equal(mar31.pages, null, 'no reading: unknown');
  assert.equal(mar31.coverage, 0);
  const mar30 = byLabel(days, '2026-03-30');
  assert.equal(mar30.pages, between(mar30.start, GAP1[0]), 'counted up to the last reading before the gap');
  assert.equal(mar30.coverage, Math.round((20 / 24) * 1000) / 1000);
  const apr1 = byLabel(days, '2026-04-01');
  assert.equal(apr1.pages, between(GAP1[1], apr1.end), 'counted from the first reading after it');
  assert.ok(apr1.coverage < 1);
  const mar28 = byLabel(days, '2026-03-28');
  assert.equal(mar28.coverage, 1, 'the printer printed nothing while off: known');
  const off = [...truth].filter(([t]) => t > GAP2[0] && t <= GAP2[1]).reduce((a, [t]) => a + printedBefore(t), 0);
  assert.equal(mar28.pages, between(mar28.start, mar28.end) - off);
  // Totals: the known periods only.
  assert.equal(totalsOf(days).pages, days.reduce((a, p) => a + (p.pages ?? 0), 0));
  assert.equal(totalsOf(days).color_pages, null, 'colour not reported');
});

test('history left only as monthly rows: months are known, days and weeks are not', () => {
  const months = count(OLD, 'month', 'UTC', Date.UTC(2024, 0, 1), Date.UTC(2024, 2, 31));
  // Each monthly row holds one reading here (min = max): the increases are between the months.
  assert.deepEqual(months.map((p) => [p.label, p.pages, p.tier]), [['2024-01', 1000, 'monthly'], ['2024-02', 1000, 'monthly'], ['2024-03', 0, 'monthly']]);
  const days = count(OLD, 'day', 'UTC', Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 10));
  assert.ok(days.every((p) => p.pages === null && p.tier === null));
  assert.equal(totalsOf(days).pages, null);
});

test('the tiers meet at bucket boundaries of the coarser one: a printer first read this morning is not counted twice', () => {
  const morning = Date.UTC(2026, 3, 3, 8, 20);
  // Raw from 08:20, its hours rolled up already (from 08:00), its day too.
  const segs = tierSegments({ raw: morning, hourly: Date.UTC(2026, 3, 3, 8), daily: Date.UTC(2026, 3, 3) }, ['raw', 'hourly', 'daily', 'monthly']);
  assert.deepEqual(segs.map((s) => [s.tier, s.lo, s.hi]), [
    ['raw', Date.UTC(2026, 3, 3, 9), Number.MAX_SAFE_INTEGER],
    ['hourly', Date.UTC(2026, 3, 3), Date.UTC(2026, 3, 3, 9)],
    ['daily', Date.UTC(2026, 3, 1), Date.UTC(2026, 3, 3)],
    ['monthly', Number.MIN_SAFE_INTEGER, Date.UTC(2026, 3, 1)],
  ]);
  // A tier with nothing stored still ends the coarser one at its bucket boundary; the coarsest
  // one asked for serves all before.
  assert.deepEqual(tierSegments({ raw: morning }, ['raw', 'hourly', 'daily']).map((s) => [s.tier, s.lo, s.hi]), [
    ['raw', Date.UTC(2026, 3, 3, 9), Number.MAX_SAFE_INTEGER],
    ['hourly', Date.UTC(2026, 3, 3), Date.UTC(2026, 3, 3, 9)],
    ['daily', Number.MIN_SAFE_INTEGER, Date.UTC(2026, 3, 3)],
  ]);
});

test('period boundaries: a 25-hour day in Berlin, a day that starts at 01:00 where the clocks skip midnight (Santiago), ISO weeks across a year end', () => {
  const hours = (zone: string, from: string, to: string) =>
    periodsOf('day', zone, Date.parse(from), Date.parse(to), 100)!.map((p) => [p.label, new Date(p.start).toISOString(), (p.end - p.start) / HOUR]);
  assert.deepEqual(hours(BERLIN, '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z'), [
    ['2026-10-24', '2026-10-23T22:00:00.000Z', 24], ['2026-10-25', '2026-10-24T22:00:00.000Z', 25], ['2026-10-26', '2026-10-25T23:00:00.000Z', 24],
  ]);
  // Chile moves from -04:00 to -03:00 at midnight on 6 September 2026: that day begins at 01:00.
  assert.deepEqual(hours('America/Santiago', '2026-09-05T12:00:00Z', '2026-09-07T12:00:00Z'), [
    ['2026-09-05', '2026-09-05T04:00:00.000Z', 24], ['2026-09-06', '2026-09-06T04:00:00.000Z', 23], ['2026-09-07', '2026-09-07T03:00:00.000Z', 24],
  ]);
  // 1 January 2027 is a Friday: its week is 2026-W53, from Monday 28 December.
  const weeks = periodsOf('week', 'UTC', Date.UTC(2026, 11, 20), Date.UTC(2027, 0, 5), 10)!;
  assert.deepEqual(weeks.map((w) => [w.label, new Date(w.start).toISOString().slice(0, 10)]),
    [['2026-W51', '2026-12-14'], ['2026-W52', '2026-12-21'], ['2026-W53', '2026-12-28'], ['2027-W01', '2027-01-04']]);
  assert.equal(periodsOf('day', 'UTC', 0, 1100 * DAY, 1100), undefined, 'more than the limit');
});
