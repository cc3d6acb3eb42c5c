// The contract's auto-update endpoints (4.2, docs/updates.md): status, check, force. Progress of a
// forced update comes as `update_progress` events on GET /events.
import type { App } from '@tinyhttp/app';
import type { ServerResponse } from 'node:http';
import type { AgentContext } from '../context.js';
import { readJsonBody, requireString } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { UpdateError } from '../../update/service.js';

export function register(app: App, ctx: AgentContext): void {
  /** Runs an update call; a refusal answers its status and message, and changes nothing. */
  const answer = async (res: ServerResponse, status: number, call: () => Record<string, unknown> | Promise<Record<string, unknown>>) => {
    if (!ctx.updates) return sendText(res, 501, 'updates are not available in this process');
    try {
      sendJson(res, status, await call());
    } catch (err) {
      if (!(err instanceof UpdateError)) throw err;
      sendText(res, err.status, err.message);
    }
  };

  app.get('/api/autoupdate/status', (_req, res) => answer(res, 200, () => ctx.updates!.status()));

  app.post('/api/autoupdate/check', (req, res) => {
    req.resume(); // no body is defined; whatever comes is not read
    return answer(res, 200, () => ctx.updates!.check());
  });

  app.post('/api/autoupdate/force', async (req, res) => {
    const body = await readJsonBody(req, res);
    if (!body) return;
    const reason = requireString(body, 'reason', res);
    if (reason === undefined) return;
    if (reason.length > 200) return sendText(res, 400, 'reason must be at most 200 characters');
    return answer(res, 202, () => ctx.updates!.force(reason));
  });
}
