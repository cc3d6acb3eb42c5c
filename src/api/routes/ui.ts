// GET / and /ui.js: the local web UI (behind the same auth wrapper as the API).
import type { App } from '@tinyhttp/app';
import type { ServerResponse } from 'node:http';
import { PAGE_HTML, PAGE_JS } from '../../ui/page.js';

function send(res: ServerResponse, type: string, body: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', `${type}; charset=utf-8`);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cache-Control', 'no-cache');
  res.end(body);
}

export function register(app: App): void {
  app.get('/', (_req, res) => send(res, 'text/html', PAGE_HTML));
  app.get('/ui.js', (_req, res) => send(res, 'text/javascript', PAGE_JS));
}
