// The data file system's guard: knows whether the agent can write, says so (log, GET /settings,
// the `storage_status` event, the UI's banner), keeps the readings it could not store and writes
// them when it can again, and acts before the card is full.
//
// - A write that fails on storage (SQLITE_FULL, a read-only file system, an I/O error) is reported
//   here by whoever wrote; the state then says what the error was, and the guard retries: first it
//   gives back the reserve file (reserve-file.ts), then it writes the readings it kept, with backoff
//   from 5 s to 5 min. The first write that goes through (the guard's or anyone's) ends the state.
// - Every minute it looks at the free space. Below `reserveBytes` it raises an alert (state `low`,
//   a warning) and asks the owner to make room (`makeRoom`: raw rows already rolled up are pruned).
import type { Logger } from '../log/logger.js';
import type { EventBus } from '../events/bus.js';
import type { Reading } from './devices.js';
import { Backoff } from '../shared/backoff.js'; // 5 s doubling to 5 min
import { freeBytes, releaseReserve } from './reserve-file.js';
import type { StorageState, StorageStatus } from '../events/payloads.js';
import { errorText } from '../shared/error-text.js';


/** What kind of storage failure an error is, or undefined when it is not one. */
export function storageProblem(err: unknown): Exclude<StorageState, 'ok' | 'low'> | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_IOERR_SHMSIZE') return 'full';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'read_only';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'io_error';
  return undefined;
}

/** At most this many readings wait in memory (about 1.5 KiB each): a day of 15-minute polls of 100 printers. */
export const MAX_PENDING_READINGS = 10_000;
const CHECK_MS = 60_000;
const RETRY_SOON_MS = 5_000;

export interface StorageGuardDeps {
  dataDir: string;
  reserveBytes: number;
  log: Logger;
  events: EventBus;
  /** Stores readings kept while the card was full; throws as DeviceStore.recordReadings does. */
  writeReadings(readings: Reading[]): void;
  /** A small write that shows whether the card takes writes again, when no reading waits. */
  probe(): void;
  /** Frees space inside the database (pruning); resolves to what it freed, for the log. */
  makeRoom(): Promise<object>;
  /** Free bytes of the data file system (reserve-file.ts freeBytes; tests give their own). */
  freeBytes?: (dir: string) => number | undefined;
  now?: () => number;
}

export class StorageGuard {
  private state: StorageState = 'ok';
  private error: string | null = null;
  private since: number;
  private free: number | null = null;
  private pending: Reading[] = [];
  private dropped = 0;
  private timer?: NodeJS.Timeout;
  private readonly backoff = new Backoff();
  private lastRoomMade = 0;
  private stopped = false;

  constructor(private readonly d: StorageGuardDeps) {
    this.since = this.now();
  }

  private now(): number {
    return (this.d.now ?? Date.now)();
  }

  status(): StorageStatus {
    return {
      state: this.state,
      free_bytes: this.free,
      reserve_bytes: this.d.reserveBytes,
      error: this.error,
      since: new Date(this.since).toISOString(),
      pending_readings: this.pending.length,
    };
  }

  /** Whether writes are known to fail now (full, read-only, I/O errors). */
  failing(): boolean {
    return this.state !== 'ok' && this.state !== 'low';
  }

  /** A first write and look at the file system now, then a look every minute (sooner while writes fail). */
  start(): void {
    void this.tick(true);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * Called by a writer whose write threw. Returns true when it was a storage failure (the state now
   * says so and the guard retries); false for any other error, which the caller handles as before.
   */
  failed(err: unknown, what: string): boolean {
    const problem = storageProblem(err);
    if (!problem) return false;
    const message = `${what}: ${errorText(err)} (${(err as { code: string }).code})`;
    if (!this.failing()) {
      // Room for SQLite to go on at once, while the guard works out the rest.
      if (problem === 'full' && releaseReserve(this.d.dataDir)) this.d.log.warn({ data_dir: this.d.dataDir }, 'data file system full: the reserve file was given back');
      this.backoff.reset();
      this.schedule(this.backoff.next());
    }
    this.set(problem, message);
    return true;
  }

  /** Called after a write went through: the card takes writes again. */
  wrote(): void {
    if (this.failing()) {
      this.set('ok', null);
      this.measure();
    }
  }

  /** Keeps readings that could not be stored, to write them when the card takes writes again. */
  keep(readings: Reading[]): void {
    // Not a storage failure (a busy database): try again soon rather than at the next minute's look.
    if (!this.failing()) this.schedule(RETRY_SOON_MS);
    this.pending.push(...readings);
    const over = this.pending.length - MAX_PENDING_READINGS;
    if (over > 0) {
      // The oldest go first: a later reading of the same meter says more than an earlier one.
      this.pending.splice(0, over);
      this.dropped += over;
      this.d.log.warn({ dropped: over, dropped_total: this.dropped, kept: this.pending.length }, 'readings dropped: the card could not be written for too long');
    }
    this.publish();
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(first = false): Promise<void> {
    // At start, one small write shows a read-only card before anything else needs to write.
    if (first || this.failing() || this.pending.length > 0) this.retry();
    this.measure();
    if (this.state === 'low' && this.now() - this.lastRoomMade > CHECK_MS * 10) await this.makeRoom();
    // Readings still kept while the card is fine: the database was busy (see keep()).
    this.schedule(this.failing() ? this.backoff.next() : this.pending.length > 0 ? RETRY_SOON_MS : CHECK_MS);
  }

  /** Writes the kept readings (or checks that writes go through again when none are kept). */
  private retry(): void {
    const batch = this.pending;
    try {
      if (batch.length === 0) this.d.probe();
      else {
        this.d.writeReadings(batch);
        this.pending = this.pending.slice(batch.length);
        this.d.log.info({ readings: batch.length }, 'readings kept while the card was unwritable are stored');
      }
      this.backoff.reset();
      this.wrote();
      this.publish();
    } catch (err) {
      const what = batch.length ? 'storing kept readings' : 'checking that the card takes writes';
      if ((err as { code?: unknown })?.code === 'SQLITE_BUSY') {
        // Another process (the CLI's import) holds the write lock: the card is fine, try again soon.
        this.d.log.warn({ readings: batch.length }, `${what}: the database is busy (another process writes to it): trying again soon`);
      } else if (!this.failed(err, what)) this.d.log.error({ err: errorText(err) }, `${what} failed`);
    }
  }

  private measure(): void {
    this.free = (this.d.freeBytes ?? freeBytes)(this.d.dataDir) ?? null;
    if (this.failing()) return; // only a write that goes through ends a failure
    const low = this.free !== null && this.free < this.d.reserveBytes;
    if (low && this.state === 'ok') {
      this.d.log.warn({ free_bytes: this.free, reserve_bytes: this.d.reserveBytes, data_dir: this.d.dataDir }, 'data file system nearly full: pruning raw readings already rolled up');
      this.set('low', null);
    } else if (!low && this.state === 'low') {
      this.set('ok', null);
    }
  }

  private async makeRoom(): Promise<void> {
    this.lastRoomMade = this.now();
    try {
      const freed = await this.d.makeRoom();
      this.d.log.warn({ ...freed, free_bytes: (this.d.freeBytes ?? freeBytes)(this.d.dataDir) }, 'room made on a nearly full data file system');
    } catch (err) {
      if (!this.failed(err, 'pruning')) this.d.log.error({ err: errorText(err) }, 'pruning failed');
    }
  }

  private set(state: StorageState, error: string | null): void {
    if (state === this.state && error === this.error) return;
    const was = this.state;
    this.state = state;
    this.error = error;
    this.since = this.now();
    if (state === 'ok') this.d.log.info({ was }, 'data file system writable again');
    else if (state !== 'low') this.d.log.error({ state, err: error, data_dir: this.d.dataDir }, 'the data file system does not take writes: serving reads, retrying');
    this.publish();
  }

  private publish(): void {
    this.d.events.emit('storage_status', this.status());
  }
}
