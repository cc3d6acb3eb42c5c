// Runs roll-up + retention at start-up (catch-up after the box was off) and then on a cron schedule.
// Runs never overlap: a tick that finds the previous pass still running is skipped (the next pass
// catches up, since every pass processes all closed buckets not yet rolled).
//
// Stopping (shutdown): the stop function aborts the pass under way between batches. The signal is
// passed down as the passes' yield function (called between bucket reads and after each batch's
// transaction): once aborted it throws there, so the pass ends before its next batch. A batch's
// transaction is synchronous, so it is committed whole before that point, never cut in two; reads
// of a batch not yet written are simply dropped. Retention's vacuum and checkpoint are skipped too.
import cron from 'node-cron';
import type { Database } from 'better-sqlite3';
import { rollupOnce, type RollupResult } from './rollup.js';
import { applyRetention, configureWal, type RetentionResult } from './retention.js';
import { nextTurn } from '../shared/pace.js';
import { errorText } from '../shared/error-text.js';

export interface RollupLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Five minutes past each hour: the hour just ended is closed, and polls on the hour are done. */
export const DEFAULT_ROLLUP_CRON = '5 * * * *';

/** Closed hours rolled together by the scheduled pass (see RollupOptions.hourlyBatch). */
export const SCHEDULED_HOURLY_BATCH = 24;

/** The yield between batches, made to stop the pass once `signal` is aborted (rejects with its reason). */
export function abortableYield(signal: AbortSignal): () => Promise<void> {
  return async () => {
    signal.throwIfAborted();
    await nextTurn();
    signal.throwIfAborted();
  };
}

/** True for the rejection of a pass stopped by its signal. */
export function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return Boolean(signal?.aborted) && err === signal?.reason;
}

/**
 * One pass: roll up everything closed, then retention, vacuum and checkpoint. `hourlyBatch` 1 (the
 * default, used by `printbox-agent rollup`) closes every ended hour now. `signal` stops it between
 * batches: it then rejects with the signal's reason (see the top of this file).
 */
export async function rollupPass(
  db: Database,
  now: Date = new Date(),
  hourlyBatch = 1,
  signal?: AbortSignal,
): Promise<{ rollup: RollupResult; retention: RetentionResult }> {
  const yieldFn = signal ? abortableYield(signal) : undefined;
  signal?.throwIfAborted();
  const rollup = await rollupOnce(db, now, { hourlyBatch, yieldFn });
  signal?.throwIfAborted();
  const retention = await applyRetention(db, now, { yieldFn });
  return { rollup, retention };
}

/** Raw rows kept when the storage guard asks for room (rollup/retention.ts rawDays). */
export const RAW_DAYS_WHEN_LOW = 1;

export interface RollupSchedule {
  /** Stops the schedule and the pass under way (between batches); resolves once it has ended. */
  stop(): Promise<void>;
  /** Prunes raw rows already rolled up, down to RAW_DAYS_WHEN_LOW, after the pass under way. */
  makeRoom(): Promise<RetentionResult>;
}

export function startRollupSchedule(db: Database, log: RollupLogger, cronExpr: string = DEFAULT_ROLLUP_CRON): RollupSchedule {
  configureWal(db);
  let running: Promise<void> | undefined;
  const stopping = new AbortController();
  const tick = (reason: string): Promise<void> | undefined => {
    if (stopping.signal.aborted || running) return running;
    const t0 = Date.now();
    running = rollupPass(db, new Date(), SCHEDULED_HOURLY_BATCH, stopping.signal)
      .then(
        (r) => log.info({ reason, ms: Date.now() - t0, ...r }, 'rollup pass done'),
        (err: unknown) =>
          isAbort(err, stopping.signal)
            ? log.info({ reason, ms: Date.now() - t0 }, 'rollup pass stopped between batches (the next pass carries on)')
            : log.error({ reason, err: errorText(err) }, 'rollup pass failed'),
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  // UTC so that "5 past the hour" does not shift or repeat on DST changes.
  // The start-up catch-up is the first pass: a tick due before it has begun (a busy start) is
  // skipped, the catch-up does its work.
  let started = false;
  const task = cron.schedule(cronExpr, () => (started ? tick('schedule') : undefined), { timezone: 'UTC', noOverlap: true, name: 'rollup' });
  setImmediate(() => {
    started = true;
    void tick('startup');
  });
  return {
    async stop() {
      stopping.abort();
      await task.stop();
      await task.destroy();
      if (running) await running;
    },
    // One pass at a time on the connection: this waits for the scheduled one, and the next
    // scheduled one waits for this (tick returns `running`).
    async makeRoom() {
      while (running) await running;
      const pass = applyRetention(db, new Date(), { rawDays: RAW_DAYS_WHEN_LOW, yieldFn: abortableYield(stopping.signal) });
      running = pass.then(
        () => undefined,
        () => undefined,
      );
      try {
        return await pass;
      } finally {
        running = undefined;
      }
    },
  };
}
