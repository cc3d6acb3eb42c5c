// The rolled-up tiers' buckets and tables: which table each aggregate tier lives in, what it is
// computed from, and where its buckets start. Rollup (rollup/rollup.ts) fills them; page counts
// (page-counts.ts) read them.

export type AggTier = 'hourly' | 'daily' | 'monthly';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export interface TierDef {
  tier: AggTier;
  table: string;
  /** Table the tier is computed from. */
  source: string;
  /** Tier whose watermark bounds this one (undefined: computed from raw). */
  sourceTier?: AggTier;
  start(ts: number): number;
  next(start: number): number;
  /** Buckets per transaction (hourly: overridden by RollupOptions.hourlyBatch). */
  batch: number;
}

const floorTo = (ts: number, len: number) => Math.floor(ts / len) * len;
export const hourStart = (ts: number) => floorTo(ts, HOUR_MS);
export const dayStart = (ts: number) => floorTo(ts, DAY_MS);
export function monthStart(ts: number): number {
  const d = new Date(ts);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
export function nextMonth(start: number): number {
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export const TIER_DEFS: Record<AggTier, TierDef> = {
  hourly: { tier: 'hourly', table: 'metrics_hourly', source: 'metrics_raw', start: hourStart, next: (s) => s + HOUR_MS, batch: 1 },
  daily: {
    tier: 'daily', table: 'metrics_daily', source: 'metrics_hourly', sourceTier: 'hourly',
    start: dayStart, next: (s) => s + DAY_MS, batch: 1,
  },
  monthly: {
    tier: 'monthly', table: 'metrics_monthly', source: 'metrics_daily', sourceTier: 'daily',
    start: monthStart, next: nextMonth, batch: 1,
  },
};
