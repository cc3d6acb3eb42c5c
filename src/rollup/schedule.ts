// Runs roll-up + retention at start-up (catch-up after the box was off) and then on a cron schedule.
// Runs never overlap: a tick that finds the previous pass still running is skipped (the next pass
// catches up, since every pass processes all closed buckets not yet rolled).
import cron from 'node-cron';
import type { Database } from 'better-sqlite3';
import { rollupOnce, type RollupResult } from './rollup.js';
import { applyRetention, configureWal, type RetentionResult } from './retention.js';

export interface RollupLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Five minutes past each hour: the hour just ended is closed, and polls on the hour are done. */
export const DEFAULT_ROLLUP_CRON = '5 * * * *';

/** Closed hours rolled together by the scheduled pass (see RollupOptions.hourlyBatch). */
export const SCHEDULED_HOURLY_BATCH = 24;

/**
 * One pass: roll up everything closed, then retention, vacuum and checkpoint. `hourlyBatch` 1 (the
 * default, used by `printbox-agent rollup`) closes every ended hour now.
 */
export async function rollupPass(
  db: Database,
  now: Date = new Date(),
  hourlyBatch = 1,
): Promise<{ rollup: RollupResult; retention: RetentionResult }> {
  const rollup = await rollupOnce(db, now, { hourlyBatch });
  const retention = await applyRetention(db, now);
  return { rollup, retention };
}

export function startRollupSchedule(db: Database, log: RollupLogger, cronExpr: string = DEFAULT_ROLLUP_CRON): () => Promise<void> {
  configureWal(db);
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = (reason: string): Promise<void> | undefined => {
    if (stopped || running) return running;
    const t0 = Date.now();
    running = rollupPass(db, new Date(), SCHEDULED_HOURLY_BATCH)
      .then(
        (r) => log.info({ reason, ms: Date.now() - t0, ...r }, 'rollup pass done'),
        (err: unknown) => log.error({ reason, err: err instanceof Error ? err.message : String(err) }, 'rollup pass failed'),
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  // UTC so that "5 past the hour" does not shift or repeat on DST changes.
  const task = cron.schedule(cronExpr, () => tick('schedule'), { timezone: 'UTC', noOverlap: true, name: 'rollup' });
  setImmediate(() => tick('startup'));
  return async () => {
    stopped = true;
    await task.stop();
    await task.destroy();
    if (running) await running;
  };
}
