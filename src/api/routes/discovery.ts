// POST /discover (starts a scan, answers 202 at once; progress comes as discovery_update events)
// and POST /devices/metrics/collect (reads one device now, answers the stored snapshot; with
// `async=true`, as the central server asks, answers a job at once and reports it as job_progress).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { randomUUID } from 'node:crypto';
import { readJsonBody, requireString } from '../body.js';
import { queryOf } from '../query.js';
import { sendJson, sendText } from '../respond.js';
import { snapshotJson } from '../views.js';
import { CounterFlaggedError } from '../../discovery/service.js';
import { errorText } from '../../shared/error-text.js';

export function register(app: App, ctx: AgentContext): void {
  app.post('/discover', (_req, res) => {
    const { state, alreadyRunning } = ctx.discovery.start();
    // A scan already under way is reported with its id, not started twice.
    sendJson(res, 202, { ...state, already_running: alreadyRunning });
  });

  app.get('/discover', (_req, res) => {
    const state = ctx.discovery.status();
    sendJson(res, 200, state ?? null);
  });

  app.get('/discover/status', (_req, res) => {
    sendJson(res, 200, ctx.discovery.overview());
  });

  app.post('/devices/metrics/collect', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    const device = ctx.devices.get(serial);
    if (!device) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    if (isAsync(queryOf(req).get('async'), body.async)) return void collectInBackground(ctx, serial, res);
    let snapshot;
    try {
      snapshot = await ctx.discovery.collect(serial);
    } catch (err) {
      if (err instanceof CounterFlaggedError) return sendText(res, 409, err.message);
      throw err;
    }
    if (!snapshot && device.is_usb) return sendText(res, 504, `USB printer ${serial} is not plugged in (last seen at ${device.port_name ?? 'an unknown port'}) or did not answer`);
    if (!snapshot) return sendText(res, 504, `device ${serial} did not answer at ${device.ip}`);
    sendJson(res, 200, snapshotJson(snapshot));
  });
}

/** `async=true` in the query (what the central server sends) or `"async": true` in the body. */
function isAsync(query: unknown, body: unknown): boolean {
  return query === 'true' || body === true;
}

/** Answers 202 with a job id at once; the read's outcome follows as job_progress events. */
function collectInBackground(ctx: AgentContext, serial: string, res: Parameters<typeof sendJson>[0]): void {
  const job_id = randomUUID();
  const progress = (status: 'running' | 'completed' | 'failed', message: string, extra: { error?: string; result?: Record<string, unknown> } = {}) =>
    ctx.events.emit('job_progress', { job_id, job_type: 'metrics_collect', status, progress: status === 'running' ? 10 : 100, message, ...extra });
  sendJson(res, 202, { job_id, status: 'pending', message: 'Metrics collection started' });
  progress('running', `reading ${serial}`);
  ctx.discovery.collect(serial).then(
    (snapshot) =>
      snapshot
        ? progress('completed', `read ${serial}`, { result: { serial, total_pages: snapshot.page_count } })
        : progress('failed', `${serial} did not answer`, { error: 'no answer' }),
    (err: unknown) => progress('failed', `reading ${serial} failed`, { error: errorText(err) }),
  );
}
