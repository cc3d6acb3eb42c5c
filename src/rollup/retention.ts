// Retention (docs/decisions/0005-metric-tiers.md): rows past their tier's window (RETENTION_DAYS,
// the windows history reads: model/tiers.ts) are deleted once rolled up; monthly rows are kept.
//
// A row is "older than N days" when ts <= now - N days: the tier windows are open at that end, so such
// a row is no longer served from its tier. Deletion goes by whole UTC days (raw, hourly) and whole
// UTC months (daily): rows are deleted once their entire day (month) is older than the limit. So a row
// lives at most a day (a month for daily rows) beyond its window; history never serves it, since each
// tier is read only inside its window. Why: every delete rewrites the first index page of each
// device's range; deleting one day at once touches it once a day instead of once an hour, which is
// most of the flash writes retention would otherwise cost (docs/performance.md).
// Rows go in small batches: whole parent buckets (hours of raw, days of hourly, months of daily) up
// to about MAX_ROWS_PER_BATCH rows per transaction, with a yield to the event loop in between. In the
// same transaction, before the delete, the parent bucket is recomputed from all its remaining source
// rows (upsert that only grows a bucket, see rollup.ts): a source row is never deleted before the
// bucket that accounts for it is written, whether or not the scheduled roll-up got there first
// (late arrivals, a clock that jumped back), and a crash leaves either both or neither.
import type { Database } from 'better-sqlite3';
import { RETENTION_DAYS } from '../model/tiers.js';
import { keyRange } from '../store/keys.js';
import { withPassCache, ensureBucket, nextSourceTs } from './rollup.js';
import { DAY_MS, TIER_DEFS, dayStart, monthStart, type AggTier } from '../store/tier-buckets.js';
import { nextTurn } from '../shared/pace.js';
import { checkpointPassive, countRange, deleteRange, maintainFile, walSize, WAL_TRUNCATE_BYTES } from '../store/metrics-retention.js';

/** Rows deleted per transaction, about: some tens of ms on the box, so requests are not held up. */
export const MAX_ROWS_PER_BATCH = 8000;

export interface RetentionResult {
  raw: number;
  hourly: number;
  daily: number;
  batches: number;
  vacuumedPages: number;
}

export interface RetentionOptions {
  yieldFn?: () => Promise<void>;
  /** Run incremental vacuum and a WAL checkpoint afterwards (default true). */
  maintain?: boolean;
  /**
   * Keep raw rows this many days instead of RETENTION_DAYS.raw: the storage guard's last resort on
   * a nearly full card. Their hours are in the hourly tier first, as always; history's raw window
   * then shows only the days kept.
   */
  rawDays?: number;
}

// Which aggregated tier is computed from each pruned tier.
const PRUNE: { source: 'raw' | 'hourly' | 'daily'; parent: AggTier; grain: (ts: number) => number }[] = [
  { source: 'raw', parent: 'hourly', grain: dayStart },
  { source: 'hourly', parent: 'daily', grain: dayStart },
  { source: 'daily', parent: 'monthly', grain: monthStart },
];

export function applyRetention(db: Database, now: Date, opts: RetentionOptions = {}): Promise<RetentionResult> {
  return withPassCache(db, () => prune(db, now, opts));
}

async function prune(db: Database, now: Date, opts: RetentionOptions): Promise<RetentionResult> {
  const yieldFn = opts.yieldFn ?? nextTurn;
  const res: RetentionResult = { raw: 0, hourly: 0, daily: 0, batches: 0, vacuumedPages: 0 };
  const maintain = opts.maintain ?? true;
  let checkpointed = false;
  for (const { source, parent, grain } of PRUNE) {
    const def = TIER_DEFS[parent];
    // Delete ts < cutoffEnd: the start of the day (month) holding now - N days, so only whole
    // days (months) older than the limit go.
    const days = source === 'raw' ? (opts.rawDays ?? RETENTION_DAYS.raw) : RETENTION_DAYS[source];
    const cutoffEnd = grain(now.getTime() - days * DAY_MS);
    const count = (lo: number, hi: number) => countRange(db, def.source, lo, hi);
    for (;;) {
      const first = nextSourceTs(db, def, Number.MIN_SAFE_INTEGER);
      if (first === undefined || first >= cutoffEnd) break;
      // A batch is whole parent buckets up to about MAX_ROWS_PER_BATCH rows (at least one bucket).
      // Fewer, larger deletes touch the first index page of each device's range fewer times.
      const buckets = [def.start(first)];
      let end = Math.min(def.next(buckets[0]), cutoffEnd);
      let rows = count(first, end);
      while (end < cutoffEnd) {
        const nextEnd = Math.min(def.next(end), cutoffEnd);
        const more = count(end, nextEnd);
        if (rows + more > MAX_ROWS_PER_BATCH) break;
        buckets.push(end);
        rows += more;
        end = nextEnd;
      }
      // The day's checkpoint comes BEFORE the deletes (see maintainFile).
      if (maintain && !checkpointed) {
        checkpointPassive(db);
        checkpointed = true;
      }
      db.transaction(() => {
        for (const b of buckets) ensureBucket(db, def, b);
        res[source] += deleteRange(db, def.source, first, end);
      })();
      res.batches++;
      await yieldFn();
    }
  }
  // Vacuum when retention freed something (once a day); give WAL space back if it ran long.
  // In between, wal_autocheckpoint bounds the WAL (see configureWal).
  if (maintain && (res.batches > 0 || walSize(db) > WAL_TRUNCATE_BYTES)) res.vacuumedPages = maintainFile(db);
  return res;
}

export { configureWal, FREELIST_RESERVE_PAGES, maintainFile, WAL_TRUNCATE_BYTES } from '../store/metrics-retention.js';
