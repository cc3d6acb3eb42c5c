// When each supply runs out, from its own level history. Pure: readings in, forecasts
// out; api/routes/forecast.ts reads the history (store/metrics.ts `supplyHistory`).
//
// How (docs/api.md, GET /api/devices/forecast):
// 1. Levels outside 0..100 are dropped: Printer-MIB's -2 (unknown) and -3 (some left) say nothing
//    of how fast a supply drains.
// 2. A level that rises by REFILL_JUMP points or more over the one before, and stays up at the
//    next reading, starts a new life (a cartridge replaced). Only the current life is fitted.
// 3. The life is condensed to one point per UTC day (the lower median level, the day's highest page
//    counter): a day's polls are noise around one value, and the fit stays a few thousand pairs.
// 4. Only the days where the level changed are fitted (the first day of each run of one value):
//    a level reported in coarse steps (100, 90, 80) is a staircase whose flat treads say nothing
//    of the slope; with fine levels nearly every day is a change.
// 5. Theil–Sen (the median of the pairwise slopes) against time: a few wild readings do not move
//    it, and fitting against calendar time over whole weeks averages weekday-only use into the
//    drain per calendar day. The same against the page counter gives pages to empty.
// Nothing is guessed: too short a life, too few changes, or a level that does not fall give
// nulls and a reason.

const DAY = 86_400_000;
/** A rise of this many points over the previous reading is a new cartridge, not noise. */
export const REFILL_JUMP = 20;
/** A life shorter than this (first to last valid reading) gives no forecast. */
export const MIN_SPAN_DAYS = 7;
/** Fewer level changes than this give no forecast (a fit needs a trend, not one step). */
export const MIN_CHANGES = 3;
/** A forecast further out than this is "not falling measurably". */
export const MAX_DAYS = 730;

export interface SupplyReading {
  ts: number;
  /** The reported level in percent; negative (Printer-MIB -2, -3) or missing means unknown. */
  level?: number | null;
  /** The device's page counter at the same time, when known. */
  pages?: number | null;
}

export interface SupplyForecast {
  name: string;
  /** The last reported level (0..100), or null when the last report was unknown (-2/-3) or absent. */
  level: number | null;
  days_to_empty: number | null;
  pages_to_empty: number | null;
  /** The UTC date (RFC 3339 full-date, YYYY-MM-DD) the level reaches 0. */
  empty_on: string | null;
  /**
   * 0..1: how far the history and the fit can be trusted (see `confidenceOf`); null with no
   * forecast. 0.7 and over reads as high, under 0.4 as low.
   */
  confidence: number | null;
  /** Why there is no forecast (null when there is one). */
  reason: string | null;
}

const valid = (l: number | null | undefined): l is number => typeof l === 'number' && Number.isFinite(l) && l >= 0 && l <= 100;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The Theil–Sen slope and intercept of y against x, or undefined without two distinct x. */
export function theilSen(xs: number[], ys: number[]): { slope: number; intercept: number } | undefined {
  const slopes: number[] = [];
  for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) if (xs[j] !== xs[i]) slopes.push((ys[j] - ys[i]) / (xs[j] - xs[i]));
  }
  if (!slopes.length) return undefined;
  const slope = median(slopes);
  return { slope, intercept: median(xs.map((x, i) => ys[i] - slope * x)) };
}

/** The valid readings of the current life (after the last replacement), in time order. */
export function currentLife(readings: SupplyReading[]): { ts: number; level: number; pages?: number }[] {
  const pts = readings
    .filter((r) => valid(r.level))
    .map((r) => ({ ts: r.ts, level: r.level as number, pages: typeof r.pages === 'number' && r.pages >= 0 ? r.pages : undefined }))
    .sort((a, b) => a.ts - b.ts);
  let start = 0;
  for (let i = 1; i < pts.length; i++) {
    const rise = pts[i].level - pts[i - 1].level;
    // One wild reading is not a cartridge: the next reading must stay up (the last one counts alone).
    const stays = i === pts.length - 1 || pts[i + 1].level - pts[i - 1].level >= REFILL_JUMP;
    if (rise >= REFILL_JUMP && stays) start = i;
  }
  return pts.slice(start);
}

interface DayPoint { ts: number; level: number; pages?: number }

/** One point per UTC day: the median level at the day's mean reading time, the highest counter. */
function byDay(pts: { ts: number; level: number; pages?: number }[]): DayPoint[] {
  const days = new Map<number, { ts: number[]; levels: number[]; pages?: number }>();
  for (const p of pts) {
    const k = Math.floor(p.ts / DAY);
    let d = days.get(k);
    if (!d) days.set(k, (d = { ts: [], levels: [] }));
    d.ts.push(p.ts);
    d.levels.push(p.level);
    if (p.pages !== undefined) d.pages = Math.max(d.pages ?? 0, p.pages);
  }
  // The lower median: always a level the printer reported, so a day that straddles one coarse step
  // (100, 100, 90, 90) is not an invented 95.
  const lowMedian = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
  return [...days.values()].map((d) => ({ ts: d.ts.reduce((a, b) => a + b, 0) / d.ts.length, level: lowMedian(d.levels), pages: d.pages }));
}

/** The first day of each run of one level. */
function changes(days: DayPoint[]): DayPoint[] {
  return days.filter((d, i) => i === 0 || d.level !== days[i - 1].level);
}

/**
 * Confidence 0..1, the product of three parts, each 0..1: the span of the life fitted (full at 30
 * days), the number of level changes fitted (full at 10), and how closely the changes follow the
 * line (1 minus the median absolute residual over the level the life has used, floored at 0).
 */
export function confidenceOf(spanDays: number, nChanges: number, medianResidual: number, used: number): number {
  const span = Math.min(1, spanDays / 30);
  const count = Math.min(1, nChanges / 10);
  const fit = used > 0 ? Math.max(0, 1 - medianResidual / used) : 0;
  return Math.round(span * count * fit * 100) / 100;
}

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The forecast of one supply from its readings (any order, any tier mix), as of `now`. */
export function forecastSupply(name: string, readings: SupplyReading[], now: number): SupplyForecast {
  const last = [...readings].sort((a, b) => a.ts - b.ts).at(-1);
  const level = last && valid(last.level) ? last.level : null;
  const none = (reason: string): SupplyForecast => ({ name, level, days_to_empty: null, pages_to_empty: null, empty_on: null, confidence: null, reason });
  const life = currentLife(readings);
  if (!life.length) return none('no level reported (unknown or "some left" only)');
  const current = life[life.length - 1];
  if (current.level === 0) {
    let i = life.length - 1;
    while (i > 0 && life[i - 1].level === 0) i--;
    return { name, level, days_to_empty: 0, pages_to_empty: 0, empty_on: isoDate(life[i].ts), confidence: 1, reason: null };
  }
  const spanDays = (current.ts - life[0].ts) / DAY;
  if (spanDays < MIN_SPAN_DAYS) return none(`not enough history: ${Math.floor(spanDays)} days since this supply was installed or first read, ${MIN_SPAN_DAYS} needed`);
  const days = byDay(life);
  const steps = changes(days);
  if (steps.length < MIN_CHANGES) {
    const n = steps.length - 1;
    return none(`not enough history: the level changed ${n} time${n === 1 ? '' : 's'}, ${MIN_CHANGES - 1} changes needed`);
  }
  const fit = theilSen(steps.map((s) => s.ts / DAY), steps.map((s) => s.level));
  if (!fit || !(fit.slope < 0)) return none('the level is not falling');
  // Where the life stands now: the line's value, kept within the last reported step (a coarse
  // level of 70 can mean anything down to the next step).
  const step = Math.max(1, median(steps.slice(1).map((s, i) => Math.abs(s.level - steps[i].level))));
  const lastDay = days[days.length - 1];
  const onLine = fit.intercept + fit.slope * (now / DAY);
  const levelNow = Math.min(lastDay.level, Math.max(lastDay.level - step, onLine));
  const daysLeft = Math.max(0, levelNow / -fit.slope);
  if (daysLeft > MAX_DAYS) return none(`the level is not falling measurably (more than ${MAX_DAYS} days to empty)`);
  let pagesLeft: number | null = null;
  const withPages = steps.filter((s) => s.pages !== undefined);
  if (withPages.length >= MIN_CHANGES) {
    const perPage = theilSen(withPages.map((s) => s.pages!), withPages.map((s) => s.level));
    if (perPage && perPage.slope < 0) pagesLeft = Math.round(levelNow / -perPage.slope);
  }
  const residual = median(steps.map((s) => Math.abs(s.level - (fit.intercept + fit.slope * (s.ts / DAY)))));
  const used = Math.max(...life.map((p) => p.level)) - levelNow;
  return {
    name,
    level,
    days_to_empty: Math.round(daysLeft * 10) / 10,
    pages_to_empty: pagesLeft,
    empty_on: isoDate(now + daysLeft * DAY),
    confidence: confidenceOf(spanDays, steps.length, residual, used),
    reason: null,
  };
}

/** Supply histories as snapshots hold them: a `toner_levels` object per reading. */
export interface LevelsReading {
  ts: number;
  toner_levels?: Record<string, unknown> | null;
  page_count?: number | null;
}

/**
 * Every supply's forecast, in the order of the latest reading's supplies (those no longer
 * reported are left out: a supply the printer stopped naming has nothing to forecast).
 */
export function forecastSupplies(history: LevelsReading[], now: number): SupplyForecast[] {
  const sorted = [...history].sort((a, b) => a.ts - b.ts);
  const latest = [...sorted].reverse().find((r) => r.toner_levels && Object.keys(r.toner_levels).length);
  if (!latest) return [];
  return Object.keys(latest.toner_levels!).map((name) =>
    forecastSupply(
      name,
      sorted
        .filter((r) => r.toner_levels && Object.hasOwn(r.toner_levels, name))
        .map((r) => {
          const v = r.toner_levels![name];
          return { ts: r.ts, level: typeof v === 'number' ? v : null, pages: r.page_count ?? null };
        }),
      now,
    ),
  );
}
