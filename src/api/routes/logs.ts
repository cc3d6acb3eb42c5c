// GET /logs?level=&tail= (recent structured log records) and GET /logfile (the same as a
// download). The agent logs to journald (in memory on the box); what it hands out itself is the
// warnings and errors kept on the card from before this start, then this run's ring.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendJson, sendText } from '../respond.js';
import { parseInteger, queryOf } from '../query.js';

const LEVELS = ['debug', 'info', 'warn', 'error'];
const RANK: Record<string, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, fatal: 5 };
const DEFAULT_TAIL = 200;
const MAX_TAIL = 2000;

export function register(app: App, ctx: AgentContext): void {
  app.get('/logs', (req, res) => {
    const q = queryOf(req);
    const level = q.get('level') || 'debug';
    if (!LEVELS.includes(level)) return sendText(res, 400, `invalid level parameter (use ${LEVELS.join(', ')})`);
    const tailText = q.get('tail');
    let tail = DEFAULT_TAIL;
    if (tailText !== null && tailText !== '') {
      const n = parseInteger(tailText);
      if (n === undefined || n < 1) return sendText(res, 400, `invalid tail parameter (use an integer from 1 to ${MAX_TAIL})`);
      tail = Math.min(n, MAX_TAIL);
    }
    const min = RANK[level];
    const lines = ctx.logRing.all().filter((r) => (RANK[r.level] ?? 5) >= min);
    sendJson(res, 200, lines.slice(-tail));
  });

  app.get('/logfile', (_req, res) => {
    const body = ctx.logRing.all().map((r) => JSON.stringify(r)).join('\n') + '\n';
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="printbox-agent.log"');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(body);
  });
}
