// GET /api/devices/meter-history: one printer's meter history from one tier over a
// range, as JSON or as CSV (`format=csv`, api/csv.ts). Unlike the contract's history operation the
// tier is the caller's choice (a year of daily rows, the raw readings of a week), read from that
// tier's table alone, oldest first, never downsampled; the CSV streams the rows from SQLite.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJson, sendText } from '../respond.js';
import { queryOf } from '../query.js';
import { snapshotJson } from '../views.js';
import { formatTime, parseTime } from '../../model/time.js';
import { TIERS, type Snapshot, type Tier } from '../../model/device.js';
import { METRICS_COUNTERS, METRICS_EXTRA_COUNTERS } from '../../model/serialize.js';
import { MetricsStore } from '../../store/metrics.js';
import { exportConnection, formatOf, sendCsv } from '../csv.js';
import type { Cell } from '../../shared/csv-file.js';
import { errorText } from '../../shared/error-text.js';

const DAY = 86_400_000;
/** A range's default length, ending now. */
const DEFAULT_DAYS = 365;

function* csvRows(rows: Iterable<Snapshot>, supplies: string[]): Generator<Cell[]> {
  for (const s of rows) {
    yield [
      s.serial, s.tier, formatTime(s.ts), ...METRICS_COUNTERS.map((c) => s[c]), ...METRICS_EXTRA_COUNTERS.map((c) => s.extra?.[c]),
      ...supplies.map((k) => (typeof s.toner_levels?.[k] === 'number' ? (s.toner_levels[k] as number) : null)),
    ];
  }
}

export function register(app: App, ctx: AgentContext): void {
  app.all('/api/devices/meter-history', async (req, res) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return sendText(res, 405, 'GET only');
    }
    const q = queryOf(req);
    const serial = q.get('serial');
    if (!serial) return sendText(res, 400, 'serial parameter required');
    const format = formatOf(req);
    if (format !== 'json' && format !== 'csv') return sendText(res, 400, format);
    const tier = q.get('tier') || 'daily';
    if (!(TIERS as readonly string[]).includes(tier)) return sendText(res, 400, `invalid tier parameter: one of ${TIERS.join(', ')}`);
    const now = ctx.now();
    const bound = (name: 'since' | 'until', dflt: number): number | undefined => {
      const text = q.get(name);
      if (text === null || text === '') return dflt;
      const t = parseTime(text);
      if (t === null) sendText(res, 400, `invalid ${name} parameter (use RFC3339 format)`);
      return t ?? undefined;
    };
    const until = bound('until', now);
    if (until === undefined) return;
    const since = bound('since', until - DEFAULT_DAYS * DAY);
    if (since === undefined) return;
    if (since > until) return sendText(res, 400, 'invalid range: since is after until');
    try {
      if (!ctx.devices.get(serial)) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    } catch (err) {
      return sendText(res, 500, `failed to get device: ${errorText(err)}`);
    }
    if (format === 'json') {
      try {
        return sendJson(res, 200, [...ctx.metrics.iterateDeviceTier(tier as Tier, serial, since, until)].map(snapshotJson));
      } catch (err) {
        return sendText(res, 500, `failed to get metrics history: ${errorText(err)}`);
      }
    }
    const db = exportConnection(ctx, res);
    if (!db) return;
    try {
      const metrics = new MetricsStore(db);
      // The supply columns: the names in the printer's newest reading (a supply it no longer has stays out).
      const supplies = Object.keys(metrics.latestRaw(serial)?.toner_levels ?? {}).sort();
      const header = ['serial', 'tier', 'timestamp', ...METRICS_COUNTERS, ...METRICS_EXTRA_COUNTERS, ...supplies.map((k) => `supply_${k}_percent`)];
      const name = `meter-history-${serial.replace(/[^A-Za-z0-9._-]/g, '_')}-${tier}.csv`;
      await sendCsv(ctx, res, name, header, csvRows(metrics.iterateDeviceTier(tier as Tier, serial, since, until), supplies));
    } catch (err) {
      if (!res.headersSent) sendText(res, 500, `failed to get metrics history: ${errorText(err)}`);
    } finally {
      db.close();
    }
  });
}
