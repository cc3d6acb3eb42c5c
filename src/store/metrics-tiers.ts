// The metric tiers' SQL (hourly, daily, monthly: migration 1, keyed as store/keys.ts says): each
// bucket computed from its source rows, upserted so that it only grows, the first source row at
// or after a time, the roll-up's progress (rollup_state), and the larger page cache a pass runs
// with. What a tier is and when a pass runs are rollup/rollup.ts's; retention's deletes are
// store/metrics-retention.ts's.
import type { Database, Statement } from 'better-sqlite3';
import { METRICS_COUNTERS } from '../model/serialize.js';
import { BUCKET_MS, bucketOf, keyColumns, keyMatch, keyRange } from './keys.js';
import { AGGREGATE_COLUMNS } from './metrics.js';

/** A tier's tables: its own and the one it is computed from (rollup/rollup.ts TierDef). */
export interface TierTables {
  tier: string;
  table: string;
  source: string;
}

/** A bucket row: its columns by name. */
export type Row = Record<string, unknown>;

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
const stmtCache = new WeakMap<Database, Map<string, Stmts>>();

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
function stmts(db: Database, t: TierTables): Stmts {
  let m = stmtCache.get(db);
  if (!m) stmtCache.set(db, (m = new Map()));
  let s = m.get(t.tier);
  if (s) return s;
  const src = t.source;
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
      `INSERT INTO ${t.table} (${AGGREGATE_COLUMNS.join(', ')}) VALUES (${AGGREGATE_COLUMNS.map((c) => '@' + c).join(', ')})
       ON CONFLICT (${keyColumns(t.table)}) DO UPDATE SET ${AGGREGATE_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}
       WHERE excluded.sample_count > ${t.table}.sample_count`,
    ),
    // nextSourceTs: the first bucket holding rows (one seek), then the earliest row in it.
    firstBucket: db.prepare(`SELECT ts / ${b} FROM ${src} INDEXED BY ${src}_bucket WHERE ts / ${b} >= ? ORDER BY ts / ${b} LIMIT 1`).pluck(),
    firstTsInBucket: db.prepare(`SELECT min(ts) FROM ${src} INDEXED BY ${src}_bucket WHERE ts / ${b} = ? AND ts >= ?`).pluck(),
    // Serials whose source rows in [start, end) are not all counted by the stored bucket. From raw,
    // counting needs only serial and ts: the bucketed key index covers both (no table rows read).
    uncovered: db.prepare(
      `SELECT count(*) FROM (SELECT serial, ${fromRaw ? 'count(*)' : 'sum(sample_count)'} AS n
         FROM ${range} GROUP BY serial) s
       LEFT JOIN ${t.table} b ON ${keyMatch('b', t.table, 's.serial', '@start')}
       WHERE b.sample_count IS NULL OR b.sample_count < s.n`,
    ).pluck(),
  };
  m.set(t.tier, s);
  return s;
}

/** The aggregated rows of the bucket [start, end), one per serial, computed from its source rows. */
export function bucketRows(db: Database, t: TierTables, start: number, end: number): Row[] {
  const s = stmts(db, t);
  const p = { start, end };
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
export function upsertRows(db: Database, t: TierTables, rows: Row[]): number {
  const upsert = stmts(db, t).upsert;
  let written = 0;
  for (const row of rows) written += upsert.run(row).changes;
  return written;
}

/** How many serials have source rows in the bucket that its stored row does not count. */
export function uncoveredSerials(db: Database, t: TierTables, start: number, end: number): number {
  return stmts(db, t).uncovered.get({ start, end }) as number;
}

/** The first source timestamp at or after `ts`, or undefined. */
export function nextSourceTs(db: Database, t: TierTables, ts: number): number | undefined {
  const s = stmts(db, t);
  const b = BUCKET_MS[t.source]!;
  // The bucket holding ts may hold only earlier rows: then the next bucket with rows has the answer.
  for (let bucket = s.firstBucket.get(bucketOf(ts, b)); typeof bucket === 'number'; bucket = s.firstBucket.get(bucket + 1)) {
    const v = s.firstTsInBucket.get(bucket, ts);
    if (typeof v === 'number') return v;
  }
  return undefined;
}

/** Every bucket of `tier` starting before this time is closed and written (rollup_state). */
export function getWatermark(db: Database, tier: string): number | undefined {
  const v = db.prepare('SELECT done_until FROM rollup_state WHERE tier = ?').pluck().get(tier);
  return typeof v === 'number' ? v : undefined;
}

export function setWatermark(db: Database, tier: string, doneUntil: number): void {
  db.prepare(
    'INSERT INTO rollup_state (tier, done_until) VALUES (?, ?) ON CONFLICT (tier) DO UPDATE SET done_until = excluded.done_until',
  ).run(tier, doneUntil);
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

