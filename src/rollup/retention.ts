// Retention (decisions.md, "Metric tiers"): rows past their tier's window (RETENTION_DAYS, the
// windows history reads: model/tiers.ts) are deleted once rolled up; monthly rows are kept.
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
import { statSync } from 'node:fs';
import { RETENTION_DAYS } from '../model/tiers.js';
import { keyRange } from '../store/keys.js';
import { DAY_MS, TIER_DEFS, dayStart, monthStart, withPassCache, ensureBucket, nextSourceTs, type AggTier } from './rollup.js';
import { nextTurn } from '../loop/pace.js';

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
    const range = keyRange(def.source, '@lo', '@hi');
    const del = db.prepare(`DELETE FROM ${range}`);
    const countRows = db.prepare(`SELECT count(*) FROM ${range}`).pluck();
    const count = (lo: number, hi: number) => countRows.get({ lo, hi }) as number;
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
        db.pragma('wal_checkpoint(PASSIVE)');
        checkpointed = true;
      }
      db.transaction(() => {
        for (const b of buckets) ensureBucket(db, def, b);
        res[source] += del.run({ lo: first, hi: end }).changes;
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

/**
 * Keeps the file from growing and the WAL short. Returns pages handed back to the file system.
 *
 * Free pages left by retention are reused by the next inserts, so at steady state the file stops
 * growing by itself (each day frees about what the next day needs); handing free pages back every
 * day would only make the file grow again, and each page incremental_vacuum moves is a write. So
 * incremental_vacuum runs only when the free list is large (over a quarter of the file and over
 * FREELIST_RESERVE_PAGES * 2: a device deleted, a long outage caught up) and trims it to a tenth.
 *
 * Checkpoints: wal_autocheckpoint is raised (see configureWal) so the WAL holds about a day of
 * polling rounds; a page that several rounds touch (the tail of a table or index) is then written to
 * the database file once per checkpoint instead of once per round or two (SQLite's default of 1000
 * pages is about two rounds for 500 devices). The daily checkpoint (PASSIVE: never waits for
 * readers) runs just BEFORE retention deletes, not after: in WAL mode every page a delete empties is
 * still written to the WAL, and the next day's inserts reuse those free pages. Left in the WAL, a
 * freed page's frame is superseded by its reuse, so the checkpoint writes that page once, with its
 * new rows, instead of once as garbage and again a day later (about 17 KiB per device per day for
 * 500 devices, docs/performance.md). If the WAL grew past WAL_TRUNCATE_BYTES (a catch-up after a
 * long outage) a TRUNCATE checkpoint gives the space back here. Truncating every time would cost a
 * file size change, i.e. extra file-system metadata writes, each time.
 */
export const FREELIST_RESERVE_PAGES = 2048;
export const WAL_TRUNCATE_BYTES = 64 * 1024 * 1024;

export function maintainFile(db: Database): number {
  let vacuumed = 0;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  const autoVacuum = db.pragma('auto_vacuum', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  if (autoVacuum === 2 && free > FREELIST_RESERVE_PAGES * 2 && free * 4 > pages) {
    const n = free - Math.max(FREELIST_RESERVE_PAGES, Math.floor(pages / 10));
    // A power of two (at most n): the statement cache (store/db.ts) then holds a few texts, not
    // one per pass; the rest goes at the next pass.
    vacuumed = 2 ** Math.floor(Math.log2(n));
    db.pragma(`incremental_vacuum(${vacuumed})`);
  }
  if (walSize(db) > WAL_TRUNCATE_BYTES) db.pragma('wal_checkpoint(TRUNCATE)');
  return vacuumed;
}

function walSize(db: Database): number {
  try {
    return statSync(db.name + '-wal').size;
  } catch {
    return 0; // no WAL file
  }
}

/**
 * WAL settings for the agent's connection: checkpoint about every 32 MiB of WAL (a few hours of
 * polls for 500 devices, a day or more for a few dozen) instead of SQLite's 1000 pages, and cap the
 * WAL file left after a checkpoint at 16 MiB (journal_size_limit) so a catch-up does not leave a
 * large file behind. Readers stay fast: the WAL index is in shared memory.
 */
export function configureWal(db: Database): void {
  db.pragma('wal_autocheckpoint = 8192');
  db.pragma(`journal_size_limit = ${16 * 1024 * 1024}`);
}
