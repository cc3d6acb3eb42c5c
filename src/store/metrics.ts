// Metric snapshots: the raw tier written by collection, the aggregated tiers written by roll-ups,
// and the reads the API serves (latest, history, bounds).
import type { Statement } from 'better-sqlite3';
import type { DB } from './db.js';
import { TIERS, type Snapshot, type Tier } from '../model/device.js';
import { METRICS_COUNTERS } from '../model/serialize.js';
import { tierWindows } from '../model/tiers.js';
import { BUCKET_MS, POINTS_INDEX, TABLE, bucketOf, keyColumns, keyMatch, keyRange } from './keys.js';
import { BOUND_SERIAL } from './bound.js';

type AggTier = Exclude<Tier, 'raw'>;
/**
 * Past this many bucket seeks (old rows of an import that no roll-up or retention has thinned
 * yet) a plain scan of the table is cheaper than the seeks.
 */
const MAX_BUCKET_SEEKS = 24 * 60;

type Row = Record<string, unknown>;

/** A raw snapshot with the reading round it was taken in (model/round.ts; none for older rows and imports). */
export type RoundSnapshot = Snapshot & { round?: number };

/** The columns a raw row is written with: counters as they are, toner levels and the other counters as JSON. */
const RAW_COLUMNS: readonly string[] = ['serial', 'ts', ...METRICS_COUNTERS, 'toner_levels', 'extra', 'round'];

/**
 * The columns an aggregated row is written with, by roll-ups (rollup.ts) and imports: the key
 * (serial, ts) first, then what an upsert replaces.
 */
export const AGGREGATE_COLUMNS: readonly string[] = [
  'serial', 'ts', 'sample_count',
  ...METRICS_COUNTERS.flatMap((c) => [`${c}_min`, `${c}_max`, `${c}_avg`]),
  'toner_last', 'toner_avg', 'extra_max',
];

/** What downsampling needs of a history row (docs/decisions/0006-history-downsampling.md: x = position, y = page_count). */
export interface HistoryPoint {
  tier: Tier;
  id: number;
  page_count?: number;
}

function rawFromRow(row: Row): Snapshot {
  const s: Snapshot = { id: row.id as number, serial: row.serial as string, ts: row.ts as number };
  for (const c of METRICS_COUNTERS) if (row[c] !== null) s[c] = row[c] as number;
  if (row.toner_levels) s.toner_levels = JSON.parse(row.toner_levels as string);
  if (row.extra) s.extra = JSON.parse(row.extra as string);
  return s;
}

// An aggregated row serves the meter at the end of its bucket (max; counters are cumulative),
// the category counters likewise, and the last toner reading of the bucket.
function aggregateFromRow(row: Row): Snapshot {
  const s: Snapshot = { id: row.id as number, serial: row.serial as string, ts: row.ts as number };
  for (const c of METRICS_COUNTERS) {
    const v = row[`${c}_max`];
    if (v !== null) s[c] = v as number;
  }
  if (row.toner_last) s.toner_levels = JSON.parse(row.toner_last as string);
  if (row.extra_max) s.extra = JSON.parse(row.extra_max as string);
  return s;
}

function snapshotOf(tier: Tier, row: Row): Snapshot {
  const s = tier === 'raw' ? rawFromRow(row) : aggregateFromRow(row);
  s.tier = tier;
  return s;
}

export interface AggregateRow {
  serial: string;
  ts: number;
  sample_count: number;
  counters: Partial<Record<(typeof METRICS_COUNTERS)[number], { min: number; max: number; avg: number }>>;
  toner_last?: Record<string, unknown>;
  toner_avg?: Record<string, unknown>;
  /** The category counters at the end of the bucket. */
  extra_max?: Record<string, number>;
}

/**
 * One device's rows of one table: in [lo, hi], their bounds, or all of them for a delete. A table
 * keyed by (ts / BUCKET, serial, ts) (keys.ts) is read by one seek per bucket of the span the
 * table holds; a table keyed by (serial, ts) by one range.
 */
class DeviceRows {
  private readonly bucket?: number;
  private readonly span?: Statement;
  // [bucket seeks, scan], or [(serial, ts) range] for an unbucketed table
  private readonly range: Statement[];
  private readonly points: Statement[];
  private readonly supply: Statement[];
  private readonly counters: Statement[];
  private readonly bounds: Statement[];
  private readonly ids: Statement[];
  private readonly byIds: Statement;

  constructor(db: DB, table: string) {
    this.bucket = BUCKET_MS[table];
    const froms = this.bucket
      ? [
          `${table} INDEXED BY ${table}_bucket
             WHERE ts / ${this.bucket} IN (SELECT value FROM json_each(@buckets)) AND serial = @serial`,
          `${table} NOT INDEXED WHERE serial = @serial`,
        ]
      : [`${table} WHERE serial = @serial`];
    // The first and last bucket the table holds, from its key: one seek each.
    if (this.bucket) {
      const key = `ts / ${this.bucket}`;
      this.span = db.prepare(
        `SELECT (SELECT min(${key}) FROM ${table} INDEXED BY ${table}_bucket) AS lo, (SELECT max(${key}) FROM ${table} INDEXED BY ${table}_bucket) AS hi`,
      );
    }
    this.range = froms.map((f) => db.prepare(`SELECT * FROM ${f} AND ts BETWEEN @lo AND @hi ORDER BY ts, id`));
    // The served page_count of a row (an aggregate serves its max), in the order of `range`.
    const pageCount = table === TABLE.raw ? 'page_count' : 'page_count_max';
    const pointsIndex = POINTS_INDEX[table];
    this.points = froms.map((f) =>
      db.prepare(
        `SELECT id, ${pageCount} FROM ${pointsIndex ? f.replace(`INDEXED BY ${table}_bucket`, `INDEXED BY ${pointsIndex}`) : f} AND ts BETWEEN @lo AND @hi ORDER BY ts, id`,
      ).raw(),
    );
    // What a supply forecast needs of a row (forecast/): time, the served page counter and levels.
    const toner = table === TABLE.raw ? 'toner_levels' : 'toner_last';
    this.supply = froms.map((f) =>
      db.prepare(`SELECT ts, ${pageCount}, ${toner} FROM ${f} AND ts BETWEEN @lo AND @hi ORDER BY ts, id`).raw(),
    );
    // What pages per period need of a row (store/page-counts.ts): time and each page counter's
    // first and last reading (a raw row's one reading twice; an aggregate's min and max).
    const counters = (['page_count', 'mono_pages', 'color_pages'] as const)
      .map((c) => (table === TABLE.raw ? `${c}, ${c}` : `${c}_min, ${c}_max`)).join(', ');
    this.counters = froms.map((f) => db.prepare(`SELECT ts, ${counters} FROM ${f} AND ts BETWEEN @lo AND @hi ORDER BY ts, id`).raw());
    this.byIds = db.prepare(`SELECT * FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`);
    // min, max and count come from the index alone (covering)
    this.bounds = froms.map((f) => db.prepare(`SELECT min(ts) AS lo, max(ts) AS hi, count(*) AS n FROM ${f}`));
    this.ids = froms.map((f) => db.prepare(`SELECT id FROM ${f}`).pluck());
  }

  /** The statement variant and its parameters for [lo, hi]; undefined when nothing can match. */
  private plan(serial: string, lo: number, hi: number): { v: number; p: Record<string, unknown> } | undefined {
    if (!this.bucket) return { v: 0, p: { serial, lo, hi } };
    const span = this.span!.get() as { lo: number | null; hi: number | null };
    if (span.lo === null || span.hi === null) return undefined;
    const from = Math.max(bucketOf(lo, this.bucket), span.lo);
    const to = Math.min(bucketOf(hi, this.bucket), span.hi);
    if (from > to) return undefined;
    if (to - from >= MAX_BUCKET_SEEKS) return { v: 1, p: { serial, lo, hi } };
    const buckets = JSON.stringify(Array.from({ length: to - from + 1 }, (_, i) => from + i));
    return { v: 0, p: { serial, lo, hi, buckets } };
  }

  rows(serial: string, lo: number, hi: number): Row[] {
    const q = this.plan(serial, lo, hi);
    return q ? (this.range[q.v].all(q.p) as Row[]) : [];
  }

  /** The rows `rows()` returns, one at a time. */
  *iterate(serial: string, lo: number, hi: number): Generator<Row> {
    const q = this.plan(serial, lo, hi);
    if (q) yield* this.range[q.v].iterate(q.p) as IterableIterator<Row>;
  }

  /** [id, page_count] of the rows `rows()` returns, in the same order. */
  pointsOf(serial: string, lo: number, hi: number): [number, number | null][] {
    const q = this.plan(serial, lo, hi);
    return q ? (this.points[q.v].all(q.p) as [number, number | null][]) : [];
  }

  /** [ts, page_count, toner JSON] of the rows `rows()` returns, in the same order. */
  supplyOf(serial: string, lo: number, hi: number): [number, number | null, string | null][] {
    const q = this.plan(serial, lo, hi);
    return q ? (this.supply[q.v].all(q.p) as [number, number | null, string | null][]) : [];
  }

  /** [ts, then first and last reading of page_count, mono_pages, color_pages] of the rows `rows()` returns. */
  countersOf(serial: string, lo: number, hi: number): unknown[][] {
    const q = this.plan(serial, lo, hi);
    return q ? (this.counters[q.v].all(q.p) as unknown[][]) : [];
  }

  /** The rows with these ids, in no particular order. */
  rowsByIds(ids: number[]): Row[] {
    return this.byIds.all(JSON.stringify(ids)) as Row[];
  }

  extent(serial: string): { lo: number | null; hi: number | null; n: number } | undefined {
    const q = this.plan(serial, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    return q ? (this.bounds[q.v].get(q.p) as { lo: number | null; hi: number | null; n: number }) : undefined;
  }

  idsOf(serial: string): number[] {
    const q = this.plan(serial, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    return q ? (this.ids[q.v].all(q.p) as number[]) : [];
  }
}

export interface MetricsStoreOptions {
  /**
   * Hears of a raw reading not stored because the device already has one at that time (see
   * insertRaw): the id of the one that stays.
   */
  onDuplicateReading?: (s: Omit<Snapshot, 'id'>, storedId: number) => void;
}

export class MetricsStore {
  private readonly insertRawStmt;
  private readonly rawIdStmt;
  private readonly noteLatestStmt;
  private readonly latestStmt;
  private readonly deviceRows: Record<Tier, DeviceRows>;
  private readonly insertAggStmts: Record<AggTier, Statement>;
  private rawAfterStmt: Statement | undefined;
  private rawCountAfterStmt: Statement | undefined;
  private oldestRawStmt: Statement | undefined;

  constructor(private readonly db: DB, private readonly opts: MetricsStoreOptions = {}) {
    // A reading of a device at a time it already has one is ignored by the table itself (the
    // trigger of migration 7): no change.
    this.insertRawStmt = db.prepare(
      `INSERT INTO metrics_raw (${RAW_COLUMNS.join(', ')}) VALUES (${RAW_COLUMNS.map((c) => '@' + c).join(', ')})`,
    );
    this.rawIdStmt = db.prepare(`SELECT id FROM ${TABLE.raw} r WHERE ${keyMatch('r', TABLE.raw, '@serial', '@ts')}`).pluck();
    // The newest snapshot of each device; an older one (an import) never replaces a newer one.
    this.noteLatestStmt = db.prepare(
      `INSERT INTO device_latest (serial, ts, raw_id) VALUES (?, ?, ?)
       ON CONFLICT (serial) DO UPDATE SET ts = excluded.ts, raw_id = excluded.raw_id WHERE excluded.ts >= device_latest.ts`,
    );
    this.latestStmt = db.prepare(`SELECT r.* FROM device_latest l JOIN metrics_raw r ON r.id = l.raw_id WHERE l.serial = ${BOUND_SERIAL}`);
    this.deviceRows = Object.fromEntries(TIERS.map((t) => [t, new DeviceRows(db, TABLE[t])])) as Record<Tier, DeviceRows>;
    this.insertAggStmts = Object.fromEntries(
      (['hourly', 'daily', 'monthly'] as const).map((t) => [
        t,
        db.prepare(
          `INSERT INTO ${TABLE[t]} (${AGGREGATE_COLUMNS.join(', ')}) VALUES (${AGGREGATE_COLUMNS.map((c) => '@' + c).join(', ')})
           ON CONFLICT (${keyColumns(TABLE[t])}) DO UPDATE SET ${AGGREGATE_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}`,
        ),
      ]),
    ) as Record<AggTier, Statement>;
  }

  /**
   * Raw snapshots in the order they were stored (id), after `afterId`: the server upload's queue
   * (server/uploader.ts). The rowid order is the insertion order, so a cursor never skips a row.
   */
  /** Raw snapshots after `afterId` in id order, each with its reading round (the upload's batches are cut by it). */
  rawAfter(afterId: number, limit: number): RoundSnapshot[] {
    this.rawAfterStmt ??= this.db.prepare('SELECT * FROM metrics_raw WHERE id > ? ORDER BY id LIMIT ?');
    return (this.rawAfterStmt.all(afterId, limit) as Row[]).map((row) => ({ ...rawFromRow(row), round: (row.round as number | null) ?? undefined }));
  }

  rawCountAfter(afterId: number): number {
    this.rawCountAfterStmt ??= this.db.prepare('SELECT count(*) FROM metrics_raw WHERE id > ?').pluck();
    return this.rawCountAfterStmt.get(afterId) as number;
  }

  /** The time of the oldest raw snapshot still stored (retention removes older ones), or undefined. */
  oldestRawTs(): number | undefined {
    this.oldestRawStmt ??= this.db
      .prepare(`SELECT min(ts) FROM metrics_raw WHERE ts / ${BUCKET_MS.metrics_raw} =
        (SELECT ts / ${BUCKET_MS.metrics_raw} FROM metrics_raw INDEXED BY metrics_raw_bucket ORDER BY ts / ${BUCKET_MS.metrics_raw} LIMIT 1)`)
      .pluck();
    return (this.oldestRawStmt.get() as number | null) ?? undefined;
  }

  /**
   * The rows of an aggregated tier from the first `groups` distinct times in (after, before),
   * oldest first, each marked with its tier: what stands in for raw snapshots that retention
   * removed before the server had them (server/uploader.ts). A time's rows come whole.
   */
  tierRowsAfter(tier: AggTier, after: number, before: number, groups: number): Snapshot[] {
    const table = TABLE[tier];
    const times = this.db
      .prepare(`SELECT DISTINCT ts FROM ${keyRange(table, '@lo', '@hi')} ORDER BY ts LIMIT @groups`)
      .pluck()
      .all({ lo: after + 1, hi: before, groups }) as number[];
    if (!times.length) return [];
    return (this.db.prepare(`SELECT * FROM ${keyRange(table, '@lo', '@hi')} ORDER BY ts, serial`).all({ lo: times[0], hi: times[times.length - 1] + 1 }) as Row[])
      .map((row) => snapshotOf(tier, row));
  }

  /**
   * Stores one raw snapshot (and notes it as the device's newest) and returns its id.
   *
   * A device has one reading per millisecond (migration 7). Two polls of one printer in the same
   * millisecond do not happen: a read takes tens of milliseconds, and a polling round is never run
   * twice at once (DiscoveryService.collectSaved). Should it happen, the reading stored first stays
   * and its id is returned, and onDuplicateReading hears of the other (the agent logs it at debug).
   * The first, not the last: stored raw rows never change, which roll-ups rely on (a bucket that
   * counted a row stays right) and so does the server upload (a row it sent is the row it has).
   */
  insertRaw(s: Omit<Snapshot, 'id'>, round?: number): number {
    return this.db.transaction(() => {
      const id = this.storeRaw(s, round);
      if (id !== undefined) return id;
      const stored = this.rawIdStmt.get({ serial: s.serial, ts: s.ts }) as number;
      this.opts.onDuplicateReading?.(s, stored);
      return stored;
    })();
  }

  /**
   * Stores a raw snapshot unless the device already has one at that time (an import of rows it
   * holds) and returns its id, or undefined when it was not stored.
   */
  insertRawIfNew(s: Omit<Snapshot, 'id'>): number | undefined {
    return this.db.transaction(() => this.storeRaw(s))();
  }

  private storeRaw(s: Omit<Snapshot, 'id'>, round?: number): number | undefined {
    const id = this.insertRawRow(s, round);
    if (id !== undefined) this.noteLatestStmt.run(s.serial, s.ts, id);
    return id;
  }

  private insertRawRow(s: Omit<Snapshot, 'id'>, round?: number): number | undefined {
    const row: Row = {
      serial: s.serial,
      ts: s.ts,
      round: round ?? null,
      toner_levels: s.toner_levels && Object.keys(s.toner_levels).length ? JSON.stringify(s.toner_levels) : null,
      extra: s.extra && Object.keys(s.extra).length ? JSON.stringify(s.extra) : null,
    };
    for (const c of METRICS_COUNTERS) row[c] = s[c] ?? null;
    const info = this.insertRawStmt.run(row);
    return info.changes ? Number(info.lastInsertRowid) : undefined;
  }

  /** Deletes every metrics row of a device, in all tiers (call inside the caller's transaction). */
  deleteDevice(serial: string): void {
    for (const t of TIERS) {
      const del = this.db.prepare(`DELETE FROM ${TABLE[t]} WHERE id = ?`);
      for (const id of this.deviceRows[t].idsOf(serial)) del.run(id);
    }
    this.db.prepare('DELETE FROM device_latest WHERE serial = ?').run(serial);
  }

  upsertAggregate(tier: AggTier, a: AggregateRow): void {
    const row: Row = { serial: a.serial, ts: a.ts, sample_count: a.sample_count };
    for (const c of METRICS_COUNTERS) {
      const v = a.counters[c];
      row[`${c}_min`] = v?.min ?? null;
      row[`${c}_max`] = v?.max ?? null;
      row[`${c}_avg`] = v?.avg ?? null;
    }
    row.toner_last = a.toner_last && Object.keys(a.toner_last).length ? JSON.stringify(a.toner_last) : null;
    row.toner_avg = a.toner_avg && Object.keys(a.toner_avg).length ? JSON.stringify(a.toner_avg) : null;
    row.extra_max = a.extra_max && Object.keys(a.extra_max).length ? JSON.stringify(a.extra_max) : null;
    this.insertAggStmts[tier].run(row);
  }

  /** The newest raw snapshot, or undefined. Aggregated tiers are never consulted. */
  latestRaw(serial: string): Snapshot | undefined {
    const row = this.latestStmt.get(serial) as Row | undefined;
    return row ? rawFromRow(row) : undefined;
  }

  /**
   * Rows of [since, until] (inclusive), from each tier whose window intersects the range,
   * restricted to the intersection: raw, hourly, daily, monthly, each ascending by time.
   */
  history(serial: string, since: number, until: number, now: number): Snapshot[] {
    return this.tierRanges(since, until, now).flatMap(({ tier, lo, hi }) =>
      this.deviceRows[tier].rows(serial, lo, hi).map((row) => snapshotOf(tier, row)),
    );
  }

  /**
   * `downsample(points)` of history(): the same rows as downsampling history() itself, read
   * without reading every row. The downsampling sees each row's tier, id and page_count, read
   * first (a narrow read); only the rows it keeps are then read whole, by id. A year of one device
   * is about 1,560 rows of which LTTB keeps 200 (docs/performance.md). One read transaction: no
   * roll-up or retention commits between the two reads.
   */
  historySampled(
    serial: string, since: number, until: number, now: number,
    downsample: (points: HistoryPoint[]) => HistoryPoint[],
  ): Snapshot[] {
    return this.db.transaction(() => {
      const ranges = this.tierRanges(since, until, now);
      const points = ranges.flatMap(({ tier, lo, hi }) =>
        this.deviceRows[tier].pointsOf(serial, lo, hi).map(([id, pc]): HistoryPoint => ({ tier, id, page_count: pc ?? undefined })),
      );
      const kept = downsample(points);
      const byTier = new Map<Tier, Map<number, Snapshot>>();
      for (const { tier } of ranges) {
        const ids = kept.filter((p) => p.tier === tier).map((p) => p.id);
        const rows = ids.length ? this.deviceRows[tier].rowsByIds(ids) : [];
        byTier.set(tier, new Map(rows.map((row) => [row.id as number, snapshotOf(tier, row)])));
      }
      return kept.map((p) => byTier.get(p.tier)!.get(p.id)!);
    })();
  }

  /**
   * The supply levels and page counter of [since, until] from each tier's window (raw, hourly,
   * daily: what a forecast fits, forecast/supply-forecast.ts), three columns per row through the
   * tables' keys: 90 days is about 170 raw, 24 hourly and 3 daily bucket seeks. Oldest first.
   */
  supplyHistory(serial: string, since: number, until: number, now: number): { ts: number; page_count: number | null; toner_levels: Record<string, unknown> | null }[] {
    return this.db.transaction(() =>
      // the tiers' windows are newest first: reversed, the rows come oldest first
      this.tierRanges(since, until, now).reverse().flatMap(({ tier, lo, hi }) =>
        this.deviceRows[tier].supplyOf(serial, lo, hi).map(([ts, page_count, toner]) => ({
          ts, page_count, toner_levels: toner ? (JSON.parse(toner) as Record<string, unknown>) : null,
        })),
      ),
    )();
  }

  /**
   * The stored reading nearest to `t` within `maxDistance` ms either side, from whichever tier
   * serves that time (an aggregated row counts at its bucket start, with the meter at the end of
   * its bucket); undefined when there is none. A billing read's fallback (billing/schedule.ts).
   */
  nearestReading(serial: string, t: number, maxDistance: number, now: number): Snapshot | undefined {
    let best: Snapshot | undefined;
    for (const s of this.history(serial, t - maxDistance, t + maxDistance, now)) {
      if (!best || Math.abs(s.ts - t) < Math.abs(best.ts - t) || (Math.abs(s.ts - t) === Math.abs(best.ts - t) && s.ts < best.ts)) best = s;
    }
    return best;
  }

  /**
   * One tier's rows of a device in [since, until], oldest first, one at a time: a CSV export
   * streams them. Unlike history(), the tier is the caller's choice, not the windows'.
   */
  *iterateDeviceTier(tier: Tier, serial: string, since: number, until: number): Generator<Snapshot> {
    for (const row of this.deviceRows[tier].iterate(serial, since, until)) yield snapshotOf(tier, row);
  }

  /**
   * One tier's rows of a device in [since, until], oldest first, as [ts, then the first and last
   * reading of page_count, mono_pages and color_pages]: an aggregate's min and max, which a served
   * snapshot does not carry (pages per period, store/page-counts.ts). Three columns a row, not
   * the whole row: a week of raw readings at a 1-minute interval is 10,080 rows.
   */
  pageCounterRows(tier: Tier, serial: string, since: number, until: number): unknown[][] {
    return this.deviceRows[tier].countersOf(serial, since, until);
  }

  /** Each tier whose window intersects [since, until], with the intersection, in history order. */
  private tierRanges(since: number, until: number, now: number): { tier: Tier; lo: number; hi: number }[] {
    const windows = tierWindows(now);
    return TIERS.map((tier) => ({ tier, lo: Math.max(since, windows[tier][0]), hi: Math.min(until, windows[tier][1]) }))
      .filter(({ lo, hi }) => lo <= hi);
  }

  /** Earliest and latest timestamps and total row count across all tiers, or undefined. */
  bounds(serial: string): { min: number; max: number; points: number } | undefined {
    let min = Infinity;
    let max = -Infinity;
    let points = 0;
    for (const tier of TIERS) {
      const r = this.deviceRows[tier].extent(serial);
      if (!r || r.n === 0 || r.lo === null || r.hi === null) continue;
      min = Math.min(min, r.lo);
      max = Math.max(max, r.hi);
      points += r.n;
    }
    return points ? { min, max, points } : undefined;
  }

  /**
   * Every row of a tier, for export, in the order of the table's key (keys.ts: by time bucket, then
   * serial and time, for the bucketed tiers; serial and time for monthly): rows stream without a
   * sort, which would hold the whole tier in memory (temp_store = MEMORY). Aggregates carry their
   * served values.
   */
  *iterateTier(tier: Tier): IterableIterator<Snapshot> {
    const stmt = this.db.prepare(`SELECT * FROM ${TABLE[tier]} ORDER BY ${keyColumns(TABLE[tier])}, id`);
    for (const row of stmt.iterate() as IterableIterator<Row>) yield tier === 'raw' ? rawFromRow(row) : aggregateFromRow(row);
  }
}
