// When a billing meter read is due: the billing day of the month and time of day, read
// in the billing time zone (Settings `billing.time_zone`, an IANA name). Pure: settings and an
// instant in, instants out.
//
// Why a zone of its own: the box's clock runs in UTC (the image sets TZ=UTC and no local zone; the
// agent never reads the process zone), but a dealer's billing cycle is the site's civil time, DST
// included. A month end in Berlin is 22:00 or 23:00 UTC depending on the season; reading the
// setting's zone, never the system's, keeps the cycle where the dealer put it whatever the box's
// own zone is set to.
//
// Month ends: a billing day past the month's last day is that last day (31 in a 30-day month is the
// 30th; 29, 30 or 31 in February is the 28th, or the 29th in a leap year). A billing time that does
// not exist on its day (inside a DST gap) is the same wall time after the gap, i.e. one hour later;
// one that exists twice (the autumn fold) is the first of the two.
const DAY = 86_400_000;
export interface BillingTimeSettings {
  /** 1..31; past the month's last day means that last day. */
  day: number;
  /** "HH:MM", 24-hour. */
  time: string;
  /** IANA time zone name ("UTC", "Europe/Berlin"). */
  time_zone: string;
}

/** One billing period: its label (the billing date's local year and month) and when its read is due. */
export interface BillingPeriod {
  /** "YYYY-MM" of the billing date in the billing zone. */
  period: string;
  /** Epoch ms of the billing day and time in the billing zone. */
  due: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Whether `zone` is a time zone name this runtime knows (throws nothing). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock in `zone` at instant `t`. */
export function wallClock(t: number, zone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(t)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** `zone`'s offset from UTC at instant `t`, in ms (whole seconds). */
function offsetAt(t: number, zone: string): number {
  const w = wallClock(t, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(t / 1000) * 1000;
}

/**
 * The instant of a wall-clock time in `zone`. The zone's offsets a day before and a day after are
 * tried (an offset changes at most once in between): in a fold both fit and the earlier wins; in a
 * DST gap neither fits, and the offset from before the gap gives the same wall time after it.
 */
export function zonedInstant(year: number, month: number, day: number, hour: number, minute: number, zone: string): number {
  const naive = Date.UTC(year, month - 1, day, hour, minute);
  const before = naive - offsetAt(naive - DAY, zone);
  const after = naive - offsetAt(naive + DAY, zone);
  const fits = (t: number) => {
    const w = wallClock(t, zone);
    return w.year === year && w.month === month && w.day === day && w.hour === hour && w.minute === minute;
  };
  const candidates = [before, after].filter(fits);
  return candidates.length ? Math.min(...candidates) : before;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** "HH:MM" as [hour, minute], or undefined when it is not a 24-hour time of day. */
export function parseTimeOfDay(text: string): [number, number] | undefined {
  const m = TIME.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

const label = (year: number, month: number) => `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`;

/** The billing period of a local year and month. */
export function periodOf(year: number, month: number, s: BillingTimeSettings): BillingPeriod {
  const [hour, minute] = parseTimeOfDay(s.time) ?? [0, 0];
  const day = Math.min(s.day, daysInMonth(year, month));
  return { period: label(year, month), due: zonedInstant(year, month, day, hour, minute, s.time_zone) };
}

/** The month before / after (year, month). */
const shift = (year: number, month: number, by: number): [number, number] => {
  const m = year * 12 + (month - 1) + by;
  return [Math.floor(m / 12), (m % 12) + 1];
};

/** The newest period whose read is due at or before `t`. */
export function currentPeriod(t: number, s: BillingTimeSettings): BillingPeriod {
  const w = wallClock(t, s.time_zone);
  const here = periodOf(w.year, w.month, s);
  return here.due <= t ? here : periodOf(...shift(w.year, w.month, -1), s);
}

/** The first period whose read is due after `t`. */
export function nextPeriod(t: number, s: BillingTimeSettings): BillingPeriod {
  const w = wallClock(t, s.time_zone);
  const here = periodOf(w.year, w.month, s);
  return here.due > t ? here : periodOf(...shift(w.year, w.month, 1), s);
}

/** The period before `period` ("YYYY-MM"). */
export function previousPeriodLabel(period: string): string {
  const [y, m] = period.split('-').map(Number);
  return label(...shift(y, m, -1));
}
