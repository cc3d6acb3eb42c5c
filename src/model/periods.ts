// Calendar periods (day, ISO week, month) in a time zone, as instants: what pages per period are
// counted over (store/page-counts.ts). Pure: a zone name and instants in, instants out.
//
// A period starts at local midnight of its first day in the zone; where a DST change skips
// midnight (a few zones move their clocks at 00:00) it starts at the first local time that exists
// (billing-time.ts zonedInstant). So a day is 23, 24 or 25 hours long around a DST change, and a
// week or month likewise an hour shorter or longer: the periods a person reads on a wall calendar.
import { wallClock, zonedInstant } from './billing-time.js';

export const PERIOD_KINDS = ['day', 'week', 'month'] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number];

export interface Period {
  /** Local label: `2026-03-29` (day), `2026-W13` (ISO week), `2026-03` (month). */
  label: string;
  /** First instant (epoch ms, inclusive). */
  start: number;
  /** First instant of the next period (exclusive). */
  end: number;
}

/** A local calendar date; arithmetic through Date.UTC (days and months roll over by themselves). */
interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function normalise(year: number, month: number, day: number): LocalDate {
  const d = new Date(Date.UTC(2000, 0, 1));
  d.setUTCFullYear(year, month - 1, day); // not Date.UTC: years 0-99
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** 1 (Monday) .. 7 (Sunday). */
function isoWeekday(d: LocalDate): number {
  const w = new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
  return w === 0 ? 7 : w;
}

/** ISO 8601 week label of the week starting on Monday `monday`: the year of its Thursday. */
function isoWeekLabel(monday: LocalDate): string {
  const thursday = normalise(monday.year, monday.month, monday.day + 3);
  const jan1 = Date.UTC(thursday.year, 0, 1);
  const week = Math.floor((Date.UTC(thursday.year, thursday.month - 1, thursday.day) - jan1) / 86_400_000 / 7) + 1;
  return `${pad(thursday.year, 4)}-W${pad(week)}`;
}

/** The first day of the period of `kind` holding local date `d`. */
function firstDay(kind: PeriodKind, d: LocalDate): LocalDate {
  if (kind === 'day') return d;
  if (kind === 'week') return normalise(d.year, d.month, d.day - (isoWeekday(d) - 1));
  return { year: d.year, month: d.month, day: 1 };
}

function nextFirstDay(kind: PeriodKind, d: LocalDate): LocalDate {
  if (kind === 'day') return normalise(d.year, d.month, d.day + 1);
  if (kind === 'week') return normalise(d.year, d.month, d.day + 7);
  return normalise(d.year, d.month + 1, 1);
}

function labelOf(kind: PeriodKind, d: LocalDate): string {
  if (kind === 'day') return `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
  if (kind === 'week') return isoWeekLabel(d);
  return `${pad(d.year, 4)}-${pad(d.month)}`;
}

/**
 * Local midnight of `d` in `zone`. Guessed first with the offset of the period before (the same
 * but around a DST change) and checked with one look at the wall clock; else zonedInstant's search.
 * Intl's formatting is most of the cost of 1,100 days (docs/performance.md).
 */
function startOf(d: LocalDate, zone: string, offsetHint?: number): number {
  const naive = Date.UTC(d.year, d.month - 1, d.day);
  if (offsetHint !== undefined) {
    const guess = naive - offsetHint;
    const w = wallClock(guess, zone);
    // Right: the offset of the period before still holds at midnight. Where a fold repeats
    // midnight, that offset is the one before the fold, i.e. the earlier midnight (zonedInstant's).
    if (w.year === d.year && w.month === d.month && w.day === d.day && w.hour === 0 && w.minute === 0) return guess;
  }
  return zonedInstant(d.year, d.month, d.day, 0, 0, zone);
}

/**
 * The periods of `kind` in `zone` that overlap [from, to] (epoch ms, inclusive), oldest first:
 * the first is the one holding `from`, the last the one holding `to`. At most `limit` periods
 * (undefined when there would be more: the caller refuses the range).
 */
export function periodsOf(kind: PeriodKind, zone: string, from: number, to: number, limit: number): Period[] | undefined {
  const w = wallClock(from, zone);
  let day = firstDay(kind, { year: w.year, month: w.month, day: w.day });
  let start = startOf(day, zone);
  const out: Period[] = [];
  while (start <= to) {
    if (out.length === limit) return undefined;
    const next = nextFirstDay(kind, day);
    const end = startOf(next, zone, Date.UTC(day.year, day.month - 1, day.day) - start);
    out.push({ label: labelOf(kind, day), start, end });
    day = next;
    start = end;
  }
  return out;
}

/** The period of `kind` in `zone` holding instant `t`. */
export function periodAt(kind: PeriodKind, zone: string, t: number): Period {
  return periodsOf(kind, zone, t, t, 1)![0];
}
