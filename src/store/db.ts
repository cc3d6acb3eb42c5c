// Opens the agent's SQLite file with the settings a flash card on a power-cut-prone box needs.
import Database from 'better-sqlite3';
import type { Database as DB, Statement } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrations.js';

export type { DB };

export interface OpenOptions {
  readonly?: boolean;
  /** Stop migrating at this version (tests of migrations from earlier versions). */
  migrateTo?: number;
}

/**
 * Keeps every prepared statement for the life of the connection: one Statement per SQL text,
 * handed out again on the next prepare of the same text (and pragmas through the same cache).
 * Why: under Node 24 (the box's runtime), better-sqlite3 12 aborts the process (SIGABRT,
 * "RemoveEnvironmentCleanupHook: (env) != nullptr") when the garbage collector finalizes a
 * Statement at the wrong moment; a boot test saw the agent crash-loop on it at its first scan.
 * A statement that is never garbage is never finalized. The texts are a fixed set (the stores'
 * SQL), so the cache stays small. A cached statement still iterating (busy) is not shared.
 */
function keepStatements(db: DB): void {
  const cache = new Map<string, Statement>();
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const cached = cache.get(sql);
    if (cached && !cached.busy) return cached;
    const stmt = prepare(sql);
    if (!cached) cache.set(sql, stmt);
    return stmt;
  }) as DB['prepare'];
  db.pragma = ((source: string, options: { simple?: boolean } = {}) => {
    const stmt = db.prepare(`PRAGMA ${source}`);
    if (!stmt.reader) {
      stmt.run();
      return options.simple ? undefined : [];
    }
    return options.simple ? stmt.pluck(true).get() : stmt.pluck(false).all();
  }) as DB['pragma'];
}

export function openDatabase(file: string, opts: OpenOptions = {}): DB {
  if (!opts.readonly) mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  keepStatements(db);
  db.pragma('busy_timeout = 5000');
  // A Pi has little memory: cap the page cache at about 2 MiB (better-sqlite3's default is 16 MiB).
  // Read-only connections too, so a benchmark's bare query reads through the cache the agent has.
  db.pragma('cache_size = -2000');
  if (opts.readonly) return db;
  // auto_vacuum only takes effect before the first table exists; INCREMENTAL lets retention hand
  // freed pages back to the file system in small steps instead of a full VACUUM rewrite.
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  // FULL: a committed transaction survives a power cut (decisions.md, Devices).
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('temp_store = MEMORY');
  migrate(db, opts.migrateTo);
  return db;
}
