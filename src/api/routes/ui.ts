// GET / and /ui/<module>.js: the local web UI (behind the same auth wrapper as the API). All are
// made once at start-up (src/ui/page.ts); a client that has them already gets 304 for its
// If-None-Match, and one that accepts gzip gets them compressed. The modules are asked for by
// <script type="module"> and its imports, in CORS mode: always same-origin (the page's own origin,
// or the central server's that relays the box), so they need no CORS header, only a JavaScript
// MIME type, which module scripts are strict about. A name that is not a module is a 404.
// /favicon.ico (ui/favicon.ts, public: the sign-in page shows it) is an SVG; the pages name it
// relatively, so under a prefix that serves the box it is asked under the prefix.
import type { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MODULES, PAGE, PAGE_VIA_SERVER, type Served } from '../../ui/page.js';
import { principalOf } from '../../auth/gate.js';
import { sendText } from '../respond.js';
import { FAVICON } from '../../ui/favicon.js';

function send(req: IncomingMessage, res: ServerResponse, type: string, s: Served): void {
  res.setHeader('Content-Type', `${type}; charset=utf-8`);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', s.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  const inm = req.headers['if-none-match'];
  if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === s.etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = 200;
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.end(gzip ? s.gzip : s.body);
}

export function register(app: App): void {
  // Through the central server's proxy (its channel, or X-Service-Proxy) the page has no Sign out.
  app.get('/', (req, res) => send(req, res, 'text/html', principalOf(req)?.kind === 'proxy' ? PAGE_VIA_SERVER : PAGE));
  app.get('/ui/:module', (req, res) => {
    const m = MODULES.get(req.params.module ?? '');
    if (!m) return sendText(res, 404, 'no such UI module');
    send(req, res, 'text/javascript', m);
  });
  app.get('/favicon.ico', (req, res) => send(req, res, 'image/svg+xml', FAVICON));
}
