// Retention's SQL (rollup/retention.ts decides what goes and when): the source rows of a key range
// counted and deleted, and the upkeep of the database file after (free pages handed back, the WAL
// checkpointed and kept short), with the WAL settings of the agent's connection.
import type { Database, Statement } from 'better-sqlite3';
import { statSync } from 'node:fs';
import { keyRange } from './keys.js';

const rangeCache = new WeakMap<Database, Map<string, { del: Statement; count: Statement }>>();

/** The statements over `table`'s rows with ts in [@lo, @hi), prepared once per connection. */
function rangeStatements(db: Database, table: string): { del: Statement; count: Statement } {
  let m = rangeCache.get(db);
  if (!m) rangeCache.set(db, (m = new Map()));
  let s = m.get(table);
  if (!s) {
    const range = keyRange(table, '@lo', '@hi');
    s = { del: db.prepare(`DELETE FROM ${range}`), count: db.prepare(`SELECT count(*) FROM ${range}`).pluck() };
    m.set(table, s);
  }
  return s;
}

/** How many of `table`'s rows have ts in [lo, hi). */
export function countRange(db: Database, table: string, lo: number, hi: number): number {
  return rangeStatements(db, table).count.get({ lo, hi }) as number;
}

/** Deletes `table`'s rows with ts in [lo, hi); returns how many went. */
export function deleteRange(db: Database, table: string, lo: number, hi: number): number {
  return rangeStatements(db, table).del.run({ lo, hi }).changes;
}

/** A checkpoint that never waits for readers (see maintainFile for when it runs). */
export function checkpointPassive(db: Database): void {
  db.pragma('wal_checkpoint(PASSIVE)');
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

export function walSize(db: Database): number {
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
