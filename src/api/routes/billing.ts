// GET /api/billing/reads: the billing meter reads of one period (billing/schedule.ts
// takes them), each with its delta against the printer's previous read, as JSON or as CSV
// (`format=csv`, api/csv.ts).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJson, sendText } from '../respond.js';
import { queryOf } from '../query.js';
import { formatTime } from '../../model/time.js';
import { MeterReadStore, READ_COUNTERS, deltaOf, totalOf, type ListedRead } from '../../store/meter-reads.js';
import { exportConnection, formatOf, sendCsv } from '../csv.js';
import type { Cell } from '../../shared/csv-file.js';
import { errorText } from '../../shared/error-text.js';

const PERIOD = /^\d{4}-(0[1-9]|1[0-2])$/;
const time = (ms: number | null) => (ms === null ? null : formatTime(ms));
/** Signed minutes from the billing time to the reading (negative: before it). */
const offsetMinutes = (r: ListedRead) => (r.read_at === null ? null : Math.round((r.read_at - r.due_at) / 60_000));

function readJson(r: ListedRead) {
  return {
    serial: r.serial, manufacturer: r.manufacturer, model: r.model, location: r.location, asset_number: r.asset_number,
    billing_time: formatTime(r.due_at), read_at: time(r.read_at), source: r.source, offset_minutes: offsetMinutes(r),
    attempts: r.attempts, total: totalOf(r.counters) ?? null, counters: r.counters,
    previous: r.previous ? { period: r.previous.period, read_at: time(r.previous.read_at), total: totalOf(r.previous.counters) ?? null, counters: r.previous.counters } : null,
    delta: deltaOf(r),
  };
}

const CSV_HEADER = [
  'serial', 'manufacturer', 'model', 'location', 'asset_number', 'period', 'billing_time', 'read_at', 'source', 'offset_minutes',
  'total', ...READ_COUNTERS, 'previous_period', 'previous_total', 'delta_total', ...READ_COUNTERS.map((c) => `delta_${c}`),
];

function* csvRows(reads: Iterable<ListedRead>): Generator<Cell[]> {
  for (const r of reads) {
    const d = deltaOf(r);
    yield [
      r.serial, r.manufacturer, r.model, r.location, r.asset_number, r.period, formatTime(r.due_at), time(r.read_at), r.source, offsetMinutes(r),
      totalOf(r.counters), ...READ_COUNTERS.map((c) => r.counters[c]),
      r.previous?.period, r.previous ? totalOf(r.previous.counters) : undefined, d.total, ...READ_COUNTERS.map((c) => d[c]),
    ];
  }
}

export function register(app: App, ctx: AgentContext): void {
  app.all('/api/billing/reads', async (req, res) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return sendText(res, 405, 'GET only');
    }
    const format = formatOf(req);
    if (format !== 'json' && format !== 'csv') return sendText(res, 400, format);
    const asked = queryOf(req).get('period');
    if (asked !== null && asked !== '' && !PERIOD.test(asked)) return sendText(res, 400, 'invalid period parameter: a month as YYYY-MM');
    let periods;
    try {
      periods = new MeterReadStore(ctx.db).periods();
    } catch (err) {
      return sendText(res, 500, `failed to read billing reads: ${errorText(err)}`);
    }
    const period = asked || periods[0]?.period || null;
    if (format === 'csv') {
      const db = exportConnection(ctx, res);
      if (!db) return;
      try {
        const reads = period ? new MeterReadStore(db).iterate(period) : [];
        await sendCsv(ctx, res, `billing-reads-${period ?? 'none'}.csv`, CSV_HEADER, csvRows(reads));
      } finally {
        db.close();
      }
      return;
    }
    let reads;
    try {
      reads = period ? [...new MeterReadStore(ctx.db).iterate(period)].map(readJson) : [];
    } catch (err) {
      return sendText(res, 500, `failed to read billing reads: ${errorText(err)}`);
    }
    const s = ctx.settings.get().billing;
    sendJson(res, 200, {
      billing: { enabled: s.enabled, day: s.day, time: s.time, time_zone: s.time_zone },
      periods: periods.map((p) => ({ ...p, due_at: formatTime(p.due_at) })),
      period,
      reads,
    });
  });
}
