// GET /api/devices/page-counts: one printer's pages per day, ISO week or month in a time
// zone, computed from the stored meter history (store/page-counts.ts), with the range's totals;
// JSON, or CSV with `format=csv` (api/csv.ts).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJson, sendText } from '../respond.js';
import { queryOf } from '../query.js';
import { formatTime, parseTime } from '../../model/time.js';
import { isTimeZone, zonedInstant } from '../../model/billing-time.js';
import { PERIOD_KINDS, periodAt, periodsOf, type PeriodKind } from '../../model/periods.js';
import { pageCounts, totalsOf, type PeriodPages } from '../../store/page-counts.js';
import { formatOf, sendCsv } from '../csv.js';
import type { Cell } from '../../shared/csv-file.js';
import { errorText } from '../../shared/error-text.js';

/** The default range: this many periods, ending with the current one. */
const DEFAULT_PERIODS: Record<PeriodKind, number> = { day: 31, week: 13, month: 12 };
/** The most periods one answer holds (about three years of days). */
export const MAX_PERIODS = 1100;
/** Readings further apart than this (or three polling intervals, if longer) are a gap. */
const MIN_BRIDGE_MS = 6 * 3_600_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** An IANA name (Area/Location, UTC, Etc/GMT+5): not an offset such as +01:00, which Intl also takes. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

const CSV_HEADER = ['serial', 'period', 'label', 'start', 'end', 'pages', 'mono_pages', 'color_pages', 'coverage', 'reset', 'tier'];

function periodJson(p: PeriodPages) {
  return { ...p, start: formatTime(p.start), end: formatTime(p.end) };
}

export function register(app: App, ctx: AgentContext): void {
  app.all('/api/devices/page-counts', async (req, res) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return sendText(res, 405, 'GET only');
    }
    const q = queryOf(req);
    const serial = q.get('serial');
    if (!serial) return sendText(res, 400, 'serial parameter required');
    const format = formatOf(req);
    if (format !== 'json' && format !== 'csv') return sendText(res, 400, format);
    const period = (q.get('period') || 'day') as PeriodKind;
    if (!PERIOD_KINDS.includes(period)) return sendText(res, 400, `invalid period parameter: one of ${PERIOD_KINDS.join(', ')}`);
    // Without `tz`, the box's own zone (display.time_zone), the one its alerts and e-mails say times in.
    const tz = q.get('tz') || ctx.settings.get().display.time_zone;
    if (!ZONE_NAME.test(tz) || !isTimeZone(tz)) return sendText(res, 400, 'invalid tz parameter: an IANA time zone name such as UTC or Europe/Berlin');
    const now = ctx.now();
    // A bound: RFC 3339, or a date (YYYY-MM-DD) meaning that day's start in the zone.
    const bound = (name: 'from' | 'to'): number | null | undefined => {
      const text = q.get(name);
      if (text === null || text === '') return null;
      const d = DATE.exec(text);
      const t = d ? (parseTime(`${text}T00:00:00Z`) === null ? null : zonedInstant(Number(d[1]), Number(d[2]), Number(d[3]), 0, 0, tz)) : parseTime(text);
      if (t === null) sendText(res, 400, `invalid ${name} parameter: RFC 3339 or a date (YYYY-MM-DD)`);
      return t ?? undefined;
    };
    const toAsked = bound('to');
    if (toAsked === undefined) return;
    const fromAsked = bound('from');
    if (fromAsked === undefined) return;
    // Periods after now have no pages yet: the range ends with the current period at the latest.
    const to = Math.min(toAsked ?? now, now);
    let from = fromAsked;
    if (from === null) {
      // The default: DEFAULT_PERIODS periods ending with the one holding `to`.
      let start = periodAt(period, tz, to).start;
      for (let k = 1; k < DEFAULT_PERIODS[period]; k++) start = periodAt(period, tz, start - 1).start;
      from = start;
    }
    if (from > to) return sendText(res, 400, 'invalid range: from is after to (or after now)');
    const periods = periodsOf(period, tz, from, to, MAX_PERIODS);
    if (!periods) return sendText(res, 400, `invalid range: more than ${MAX_PERIODS} periods; choose a shorter range or a longer period`);
    try {
      if (!ctx.devices.get(serial)) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    } catch (err) {
      return sendText(res, 500, `failed to get device: ${errorText(err)}`);
    }
    let counts: PeriodPages[];
    try {
      const interval = ctx.settings.get().collection.interval_minutes * 60_000;
      counts = pageCounts(ctx.db, ctx.metrics, serial, period, periods, { now, bridgeMs: Math.max(MIN_BRIDGE_MS, 3 * interval) });
    } catch (err) {
      return sendText(res, 500, `failed to count pages: ${errorText(err)}`);
    }
    if (format === 'json') {
      return sendJson(res, 200, {
        serial, period, tz, from: formatTime(periods[0].start), to: formatTime(periods[periods.length - 1].end),
        totals: totalsOf(counts), periods: counts.map(periodJson),
      });
    }
    const rows = counts.map((p): Cell[] => [
      serial, period, p.label, formatTime(p.start), formatTime(p.end), p.pages, p.mono_pages, p.color_pages, p.coverage, p.reset, p.tier,
    ]);
    const name = `page-counts-${serial.replace(/[^A-Za-z0-9._-]/g, '_')}-${period}.csv`;
    await sendCsv(ctx, res, name, CSV_HEADER, rows);
  });
}
