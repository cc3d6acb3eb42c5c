// Roll-ups: raw -> hourly -> daily -> monthly (docs/decisions/0005-metric-tiers.md).
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
import type { Database } from 'better-sqlite3';
import { bucketRows as rowsOfBucket, getWatermark, nextSourceTs, setWatermark, upsertRows, uncoveredSerials as uncoveredInBucket, withPassCache, type Row } from '../store/metrics-tiers.js';
import { nextTurn } from '../shared/pace.js';
import { HOUR_MS, TIER_DEFS, type AggTier, type TierDef } from '../store/tier-buckets.js';

/**
 * Recomputes the buckets of one tier starting at `start` from the source rows in [start, next(start))
 * and upserts them (only growing a stored bucket). Call inside a transaction. Returns rows written.
 */
export function rollBucket(db: Database, def: TierDef, start: number): number {
  return upsertRows(db, def, bucketRows(db, def, start));
}

/** The aggregated rows of the bucket at `start`, one per serial, computed from its source rows. */
const bucketRows = (db: Database, def: TierDef, start: number): Row[] => rowsOfBucket(db, def, start, def.next(start));

/** How many serials have source rows in the bucket at `start` that its stored row does not count. */
export function uncoveredSerials(db: Database, def: TierDef, start: number): number {
  return uncoveredInBucket(db, def, start, def.next(start));
}

export { getWatermark, nextSourceTs, PASS_CACHE_KIB, withPassCache } from '../store/metrics-tiers.js';

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
