// Roll-ups: raw -> hourly -> daily -> monthly (decisions.md, "Metric tiers").
//
// Buckets are UTC: an hour and a day are fixed lengths of epoch ms, a month runs from Date.UTC(y, m, 1)
// to Date.UTC(y, m + 1, 1). Nothing here reads the local time zone, so DST and TZ never matter.
//
// Progress: rollup_state(tier, done_until) says every bucket of that tier starting before done_until
// is closed and written. A pass rolls the closed buckets in [done_until, first open bucket) in
// batches (one bucket of all devices; hourly: `hourlyBatch` hours), writes a batch in one
// transaction and advances done_until in that same transaction:
// a crash at any point leaves the tier at a bucket boundary, and the next pass carries on from there.
// Each bucket is recomputed from its source rows and upserted, so re-running changes nothing.
//
// The upsert only replaces a row when the recomputation saw MORE samples than the stored row.
// Source rows are insert-only, so a recomputation with more samples means late arrivals (refresh);
// one with fewer means the source was already thinned by retention, and must not shrink the bucket.
import type { Database, Statement } from 'better-sqlite3';
import { METRICS_COUNTERS } from '../model/serialize.js';
import { BUCKET_MS, bucketOf, keyColumns, keyMatch, keyRange } from '../store/keys.js';
import { AGGREGATE_COLUMNS } from '../store/metrics.js';
import { nextTurn } from '../loop/pace.js';

export type AggTier = 'hourly' | 'daily' | 'monthly';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export interface TierDef {
  tier: AggTier;
  table: string;
  /** Table the tier is computed from. */
  source: string;
  /** Tier whose watermark bounds this one (undefined: computed from raw). */
  sourceTier?: AggTier;
  start(ts: number): number;
  next(start: number): number;
  /** Buckets per transaction (hourly: overridden by RollupOptions.hourlyBatch). */
  batch: number;
}

const floorTo = (ts: number, len: number) => Math.floor(ts / len) * len;
export const hourStart = (ts: number) => floorTo(ts, HOUR_MS);
export const dayStart = (ts: number) => floorTo(ts, DAY_MS);
export function monthStart(ts: number): number {
  const d = new Date(ts);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
export function nextMonth(start: number): number {
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export const TIER_DEFS: Record<AggTier, TierDef> = {
  hourly: { tier: 'hourly', table: 'metrics_hourly', source: 'metrics_raw', start: hourStart, next: (s) => s + HOUR_MS, batch: 1 },
  daily: {
    tier: 'daily', table: 'metrics_daily', source: 'metrics_hourly', sourceTier: 'hourly',
    start: dayStart, next: (s) => s + DAY_MS, batch: 1,
  },
  monthly: {
    tier: 'monthly', table: 'metrics_monthly', source: 'metrics_daily', sourceTier: 'daily',
    start: monthStart, next: nextMonth, batch: 1,
  },
};

type Row = Record<string, unknown>;

interface Stmts {
  counters: Statement;
  tonerLast: Statement;
  tonerAvg: Statement;
  extraMax: Statement;
  upsert: Statement;
  firstBucket: Statement;
  firstTsInBucket: Statement;
  uncovered: Statement;
}
const stmtCache = new WeakMap<Database, Map<AggTier, Stmts>>();

// A number stored in a counter column, else NULL (a stray text value is skipped, never an error).
const numeric = (col: string) => `CASE WHEN typeof(${col}) IN ('integer', 'real') THEN ${col} END`;
// A JSON object text, else NULL: json_each/json_type are only reached for valid JSON, so a bad
// cell is skipped instead of aborting the roll-up.
const jsonObject = (col: string) =>
  `CASE WHEN json_valid(${col}) THEN CASE WHEN json_type(${col}) = 'object' THEN ${col} END END`;

// Source ranges are read through the source's bucketed key (keys.ts keyRange): a parent bucket is
// one or two source buckets (an hour of raw, a day of hourly, a month of daily), all devices.
// The aggregation runs in SQLite (GROUP BY serial over that range): returning every source
// row to JavaScript costs several microseconds a row, the SQL aggregates far less.
function stmts(db: Database, def: TierDef): Stmts {
  let m = stmtCache.get(db);
  if (!m) stmtCache.set(db, (m = new Map()));
  let s = m.get(def.tier);
  if (s) return s;
  const src = def.source;
  const b = BUCKET_MS[src]!;
  const range = keyRange(src, '@start', '@end');
  const fromRaw = src === 'metrics_raw';
  const counterCols = METRICS_COUNTERS.map((c) => {
    if (fromRaw) {
      const v = numeric(c);
      return `min(${v}) AS ${c}_min, max(${v}) AS ${c}_max, avg(${v}) AS ${c}_avg`;
    }
    const lo = numeric(`${c}_min`), hi = numeric(`${c}_max`), avg = numeric(`${c}_avg`);
    return `min(${lo}) AS ${c}_min, max(${hi}) AS ${c}_max,
      sum(${avg} * sample_count) / sum(CASE WHEN ${avg} IS NOT NULL THEN sample_count END) AS ${c}_avg`;
  }).join(',\n');
  const weight = fromRaw ? '1' : 'r.sample_count';
  const tonerCol = fromRaw ? 'toner_levels' : 'toner_last';
  const avgCol = fromRaw ? 'toner_levels' : 'toner_avg';
  const extraCol = fromRaw ? 'extra' : 'extra_max';
  s = {
    counters: db.prepare(
      `SELECT serial, ${fromRaw ? 'count(*)' : 'sum(sample_count)'} AS sample_count, ${counterCols}
       FROM ${range} GROUP BY serial ORDER BY serial`,
    ),
    // The last non-empty reading of each serial (SQLite takes bare columns from the max(ts) row).
    tonerLast: db.prepare(
      `SELECT serial, ${tonerCol} AS toner, max(ts * 1) FROM ${range}
       AND ${jsonObject(tonerCol)} IS NOT NULL AND ${tonerCol} <> '{}' GROUP BY serial`,
    ),
    // Average per key of the numeric values (toner values are not guaranteed to be numbers); a
    // negative one (Printer-MIB's -2 unknown, -3 some remaining) is no level to average.
    tonerAvg: db.prepare(
      `SELECT serial, json_group_object(key, v) AS toner FROM (
         SELECT r.serial AS serial, j.key AS key, sum(j.value * ${weight}) * 1.0 / sum(${weight}) AS v
         FROM ${keyRange(src, '@start', '@end', 'r').replace(' WHERE ', ` CROSS JOIN json_each(${jsonObject(`r.${avgCol}`)}) j WHERE `)}
           AND j.type IN ('integer', 'real') AND j.value >= 0
         GROUP BY r.serial, j.key ORDER BY r.serial, j.key)
       GROUP BY serial`,
    ),
    // The category counters: each one's max over the bucket (cumulative, like the columns above).
    extraMax: db.prepare(
      `SELECT serial, json_group_object(key, v) AS extra FROM (
         SELECT r.serial AS serial, j.key AS key, max(j.value) AS v
         FROM ${keyRange(src, '@start', '@end', 'r').replace(' WHERE ', ` CROSS JOIN json_each(${jsonObject(`r.${extraCol}`)}) j WHERE `)}
           AND j.type = 'integer'
         GROUP BY r.serial, j.key ORDER BY r.serial, j.key)
       GROUP BY serial`,
    ),
    upsert: db.prepare(
      `INSERT INTO ${def.table} (${AGGREGATE_COLUMNS.join(', ')}) VALUES (${AGGREGATE_COLUMNS.map((c) => '@' + c).join(', ')})
       ON CONFLICT (${keyColumns(def.table)}) DO UPDATE SET ${AGGREGATE_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}
       WHERE excluded.sample_count > ${def.table}.sample_count`,
    ),
    // nextSourceTs: the first bucket holding rows (one seek), then the earliest row in it.
    firstBucket: db.prepare(`SELECT ts / ${b} FROM ${src} INDEXED BY ${src}_bucket WHERE ts / ${b} >= ? ORDER BY ts / ${b} LIMIT 1`).pluck(),
    firstTsInBucket: db.prepare(`SELECT min(ts) FROM ${src} INDEXED BY ${src}_bucket WHERE ts / ${b} = ? AND ts >= ?`).pluck(),
    // Serials whose source rows in [start, end) are not all counted by the stored bucket. From raw,
    // counting needs only serial and ts: the bucketed key index covers both (no table rows read).
    uncovered: db.prepare(
      `SELECT count(*) FROM (SELECT serial, ${fromRaw ? 'count(*)' : 'sum(sample_count)'} AS n
         FROM ${range} GROUP BY serial) s
       LEFT JOIN ${def.table} b ON ${keyMatch('b', def.table, 's.serial', '@start')}
       WHERE b.sample_count IS NULL OR b.sample_count < s.n`,
    ).pluck(),
  };
  m.set(def.tier, s);
  return s;
}

/**
 * Recomputes the buckets of one tier starting at `start` from the source rows in [start, next(start))
 * and upserts them (only growing a stored bucket). Call inside a transaction. Returns rows written.
 */
export function rollBucket(db: Database, def: TierDef, start: number): number {
  return upsertRows(db, def, bucketRows(db, def, start));
}

/** The aggregated rows of the bucket at `start`, one per serial, computed from its source rows. */
function bucketRows(db: Database, def: TierDef, start: number): Row[] {
  const s = stmts(db, def);
  const p = { start, end: def.next(start) };
  const last = new Map<string, string>();
  for (const r of s.tonerLast.all(p) as { serial: string; toner: string }[]) last.set(r.serial, r.toner);
  const avg = new Map<string, string>();
  for (const r of s.tonerAvg.all(p) as { serial: string; toner: string }[]) if (r.toner !== '{}') avg.set(r.serial, r.toner);
  const extra = new Map<string, string>();
  for (const r of s.extraMax.all(p) as { serial: string; extra: string }[]) if (r.extra !== '{}') extra.set(r.serial, r.extra);
  const rows: Row[] = [];
  for (const row of s.counters.all(p) as Row[]) {
    if (!((row.sample_count as number) > 0)) continue;
    row.ts = start;
    row.toner_last = last.get(row.serial as string) ?? null;
    row.toner_avg = avg.get(row.serial as string) ?? null;
    row.extra_max = extra.get(row.serial as string) ?? null;
    rows.push(row);
  }
  return rows;
}

/** Upserts rows (only growing a stored bucket); returns the rows written. */
function upsertRows(db: Database, def: TierDef, rows: Row[]): number {
  const upsert = stmts(db, def).upsert;
  let written = 0;
  for (const row of rows) written += upsert.run(row).changes;
  return written;
}

// Serial, then time: the order a batch's new rows are inserted in (see rollupAll).
const bySerialThenTs = (a: Row, b: Row) =>
  a.serial === b.serial ? (a.ts as number) - (b.ts as number) : (a.serial as string) < (b.serial as string) ? -1 : 1;

/**
 * Like rollBucket, but first checks cheaply (counts only, no JSON) whether the stored buckets already
 * account for every source row, and recomputes only if not. Used before deleting source rows.
 */
export function ensureBucket(db: Database, def: TierDef, start: number): number {
  return uncoveredSerials(db, def, start) > 0 ? rollBucket(db, def, start) : 0;
}

/** How many serials have source rows in the bucket that its stored row does not count. */
export function uncoveredSerials(db: Database, def: TierDef, start: number): number {
  return stmts(db, def).uncovered.get({ start, end: def.next(start) }) as number;
}

/** The first source timestamp at or after `ts`, or undefined. */
export function nextSourceTs(db: Database, def: TierDef, ts: number): number | undefined {
  const s = stmts(db, def);
  const b = BUCKET_MS[def.source]!;
  // The bucket holding ts may hold only earlier rows: then the next bucket with rows has the answer.
  for (let bucket = s.firstBucket.get(bucketOf(ts, b)); typeof bucket === 'number'; bucket = s.firstBucket.get(bucket + 1)) {
    const v = s.firstTsInBucket.get(bucket, ts);
    if (typeof v === 'number') return v;
  }
  return undefined;
}

export function getWatermark(db: Database, tier: AggTier): number | undefined {
  const v = db.prepare('SELECT done_until FROM rollup_state WHERE tier = ?').pluck().get(tier);
  return typeof v === 'number' ? v : undefined;
}

function setWatermark(db: Database, tier: AggTier, doneUntil: number): void {
  db.prepare(
    'INSERT INTO rollup_state (tier, done_until) VALUES (?, ?) ON CONFLICT (tier) DO UPDATE SET done_until = excluded.done_until',
  ).run(tier, doneUntil);
}

export interface RollupResult {
  hourly: number;
  daily: number;
  monthly: number;
  /** Transactions committed. */
  batches: number;
}

export interface RollupOptions {
  /** Called between transactions so other work (HTTP requests, polls) can run; default setImmediate. */
  yieldFn?: () => Promise<void>;
  /**
   * Roll hourly buckets only once this many closed hours are pending, that many per batch
   * (default 1: every closed hour now). The scheduled pass uses 24: hourly rows are served only
   * for times more than 7 days ago, so a lag of a day is invisible, and writing a day of a device
   * at once dirties the pages of one day in the hourly key index, shared by all devices (flash
   * writes). The batch is read an hour at a time with yields between (docs/performance.md).
   */
  hourlyBatch?: number;
}

/** Page cache for a roll-up or retention pass, in KiB. */
export const PASS_CACHE_KIB = 16_000;

/**
 * Runs `fn` with the connection's page cache raised to PASS_CACHE_KIB, then puts it back.
 * Why: a transaction that dirties more pages than the cache holds (the agent's is ~2 MiB, 500
 * pages) spills them to the WAL before commit, and a page changed again after its spill is written
 * again. Deleting a day of raw rows for 500 devices wrote ~7x more to flash that way (measured,
 * docs/performance.md). The extra memory is held only while a pass runs.
 */
export async function withPassCache<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  const before = db.pragma('cache_size', { simple: true }) as number;
  const pagesBefore = before < 0 ? (-before * 1024) / (db.pragma('page_size', { simple: true }) as number) : before;
  const want = (PASS_CACHE_KIB * 1024) / (db.pragma('page_size', { simple: true }) as number);
  if (pagesBefore >= want) return fn();
  db.pragma(`cache_size = -${PASS_CACHE_KIB}`);
  try {
    return await fn();
  } finally {
    db.pragma(`cache_size = ${before}`);
  }
}

/**
 * One roll-up pass at `now`: every closed bucket not yet rolled, hourly then daily then monthly.
 * Idempotent; catches up any number of missed buckets; yields to the event loop between buckets
 * read and between transactions.
 */
export function rollupOnce(db: Database, now: Date, opts: RollupOptions = {}): Promise<RollupResult> {
  return withPassCache(db, () => rollupAll(db, now, opts));
}

async function rollupAll(db: Database, now: Date, opts: RollupOptions): Promise<RollupResult> {
  const yieldFn = opts.yieldFn ?? nextTurn;
  const result: RollupResult = { hourly: 0, daily: 0, monthly: 0, batches: 0 };
  const nowMs = now.getTime();
  for (const tier of ['hourly', 'daily', 'monthly'] as const) {
    const def = TIER_DEFS[tier];
    // The first open bucket: buckets before it have ended. A tier computed from another one also
    // waits for that tier's closed range, so a day is rolled only from all of its hours.
    let limit = def.start(nowMs);
    if (def.sourceTier) {
      const src = getWatermark(db, def.sourceTier);
      if (src === undefined) continue;
      limit = Math.min(limit, def.start(src));
    }
    let cur = getWatermark(db, tier);
    if (cur === undefined) {
      const first = nextSourceTs(db, def, Number.MIN_SAFE_INTEGER);
      if (first === undefined) continue;
      cur = def.start(first);
    }
    const batch = tier === 'hourly' ? Math.max(1, Math.floor(opts.hourlyBatch ?? 1)) : def.batch;
    // Hourly: only whole batches of closed hours (the rest waits for the next pass).
    if (tier === 'hourly' && limit > cur) limit = cur + Math.floor((limit - cur) / (batch * HOUR_MS)) * batch * HOUR_MS;
    while (cur < limit) {
      // Skip stretches without source rows (the box was off) without a transaction per bucket.
      const nextTs = nextSourceTs(db, def, cur);
      const from: number = nextTs === undefined || nextTs >= limit ? limit : Math.max(cur, def.start(nextTs));
      // Read the batch a bucket at a time, yielding between buckets: the reads are most of a
      // batch's time (about 15 ms per hour of raw for 500 devices), and they write nothing. Reading
      // outside the write transaction is safe: the buckets are closed (the pass runs after they
      // end), and a late arrival is caught by retention's coverage check before its source goes.
      const rows: Row[] = [];
      let end = from;
      for (let k = 0; k < batch && end < limit; k++) {
        if (k > 0) await yieldFn();
        rows.push(...bucketRows(db, def, end));
        end = def.next(end);
      }
      // Device by device: a device's new rows of the batch get neighbouring rowids and share
      // table pages, so one device's history reads a page or two per batch (a day of hourly
      // rows in the scheduled pass) instead of a page per bucket.
      rows.sort(bySerialThenTs);
      db.transaction(() => {
        result[tier] += upsertRows(db, def, rows);
        setWatermark(db, tier, end);
      })();
      result.batches++;
      cur = end;
      await yieldFn();
    }
  }
  return result;
}
