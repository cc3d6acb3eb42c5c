// POST /discover (starts a scan, answers 202 at once; progress comes as discovery_update events)
// and POST /devices/metrics/collect (reads one device now, answers the stored snapshot).
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody, requireString } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { snapshotJson } from '../views.js';
import { CounterFlaggedError } from '../../discovery/service.js';

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

  app.post('/devices/metrics/collect', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const serial = requireString(body, 'serial', res);
    if (serial === undefined) return;
    const device = ctx.devices.get(serial);
    if (!device) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
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
