// GET /events: Server-Sent Events (contract 6, docs/decisions/0013-event-stream.md). A comment line
// keeps the stream alive; a client that stops reading is dropped instead of growing memory without
// bound. Streams are capped per client address, and when all slots are taken the oldest stream of
// the client holding the most is closed for the newcomer: no client can keep the others out. A
// stream opened with a session cookie ends when that session does (auth/session-streams.ts), with a
// last
// `session_ended` event: a signed-out browser stops hearing the box at once.
import type { App } from '@tinyhttp/app';
import type { ServerResponse } from 'node:http';
import type { AgentContext } from '../context.js';
import { sendText } from '../respond.js';
import { versionInfo } from '../../shared/version.js';
import { cameAsHead } from '../head.js';
import { principalOf } from '../../auth/gate.js';
import { SESSION_COOKIE } from '../../auth/sessions.js';
import { cookieValue } from '../../auth/request-facts.js';
import { SessionStreams, type Binding } from '../../auth/session-streams.js';

const KEEPALIVE_MS = 15_000;
const MAX_BUFFERED_BYTES = 256 * 1024;
const MAX_STREAMS = 32;
const MAX_STREAMS_PER_CLIENT = 4;

export function register(app: App, ctx: AgentContext): void {
  // Open streams by client address, oldest first; each with the function that ends it.
  const streams = new Map<string, ServerResponse[]>();
  const enders = new Map<ServerResponse, () => void>();
  // Made at the first stream: listing the routes (routeTable) registers them without a session store.
  let bound: SessionStreams | undefined;

  const evictOne = () => {
    let heaviest: ServerResponse[] | undefined;
    for (const list of streams.values()) if (!heaviest || list.length > heaviest.length) heaviest = list;
    const victim = heaviest?.[0];
    if (!victim) return;
    ctx.log.info('event streams full: closing the oldest stream of the client holding the most');
    enders.get(victim)?.();
    victim.destroy();
  };

  app.get('/events', (req, res) => {
    const client = ctx.facts.clientAddress(req);
    const mine = streams.get(client) ?? [];
    if (mine.length >= MAX_STREAMS_PER_CLIENT) {
      return sendText(res, 503, `too many event streams open from ${client} (at most ${MAX_STREAMS_PER_CLIENT})`);
    }
    const head = {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Content-Type-Options': 'nosniff',
    };
    // HEAD: the head a stream would have, and done (no slot taken, nothing held open).
    if (cameAsHead(req)) return void res.writeHead(200, head).end();
    // Bound to the session the gate found (a local admin's or the server's stream has none).
    const token = principalOf(req)?.kind === 'session' ? cookieValue(req, SESSION_COOKIE) : undefined;
    const session = token ? ctx.sessions.get(token) : undefined;
    if (token && !session) return sendText(res, 401, 'unauthorized'); // ended since the gate let it in
    if (enders.size >= MAX_STREAMS) evictOne();
    streams.set(client, [...(streams.get(client) ?? []), res]);
    res.writeHead(200, head);
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
    let binding: Binding | undefined;
    const keepalive = setInterval(() => {
      send(': keepalive\n\n');
      binding?.recheck();
    }, KEEPALIVE_MS);
    const close = () => {
      if (!enders.delete(res)) return; // already ended (evicted, then closed)
      clearInterval(keepalive);
      unsubscribe();
      binding?.unbind();
      const left = (streams.get(client) ?? []).filter((r) => r !== res);
      if (left.length) streams.set(client, left);
      else streams.delete(client);
    };
    req.socket.setTimeout(0); // a long-lived stream, not an idle connection
    enders.set(res, close);
    res.once('close', close);
    if (token && session) {
      binding = (bound ??= new SessionStreams(ctx.sessions, ctx.now)).bind(token, session, (why) => {
        event('session_ended', { reason: why });
        close();
        res.end();
      });
    }
  });
}
