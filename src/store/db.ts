// Opens the agent's SQLite file with the settings a flash card on a power-cut-prone box needs.
import Database from 'better-sqlite3';
import type { Database as DB } from 'better-sqlite3';
import { mkdirSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { migrate } from './migrations.js';

export type { DB };

export interface OpenOptions {
  readonly?: boolean;
  /** Stop migrating at this version (tests of migrations from earlier versions). */
  migrateTo?: number;
  /**
   * Hold the file for this process alone. SQLite then keeps the WAL index in its own memory instead
   * of the -shm file, so a database can be opened on a file system too full to make that file;
   * other processes (the CLI) cannot open it meanwhile. Used only then (commands/serve.ts).
   */
  exclusive?: boolean;
}

/**
 * Why the database could not be opened or set up: the message names the file, the step that failed
 * and a likely cause, since SQLite's own ("unable to open database file", "attempt to write a
 * readonly database") names neither. `code` is the underlying one (SQLITE_CANTOPEN, EACCES, ...).
 */
export class DatabaseOpenError extends Error {
  constructor(
    readonly file: string,
    readonly code: string | undefined,
    message: string,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** A likely cause for an open failure, from the error code and what is on disk. */
function hint(code: string | undefined, file: string, readonly: boolean): string {
  const dir = dirname(file);
  const kind = (p: string) => {
    try {
      return statSync(p).isDirectory() ? 'directory' : 'file';
    } catch {
      return 'missing';
    }
  };
  switch (code) {
    case 'SQLITE_CANTOPEN':
      if (kind(file) === 'directory') return ' (it is a directory, not a file)';
      if (kind(dir) === 'missing') return ` (the directory ${dir} does not exist)`;
      if (readonly && kind(file) === 'missing') return ' (the file does not exist)';
      return ` (is the directory ${dir} writable, on a file system mounted read-write? SQLite also makes ${basename(file)}-wal and -shm there)`;
    case 'SQLITE_READONLY':
    case 'SQLITE_READONLY_DIRECTORY':
    case 'SQLITE_READONLY_CANTINIT':
    case 'SQLITE_READONLY_CANTLOCK':
    case 'SQLITE_READONLY_RECOVERY':
    case 'SQLITE_READONLY_DBMOVED':
      return ` (is the file or the directory ${dir} read-only, or the file system mounted read-only?)`;
    case 'SQLITE_FULL':
      return ' (the file system is full)';
    case 'SQLITE_NOTADB':
    case 'SQLITE_CORRUPT':
      return ' (not a SQLite database, or a damaged one)';
    case 'SQLITE_PERM':
    case 'EACCES':
    case 'EPERM':
      return ' (permission denied: is the agent running as the owner of the data directory?)';
    case 'EROFS':
      return ' (the file system is mounted read-only)';
    case 'ENOTDIR':
    case 'EEXIST':
      return ' (a file is where a directory is expected)';
    case 'ENOSPC':
      return ' (the file system is full)';
    default:
      return '';
  }
}

/** Runs one step of opening `file`; a failure becomes a DatabaseOpenError naming the file and the step. */
function step<T>(file: string, readonly: boolean, what: string | undefined, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const code = typeof e?.code === 'string' ? e.code : undefined;
    // Node's file system errors repeat the code and the path: keep their description only.
    const detail = e instanceof Error ? e.message.replace(/^[A-Z]+: ([^,]+), \w+ '.*'$/, '$1') : String(err);
    const verb = readonly ? 'cannot open database (read-only)' : 'cannot open database';
    throw new DatabaseOpenError(file, code, `${verb} ${file}: ${what ? `${what}: ` : ''}${detail}${hint(code, file, readonly)}`, { cause: err });
  }
}

export function openDatabase(file: string, opts: OpenOptions = {}): DB {
  const readonly = opts.readonly ?? false;
  if (!readonly) step(file, readonly, `creating its directory ${dirname(file)}`, () => mkdirSync(dirname(file), { recursive: true }));
  const db = step(file, readonly, undefined, () => new Database(file, { readonly, fileMustExist: readonly }));
  try {
    setUp(db, file, opts);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * WAL mode, once for the file's life. Switching a new file takes its lock without SQLite's busy
 * handler: a second process opening the file at that moment (the agent beside provisioning at
 * boot) is told SQLITE_BUSY at once. It waits here instead, within the same 5 s.
 */
function toWal(db: DB): void {
  const deadline = Date.now() + 5000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}

function setUp(db: DB, file: string, opts: OpenOptions): void {
  const readonly = opts.readonly ?? false;
  const pragma = (p: string) => step(file, readonly, `PRAGMA ${p}`, () => db.pragma(p));
  // Before anything reads the file: it decides whether the -shm file is ever made.
  if (opts.exclusive) pragma('locking_mode = EXCLUSIVE');
  pragma('busy_timeout = 5000');
  // A Pi has little memory: cap the page cache at about 2 MiB (better-sqlite3's default is 16 MiB).
  // Read-only connections too, so a benchmark's bare query reads through the cache the agent has.
  pragma('cache_size = -2000');
  if (readonly) return;
  // auto_vacuum only takes effect before the first table exists; INCREMENTAL lets retention hand
  // freed pages back to the file system in small steps instead of a full VACUUM rewrite.
  // Set on a new file only: on an existing one it changes nothing, yet is a write, which a full or
  // read-only card refuses.
  if (db.pragma('page_count', { simple: true }) === 0) pragma('auto_vacuum = INCREMENTAL');
  step(file, readonly, 'PRAGMA journal_mode = WAL', () => toWal(db));
  // FULL: a committed transaction survives a power cut
  // (docs/decisions/0009-durable-writes-and-deletes.md).
  pragma('synchronous = FULL');
  pragma('foreign_keys = ON');
  pragma('temp_store = MEMORY');
  step(file, readonly, 'updating its schema', () => migrate(db, opts.migrateTo));
}
