// GET /api/alerts and POST /api/alerts/acknowledge: the alerts the rules opened
// (alerts/), open first. Same guard, validation and error wording as read.ts and devices.ts.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { parseInteger, queryOf } from '../query.js';
import { alertJson } from '../../alerts/service.js';

const LIMIT_DEFAULT = 500;
const LIMIT_MAX = 5000;

export function register(app: App, ctx: AgentContext): void {
  app.get('/api/alerts', (req, res) => {
    const q = queryOf(req);
    const all = q.get('all');
    if (all !== null && all !== 'true' && all !== 'false') return sendText(res, 400, 'all must be true or false');
    const limitText = q.get('limit');
    const limit = limitText === null ? LIMIT_DEFAULT : parseInteger(limitText);
    if (limit === undefined || limit < 1 || limit > LIMIT_MAX) return sendText(res, 400, `limit must be an integer from 1 to ${LIMIT_MAX}`);
    sendJson(res, 200, ctx.alertService.describe(ctx.alerts.list(all === 'true', limit).map(alertJson)));
  });

  app.post('/api/alerts/acknowledge', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    for (const k of Object.keys(body)) if (k !== 'id') return sendText(res, 400, `unknown field ${k}`);
    const id = body.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return sendText(res, 400, 'field id must be a positive integer');
    const alert = ctx.alertService.acknowledge(id);
    if (!alert) return sendText(res, 404, `no alert with id ${id}`);
    sendJson(res, 200, alert);
  });
}
