// GET /api/devices/forecast: when each supply of a device runs out, fitted on the last
// 90 days of its history (forecast/). Same guard, validation and error wording as read.ts.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJson, sendText } from '../respond.js';
import { queryOf } from '../query.js';
import { readForecast } from '../../forecast/read.js';
import { errorText } from '../../shared/error-text.js';

export function register(app: App, ctx: AgentContext): void {
  const { devices, metrics } = ctx;

  app.all('/api/devices/forecast', (req, res) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return sendText(res, 405, 'GET only');
    }
    const serial = queryOf(req).get('serial');
    if (!serial) return sendText(res, 400, 'serial parameter required');
    let device;
    try {
      device = devices.get(serial);
    } catch (err) {
      return sendText(res, 500, `failed to get device: ${errorText(err)}`);
    }
    if (!device) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
    let forecast;
    try {
      forecast = readForecast(metrics, serial, ctx.now());
    } catch (err) {
      return sendText(res, 500, `failed to get metrics history: ${errorText(err)}`);
    }
    sendJson(res, 200, forecast);
  });
}
