// The seven read-only operations of contract 4.1. The auth wrapper has already run; each handler
// applies the method guard, then parameter validation, then the lookup (contract section 7).
import type { App, Request, Response } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJson, sendJsonChunks, sendText } from '../respond.js';
import { savedListBody } from '../saved-list.js';
import { parseInteger, queryOf } from '../query.js';
import { lttb } from '../lttb.js';
import { deviceJson, printerInfoOf, snapshotJson } from '../views.js';
import { BOUNDS_FIELDS, serialize } from '../../model/serialize.js';
import { parseTime } from '../../model/time.js';
import { versionInfo } from '../../shared/version.js';
import { ownValue } from '../../model/inherited-keys.js';
import { errorText } from '../../shared/error-text.js';

const DAY = 86_400_000;
const PERIODS: Record<string, number> = { day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };
const MAX_POINTS_DEFAULT = 200;
const MAX_POINTS_LIMIT = 10_000;

/** Answers 405 unless the method is GET; returns whether the handler may go on. */
function getOnly(req: Request, res: Response): boolean {
  if (req.method === 'GET') return true;
  res.setHeader('Allow', 'GET');
  sendText(res, 405, 'GET only');
  return false;
}

/** The serial query parameter, matched exactly (no trimming), or a 400. */
function serialParam(q: URLSearchParams, res: Response): string | undefined {
  const serial = q.get('serial');
  if (!serial) {
    sendText(res, 400, 'serial parameter required');
    return undefined;
  }
  return serial;
}

export function register(app: App, ctx: AgentContext): void {
  const { devices, metrics, log } = ctx;

  // No method guard: the contract specifies none for the two listings.
  app.all('/devices/list', (_req, res) => {
    try {
      sendJsonChunks(res, 200, savedListBody(devices));
    } catch (err) {
      sendText(res, 500, `failed to list devices: ${errorText(err)}`);
    }
  });

  app.all('/devices/discovered', (req, res) => {
    const q = queryOf(req);
    const minutes = parseInteger(q.get('minutes'));
    const includeKnown = q.get('include_known') === 'true';
    const includeHidden = q.get('include_hidden') === 'true';
    let list;
    try {
      list = devices.listDiscovered({
        includeKnown,
        includeHidden,
        seenSince: minutes !== undefined && minutes > 0 ? ctx.now() - minutes * 60_000 : undefined,
      });
    } catch (err) {
      // A listing failure is logged and answered as an empty list, never an error status.
      log.error({ err: errorText(err) }, 'listing discovered devices failed');
      return sendJson(res, 200, []);
    }
    sendJson(
      res,
      200,
      list.map((d) => {
        let latest;
        try {
          latest = metrics.latestRaw(d.serial);
        } catch {
          latest = undefined; // metric lookup errors are ignored (contract 4.1)
        }
        const info = printerInfoOf(d, latest);
        // What the Discovered page shows beside the contract's fields: the name a person gave
        // (the record's description), whether it is hidden, saved (a pending move).
        return {
          ...info,
          ...(d.description ? { name: d.description } : {}),
          ...(d.visible ? {} : { hidden: true }),
          ...(d.is_saved ? { is_saved: true } : {}),
        };
      }),
    );
  });

  app.all('/api/devices/profile', (req, res) => {
    if (!getOnly(req, res)) return;
    const serial = serialParam(queryOf(req), res);
    if (serial === undefined) return;
    let device;
    try {
      device = devices.get(serial);
    } catch (err) {
      return sendText(res, 500, `failed to get device: ${errorText(err)}`);
    }
    if (!device) return sendText(res, 404, 'not found');
    let latest;
    try {
      latest = metrics.latestRaw(serial);
    } catch (err) {
      return sendText(res, 500, `failed to get latest metrics: ${errorText(err)}`);
    }
    sendJson(res, 200, { device: deviceJson(device), latest_metrics: latest ? snapshotJson(latest) : null });
  });

  app.all('/api/devices/metrics/latest', (req, res) => {
    if (!getOnly(req, res)) return;
    const serial = serialParam(queryOf(req), res);
    if (serial === undefined) return;
    let latest;
    try {
      latest = metrics.latestRaw(serial);
    } catch (err) {
      return sendText(res, 500, `failed to get metrics: ${errorText(err)}`);
    }
    if (!latest) return sendText(res, 404, 'no metrics found');
    sendJson(res, 200, snapshotJson(latest));
  });

  app.all('/api/devices/metrics/history', (req, res) => {
    if (!getOnly(req, res)) return;
    const q = queryOf(req);
    const serial = serialParam(q, res);
    if (serial === undefined) return;
    const now = ctx.now();
    let since = now - PERIODS.week;
    let until = now;
    const sinceText = q.get('since') ?? '';
    const untilText = q.get('until') ?? '';
    if (sinceText !== '' && untilText !== '') {
      const s = parseTime(sinceText);
      if (s === null) return sendText(res, 400, 'invalid since parameter (use RFC3339 format)');
      const u = parseTime(untilText);
      if (u === null) return sendText(res, 400, 'invalid until parameter (use RFC3339 format)');
      since = s;
      until = u;
    } else {
      since = now - (ownValue(PERIODS, q.get('period') ?? '') ?? PERIODS.week);
    }
    let maxPoints = parseInteger(q.get('maxPoints'));
    if (maxPoints === undefined || maxPoints <= 0) maxPoints = MAX_POINTS_DEFAULT;
    maxPoints = Math.min(maxPoints, MAX_POINTS_LIMIT);
    let rows;
    try {
      rows = q.get('raw') === 'true'
        ? metrics.history(serial, since, until, now)
        : metrics.historySampled(serial, since, until, now, (points) => lttb(points, maxPoints));
    } catch (err) {
      return sendText(res, 500, `failed to get metrics history: ${errorText(err)}`);
    }
    if (rows.length === 0) return sendJson(res, 200, null);
    sendJson(res, 200, rows.map(snapshotJson));
  });

  app.all('/api/devices/metrics/bounds', (req, res) => {
    if (!getOnly(req, res)) return;
    const serial = serialParam(queryOf(req), res);
    if (serial === undefined) return;
    if (!ctx.db.open) return sendText(res, 503, 'storage unavailable');
    let b;
    try {
      b = metrics.bounds(serial);
    } catch (err) {
      return sendText(res, 500, `failed to get metrics bounds: ${errorText(err)}`);
    }
    if (!b) return sendText(res, 404, 'no metrics found');
    sendJson(res, 200, serialize(BOUNDS_FIELDS, { serial, min_timestamp: b.min, max_timestamp: b.max, points: b.points }));
  });

  app.all('/api/version', (req, res) => {
    if (!getOnly(req, res)) return;
    sendJson(res, 200, versionInfo());
  });
}
