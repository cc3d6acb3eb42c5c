// GET /events: Server-Sent Events (contract 6, decisions.md). A comment line keeps the stream
// alive; a client that stops reading is dropped instead of growing memory without bound.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendText } from '../respond.js';
import { versionInfo } from '../../version.js';

const KEEPALIVE_MS = 15_000;
const MAX_BUFFERED_BYTES = 256 * 1024;
const MAX_CLIENTS = 32;

export function register(app: App, ctx: AgentContext): void {
  let clients = 0;
  app.get('/events', (req, res) => {
    if (clients >= MAX_CLIENTS) return sendText(res, 503, 'too many event streams open');
    clients++;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Content-Type-Options': 'nosniff',
    });
    const send = (chunk: string) => {
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        ctx.log.warn('dropping a slow event-stream client');
        res.destroy();
        return;
      }
      res.write(chunk);
    };
    const event = (name: string, data: unknown) => send(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    event('connected', { agent_version: versionInfo().version });
    const unsubscribe = ctx.events.subscribe(event);
    const keepalive = setInterval(() => send(': keepalive\n\n'), KEEPALIVE_MS);
    const close = () => {
      clearInterval(keepalive);
      unsubscribe();
      clients--;
    };
    req.socket.setTimeout(0); // a long-lived stream, not an idle connection
    res.once('close', close);
  });
}
