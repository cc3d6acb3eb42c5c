// GET /api/notifications/outbox and POST /api/notifications/test: what the outbox holds
// (pending, delivered and failed messages, with each failure's reason) and a test message sent now.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readJsonBody } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { parseInteger, queryOf } from '../query.js';
import { formatTime } from '../../model/time.js';
import { NotifyError } from '../../notify/dispatcher.js';
import type { OutboxRow } from '../../notify/outbox.js';

const LIMIT_DEFAULT = 50;
const LIMIT_MAX = 500;

const time = (ms: number | null) => (ms === null ? null : formatTime(ms));

function messageJson(r: OutboxRow) {
  return {
    id: r.id,
    channel: r.channel,
    target: r.target,
    state: r.state,
    alert_ids: r.alerts.map((a) => a.id),
    ...(r.message ? { subject: r.message.subject } : {}),
    attempts: r.attempts,
    created_at: time(r.created_at),
    next_attempt_at: r.state === 'pending' ? time(r.next_attempt_at) : null,
    sent_at: time(r.sent_at),
    last_error: r.last_error,
  };
}

export function register(app: App, ctx: AgentContext): void {
  app.get('/api/notifications/outbox', (req, res) => {
    const limitText = queryOf(req).get('limit');
    const limit = limitText === null ? LIMIT_DEFAULT : parseInteger(limitText);
    if (limit === undefined || limit < 1 || limit > LIMIT_MAX) return sendText(res, 400, `limit must be an integer from 1 to ${LIMIT_MAX}`);
    sendJson(res, 200, { counts: ctx.outbox.counts(), messages: ctx.outbox.list(limit).map(messageJson) });
  });

  app.post('/api/notifications/test', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    for (const k of Object.keys(body)) if (k !== 'target') return sendText(res, 400, `unknown field ${k}`);
    if (body.target !== undefined && (typeof body.target !== 'string' || body.target === '')) return sendText(res, 400, 'field target must be a non-empty string');
    try {
      const results = await ctx.notifications.sendTest(body.target as string | undefined);
      sendJson(res, 200, { results });
    } catch (err) {
      if (err instanceof NotifyError) return sendText(res, 400, err.message);
      throw err;
    }
  });
}
