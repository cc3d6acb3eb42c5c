// Which tier serves which age of the meter history, and so how long each keeps its rows
// (docs/decisions/0005-metric-tiers.md): history reads each tier inside its window
// (store/metrics.ts), and retention deletes a tier's rows once they are past it
// (rollup/retention.ts). One policy, stated once, so the two cannot disagree: a row deleted while
// still in its window would leave a hole in history, a row kept past it would cost flash for
// nothing.
import type { Tier } from './device.js';

const DAY = 86_400_000;

/** A tier serves rows up to this many days old; older ones are served by the next tier. Monthly rows are kept. */
export const RETENTION_DAYS = { raw: 7, hourly: 30, daily: 365 } as const satisfies Record<Exclude<Tier, 'monthly'>, number>;

/**
 * Each tier's window relative to now, as [from, to] in whole milliseconds: raw (now-7d, +inf),
 * hourly (now-30d, now-7d], daily (now-365d, now-30d], monthly (-inf, now-365d]. Timestamps are
 * integers, so an open bound `(a` is the closed bound `[a+1`.
 */
export function tierWindows(now: number): Record<Tier, [number, number]> {
  const end = (tier: keyof typeof RETENTION_DAYS) => now - RETENTION_DAYS[tier] * DAY;
  return {
    raw: [end('raw') + 1, Number.MAX_SAFE_INTEGER],
    hourly: [end('hourly') + 1, end('raw')],
    daily: [end('daily') + 1, end('hourly')],
    monthly: [Number.MIN_SAFE_INTEGER, end('daily')],
  };
}
