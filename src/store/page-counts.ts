// Pages per period: how many pages a printer printed each day, ISO week or month in a
// time zone, from the stored meter history (GET /api/devices/page-counts, the printer page's bars).
//
// The history: one series of counter readings per counter (page_count, mono_pages, color_pages),
// each time from the finest tier that still holds it. Raw readings are points; an aggregated row
// (hourly, daily, monthly: tier-buckets.ts) is two points, its bucket's smallest reading at the
// bucket's start and its largest at the bucket's end (counters only grow, so min and max are the
// first and last readings). Where one tier's rows end the next finer tier takes over at a bucket
// boundary of the coarser one, so no time is counted twice. Day and week periods never use monthly
// rows (a month's pages cannot be told apart by day): such times are unknown.
//
// A period's pages are the increases between consecutive points, each shared among the periods
// its interval overlaps by time (an even rate between two readings; readings are minutes or an
// hour apart, so that is where a boundary falls). Except:
// - a gap: two readings further apart than `bridgeMs` (the box was off, the printer did not answer)
//   between which the counter went up count nothing: the pages are not known to have been printed
//   in one period or the other (if the counter did not move, nothing was printed: that is known).
//   A period with no reading at all is unknown (null), never 0.
// - a counter reset (a replaced board: the counter goes down; the box stores such a reading only
//   once a person accepted it, discovery/counter-check.ts): the interval in which it went down
//   counts nothing (how much the new counter had printed since is not known) and the period is
//   marked `reset`. An aggregated bucket holding the reset (its smallest reading is below the
//   reading before it, its largest is not) counts nothing inside either. So a period's pages are
//   never negative; across a reset they are a lower bound.
// `coverage` says what share of the period (its elapsed part) lies between readings that counted.
import type { DB } from './db.js';
import type { MetricsStore } from './metrics.js';
import type { Tier } from '../model/device.js';
import { BUCKET_MS, TABLE } from './keys.js';
import { TIER_DEFS } from './tier-buckets.js';
import type { Period, PeriodKind } from '../model/periods.js';

export const PAGE_COUNTERS = ['page_count', 'mono_pages', 'color_pages'] as const;
type Counter = (typeof PAGE_COUNTERS)[number];

/** One period's pages: null where not known (no reading in the period, or the counter not reported). */
export interface PeriodPages {
  label: string;
  start: number;
  end: number;
  pages: number | null;
  mono_pages: number | null;
  color_pages: number | null;
  /** Share of the period's elapsed time (up to now) between readings that counted, 0..1. */
  coverage: number;
  /** A counter went down in the period (its pages around the reset are not counted). */
  reset: boolean;
  /** The coarsest tier whose readings fall in the period, or null when none does. */
  tier: Tier | null;
}

/** A counter reading in the series: a raw reading, or one end of an aggregated row. */
export interface SeriesPoint {
  t: number;
  v: number;
  tier: Tier;
  /** The first point of an aggregated row: the next point is the same row's end. */
  opensRow?: boolean;
}

const TIER_RANK: Record<Tier, number> = { raw: 0, hourly: 1, daily: 2, monthly: 3 };

/**
 * Sums one counter's series into `periods` (sorted, contiguous). Returns per period the pages (not
 * rounded), the covered ms, how many points fall inside, the coarsest tier among them, and resets.
 */
export function apportion(points: SeriesPoint[], periods: Period[], bridgeMs: number): {
  pages: number[]; covered: number[]; points: number[]; tier: (Tier | null)[]; reset: boolean[];
} {
  const n = periods.length;
  const out = {
    pages: new Array<number>(n).fill(0), covered: new Array<number>(n).fill(0), points: new Array<number>(n).fill(0),
    tier: new Array<Tier | null>(n).fill(null), reset: new Array<boolean>(n).fill(false),
  };
  if (!n) return out;
  const first = periods[0].start;
  const last = periods[n - 1].end;
  /** Index of the period holding t, or -1 outside them all (binary search: periods are sorted). */
  const indexOf = (t: number): number => {
    if (t < first || t >= last) return -1;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (periods[mid].start <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  for (const p of points) {
    const i = indexOf(p.t);
    if (i < 0) continue;
    out.points[i]++;
    const cur = out.tier[i];
    if (cur === null || TIER_RANK[p.tier] > TIER_RANK[cur]) out.tier[i] = p.tier;
  }
  for (let k = 0; k + 1 < points.length; k++) {
    const p = points[k];
    const q = points[k + 1];
    if (q.t < first || p.t >= last) continue;
    const delta = q.v - p.v;
    const prev = k > 0 ? points[k - 1] : undefined;
    // A bucket holding the reset: it was entered going down and still holds the old counter's top.
    const resetInside = p.opensRow === true && prev !== undefined && p.v < prev.v && q.v >= prev.v;
    const isReset = delta < 0 || resetInside;
    // A gap the counter moved across: when the pages were printed is not known, so not counted. One
    // it did not move across is known: nothing was printed (a printer switched off for the night).
    if (!isReset && !p.opensRow && delta > 0 && q.t - p.t > bridgeMs) continue;
    const span = q.t - p.t;
    if (span <= 0) {
      // Same instant: the whole step belongs to the period holding it.
      const i = indexOf(q.t);
      if (i >= 0) {
        if (isReset) out.reset[i] = true;
        else out.pages[i] += delta;
      }
      continue;
    }
    for (let i = Math.max(0, indexOf(Math.max(p.t, first))); i < n && periods[i].start < q.t; i++) {
      const overlap = Math.min(q.t, periods[i].end) - Math.max(p.t, periods[i].start);
      if (overlap <= 0) continue;
      if (isReset) {
        out.reset[i] = true;
        continue;
      }
      out.pages[i] += (delta * overlap) / span;
      out.covered[i] += overlap;
    }
  }
  return out;
}

/**
 * Each counter's series from stored rows (in time order, as MetricsStore.pageCounterRows gives
 * them: ts, then each counter's first and last reading), skipping readings without that counter.
 */
export function seriesOf(rows: { tier: Tier; cells: unknown[] }[]): Record<Counter, SeriesPoint[]> {
  const series = Object.fromEntries(PAGE_COUNTERS.map((c) => [c, [] as SeriesPoint[]])) as Record<Counter, SeriesPoint[]>;
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  for (const { tier, cells } of rows) {
    const ts = cells[0] as number;
    const end = tier === 'raw' ? ts : TIER_DEFS[tier].next(ts) - 1;
    PAGE_COUNTERS.forEach((c, k) => {
      const lo = cells[1 + 2 * k];
      const hi = cells[2 + 2 * k];
      if (!num(lo) || !num(hi)) return;
      if (tier === 'raw') series[c].push({ t: ts, v: lo, tier });
      else series[c].push({ t: ts, v: lo, tier, opensRow: true }, { t: end, v: hi, tier });
    });
  }
  return series;
}

/** The time of the oldest row of an aggregated table (any device), through its bucketed key. */
function oldestTs(db: DB, table: string): number | undefined {
  const b = BUCKET_MS[table]!;
  const v = db.prepare(`SELECT min(ts) FROM ${table} WHERE ts / ${b} =
    (SELECT ts / ${b} FROM ${table} INDEXED BY ${table}_bucket ORDER BY ts / ${b} LIMIT 1)`).pluck().get();
  return typeof v === 'number' ? v : undefined;
}

/** The first bucket start of `parent` at or after t. */
function ceilTo(parent: Exclude<Tier, 'raw'>, t: number): number {
  const def = TIER_DEFS[parent];
  const s = def.start(t);
  return s === t ? t : def.next(s);
}

/**
 * Which tier serves which time: [lo, hi) per tier, finest first. A tier serves from the first
 * bucket boundary of the next coarser tier at or after its oldest stored row (retention deletes
 * a tier's rows only once the coarser tier holds their bucket, rollup/retention.ts). Each tier's
 * start is a bucket boundary of the next coarser one, so no bucket is counted twice.
 */
export function tierSegments(oldest: Partial<Record<Tier, number>>, tiers: readonly Tier[]): { tier: Tier; lo: number; hi: number }[] {
  const out: { tier: Tier; lo: number; hi: number }[] = [];
  let hi = Number.MAX_SAFE_INTEGER;
  const parents: Record<Tier, Exclude<Tier, 'raw'> | undefined> = { raw: 'hourly', hourly: 'daily', daily: 'monthly', monthly: undefined };
  for (const tier of tiers) {
    const parent = parents[tier];
    const o = oldest[tier];
    // The coarsest tier used serves everything before; a finer one from its oldest row on.
    let lo = parent === undefined || tier === tiers[tiers.length - 1]
      ? Number.MIN_SAFE_INTEGER
      : o === undefined ? hi : Math.min(hi, ceilTo(parent, o));
    // Held back by the finer tier's start (a tier newer than its parent's bucket: a printer first
    // read this morning, rolled up already): the parent's bucket holding it is not the parent's
    // to count, or its time would count twice.
    if (parent !== undefined && lo !== Number.MIN_SAFE_INTEGER) lo = TIER_DEFS[parent].start(lo);
    if (lo < hi) out.push({ tier, lo, hi });
    hi = lo;
  }
  return out;
}

export interface PageCountOptions {
  now: number;
  /** Readings further apart than this are a gap (ms). */
  bridgeMs: number;
}

/** Tiers whose buckets can tell a period of this kind apart. */
const TIERS_FOR: Record<PeriodKind, readonly Tier[]> = {
  day: ['raw', 'hourly', 'daily'],
  week: ['raw', 'hourly', 'daily'],
  month: ['raw', 'hourly', 'daily', 'monthly'],
};
/** Read beyond the periods by this much: the readings on either side of the first and last boundary. */
const MARGIN_MS = 32 * 86_400_000;

/** One printer's pages in each of `periods` (of `kind`, sorted and contiguous). */
export function pageCounts(
  db: DB, metrics: MetricsStore, serial: string, kind: PeriodKind, periods: Period[], opts: PageCountOptions,
): PeriodPages[] {
  if (!periods.length) return [];
  const tiers = TIERS_FOR[kind];
  const from = periods[0].start - MARGIN_MS - opts.bridgeMs;
  const to = periods[periods.length - 1].end + MARGIN_MS + opts.bridgeMs;
  const rows = db.transaction(() => {
    const oldest: Partial<Record<Tier, number>> = {
      raw: metrics.oldestRawTs(), hourly: oldestTs(db, TABLE.hourly), daily: oldestTs(db, TABLE.daily),
    };
    // Coarsest first: the series runs oldest to newest.
    return tierSegments(oldest, tiers).reverse().flatMap(({ tier, lo, hi }) => {
      const a = Math.max(lo, from);
      const b = Math.min(hi - 1, to);
      return a <= b ? metrics.pageCounterRows(tier, serial, a, b).map((cells) => ({ tier, cells })) : [];
    });
  })();
  const series = seriesOf(rows);
  const sums = Object.fromEntries(PAGE_COUNTERS.map((c) => [c, apportion(series[c], periods, opts.bridgeMs)])) as Record<Counter, ReturnType<typeof apportion>>;
  // Coverage and tier from the total counter, or the first counter the printer reports.
  const main = PAGE_COUNTERS.find((c) => series[c].length) ?? 'page_count';
  return periods.map((p, i) => {
    const elapsed = Math.min(p.end, opts.now) - p.start;
    const value = (c: Counter) => (sums[c].points[i] ? Math.round(sums[c].pages[i]) : null);
    return {
      label: p.label,
      start: p.start,
      end: p.end,
      pages: value('page_count'),
      mono_pages: value('mono_pages'),
      color_pages: value('color_pages'),
      // A period without a reading is unknown: nothing of it is covered, whatever spans it.
      coverage: elapsed > 0 && sums[main].points[i] ? Math.min(1, Math.round((sums[main].covered[i] / elapsed) * 1000) / 1000) : 0,
      reset: PAGE_COUNTERS.some((c) => sums[c].reset[i]),
      tier: sums[main].tier[i],
    };
  });
}

/** Sum of the known periods' pages per counter; null for a counter no period knows. */
export function totalsOf(periods: PeriodPages[]): { pages: number | null; mono_pages: number | null; color_pages: number | null } {
  const sum = (k: 'pages' | 'mono_pages' | 'color_pages') => {
    const known = periods.map((p) => p[k]).filter((v): v is number => v !== null);
    return known.length ? known.reduce((a, b) => a + b, 0) : null;
  };
  return { pages: sum('pages'), mono_pages: sum('mono_pages'), color_pages: sum('color_pages') };
}
