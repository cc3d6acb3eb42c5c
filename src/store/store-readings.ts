// Writing what was read (SNMP scans and polls, USB probes) so that a reading is never lost to the
// card: one transaction, and when the card does not take it the storage guard keeps it.
import type { Logger } from '../log/logger.js';
import type { DeviceStore, Reading } from '../store/devices.js';
import type { StorageGuard } from '../store/storage-guard.js';
import { errorText } from '../shared/error-text.js';

export interface ReadingsSink {
  devices: DeviceStore;
  log: Logger;
  /** Told of every write that fails on storage; keeps the readings that could not be stored. */
  storage?: Pick<StorageGuard, 'failed' | 'keep' | 'wrote'>;
}

/**
 * Readings were taken but the card did not take them: the storage guard keeps them in memory and
 * writes them when it can. Carries the storage error's code, so the API answers 507 with it.
 */
export class ReadingsKeptError extends Error {
  readonly code: string;
  constructor(readonly count: number, cause: unknown) {
    const e = cause as { code?: string };
    super(`${count} reading(s) taken but not stored yet: ${errorText(cause)}; kept in memory and stored as soon as the database takes writes`, { cause });
    this.code = e.code ?? 'SQLITE_FULL';
  }
}

/**
 * Writes readings in one transaction; returns their ids. When the card does not take the write
 * (full, read-only), the storage guard keeps them to write later, and this throws
 * ReadingsKeptError: no caller answers as if they were stored.
 */
export function storeReadings(sink: ReadingsSink, readings: Reading[], what: string): (number | undefined)[] {
  const { devices, storage, log } = sink;
  try {
    const ids = devices.recordReadings(readings);
    storage?.wrote();
    return ids;
  } catch (err) {
    const busy = (err as { code?: unknown })?.code === 'SQLITE_BUSY';
    if (busy && storage) {
      // Another process held the write lock past busy_timeout (the CLI's import is one
      // transaction): the card is fine, so only keep them; the guard writes them within a minute.
      log.warn({ readings: readings.length }, `${what}: the database is busy (another process writes to it): readings kept`);
    } else if (!storage?.failed(err, what)) throw err;
    storage.keep(readings);
    throw new ReadingsKeptError(readings.length, err);
  }
}
