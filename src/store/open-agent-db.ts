// Opens the agent's own database so that the agent starts and serves reads even when the card is
// full or mounted read-only. Before, SQLite could not make its -shm file on a full card, the
// agent exited, and systemd restarted it in a loop: even reads were gone.
import type { Logger } from '../log/logger.js';
import { DatabaseOpenError, openDatabase, type DB } from './db.js';
import { releaseReserve } from './reserve-file.js';
import { storageProblem } from './storage-guard.js';

export interface AgentDb {
  db: DB;
  /** The storage error the first open met, when the database was opened in spite of it. */
  problem?: DatabaseOpenError;
}

/**
 * 1. Open normally.
 * 2. On a storage failure (full, read-only, I/O), give back the reserve file and try again: on a
 *    card full of something else, the agent then runs normally.
 * 3. Else open for this process alone (db.ts `exclusive`): no -shm file is needed, reads work,
 *    writes fail with SQLite's own error until there is room, and the storage guard retries them.
 * Any other failure (a bad path, a damaged file) is thrown as before.
 */
export function openAgentDatabase(file: string, dataDir: string, log: Logger): AgentDb {
  // The CLI's 5 s busy timeout stays until the agent serves (useServingBusyTimeout): at boot the
  // start-up writes (the schema, the setup code) may wait for provisioning's, and nothing is
  // served yet that a wait would stall.
  return openStoredOrExclusive(file, dataDir, log);
}

/** Once the agent serves: the short wait for another process's write lock (below). */
export function useServingBusyTimeout(db: DB): void {
  db.pragma(`busy_timeout = ${AGENT_BUSY_TIMEOUT_MS}`);
}

/**
 * How long one write of the agent waits for another process's write lock (the CLI's import holds
 * it for a whole file, its roll-up for one batch at a time). better-sqlite3 waits synchronously:
 * the whole agent stands still meanwhile, and a stall past the keep-alive timeout (5 s) made Node
 * close idle connections whose next request was already waiting, as resets (the load soak's
 * errors). 100 ms outlasts a roll-up batch; a write still refused is kept and retried (readings,
 * sessions: storage guard) or answered 503 with Retry-After (API writes).
 */
export const AGENT_BUSY_TIMEOUT_MS = 100;

function openStoredOrExclusive(file: string, dataDir: string, log: Logger): AgentDb {
  let first: DatabaseOpenError;
  try {
    return { db: openDatabase(file) };
  } catch (err) {
    if (!isStorageFailure(err)) throw err;
    first = err;
  }
  if (releaseReserve(dataDir)) {
    log.warn({ data_dir: dataDir, err: first.message }, 'data file system full at start: the reserve file was given back');
    try {
      return { db: openDatabase(file) }; // the guard sees the low space at its first look
    } catch (err) {
      if (!isStorageFailure(err)) throw err;
    }
  }
  log.error({ err: first.message }, 'database opened for this process alone: reads are served, writes are retried until the data file system takes them');
  return { db: openDatabase(file, { exclusive: true }), problem: first };
}

function isStorageFailure(err: unknown): err is DatabaseOpenError {
  return err instanceof DatabaseOpenError && storageProblem({ code: err.code }) !== undefined;
}
