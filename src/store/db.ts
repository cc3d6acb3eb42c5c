// Opens the agent's SQLite file with the settings a flash card on a power-cut-prone box needs.
import Database from 'better-sqlite3';
import type { Database as DB } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrations.js';

export type { DB };

export interface OpenOptions {
  readonly?: boolean;
  /** Stop migrating at this version (tests of migrations from earlier versions). */
  migrateTo?: number;
}

export function openDatabase(file: string, opts: OpenOptions = {}): DB {
  if (!opts.readonly) mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
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
