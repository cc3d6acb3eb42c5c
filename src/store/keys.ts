// How each metrics table is keyed, for flash wear (docs/performance.md, "Flash writes and database size").
//
// An index ordered by (serial, ts) puts every device's newest row at the end of that device's own
// key range, so a write of all devices dirties one index page per device. The tiers written for
// all devices together (raw every round, hourly and daily once a day) are instead keyed by
// (ts / BUCKET, serial, ts): all devices' rows of one bucket are one contiguous run of pages, and
// one device's rows are reached by one index seek per bucket. Monthly rows are written once a
// month and keep (serial, ts).
import type { Tier } from '../model/device.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

export const TABLE: Record<Tier, string> = {
  raw: 'metrics_raw',
  hourly: 'metrics_hourly',
  daily: 'metrics_daily',
  monthly: 'metrics_monthly',
};

/**
 * Bucket length of a table's (ts / BUCKET, serial, ts) index, in ms. The bucket is the tier's
 * read grain: a week of raw is 169 seeks, 23 days of hourly 24 seeks, a year of daily 13 seeks.
 */
export const BUCKET_MS: Partial<Record<string, number>> = {
  metrics_raw: HOUR,
  metrics_hourly: DAY,
  metrics_daily: 30 * DAY,
};

/**
 * The index that downsampled history reads a table's (id, page_count) from, where it is not the
 * table's bucketed key: daily rows have a second key that carries both (migration 13). Raw's own key
 * carries them (migration 5); hourly rows of a device and day are side by side in the table anyway.
 */
export const POINTS_INDEX: Partial<Record<string, string>> = {
  metrics_daily: 'metrics_daily_points',
};

/**
 * The key columns of a table's per-device index, as ON CONFLICT and ORDER BY spell them (raw's
 * index appends `id, page_count` for downsampled history, migration 5).
 */
export function keyColumns(table: string): string {
  const b = BUCKET_MS[table];
  return b ? `ts / ${b}, serial, ts` : 'serial, ts';
}

/**
 * SQL matching one row by serial and ts through the table's key (alias.col names; `ts` and
 * `serial` are SQL expressions): the bucket term lets the planner seek the bucketed index.
 */
export function keyMatch(alias: string, table: string, serial: string, ts: string): string {
  const b = BUCKET_MS[table];
  const exact = `${alias}.serial = ${serial} AND ${alias}.ts = ${ts}`;
  // CAST: better-sqlite3 binds every JS number as REAL, and REAL / b is not integer division.
  return b ? `${alias}.ts / ${b} = CAST(${ts} AS INTEGER) / ${b} AND ${exact}` : exact;
}

/**
 * FROM clause for the rows of a bucketed table with lo <= ts < hi (SQL expressions), read through its
 * (ts / BUCKET, serial, ts) key: the buckets the range covers, then the exact range. The tiers have
 * no separate (ts) index (migration 4): each one cost a page write per polling round or roll-up for
 * nothing the key cannot do. `alias` names the table in the rest of the statement.
 */
export function keyRange(table: string, lo: string, hi: string, alias = table): string {
  const b = BUCKET_MS[table];
  if (!b) throw new Error(`${table} has no bucketed key`);
  const a = alias === table ? '' : ` ${alias}`;
  return `${table}${a} INDEXED BY ${table}_bucket
    WHERE ${alias}.ts / ${b} BETWEEN CAST(${lo} AS INTEGER) / ${b} AND CAST((${hi}) - 1 AS INTEGER) / ${b}
      AND ${alias}.ts >= ${lo} AND ${alias}.ts < ${hi}`;
}

/** The bucket number of a timestamp, as SQLite computes `ts / BUCKET` for an integer ts. */
export const bucketOf = (ts: number, bucketMs: number): number => Math.trunc(ts / bucketMs);
