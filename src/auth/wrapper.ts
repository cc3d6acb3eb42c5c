// The auth wrapper (contract 5): runs before every protected route. Accepts only the local
// session cookie, the loopback local-admin principal and the internal proxy header.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/config.js';
import type { SessionStore } from './sessions.js';
import { SESSION_COOKIE } from './sessions.js';
import { acceptsHtml, cookieValue, fromLoopback } from './request-facts.js';
import { sendText } from '../api/respond.js';

// Reachable without credentials: the version, and what a person needs to log in.
const PUBLIC_PATHS = new Set(['/api/version', '/login', '/api/v1/auth/login', '/api/v1/auth/callback']);

export type Principal = { kind: 'disabled' | 'proxy' | 'local-admin' | 'session'; user?: string };

export function authenticate(req: IncomingMessage, cfg: Config, sessions: SessionStore): Principal | undefined {
  const auth = cfg.web.auth;
  if (auth.mode === 'disabled') return { kind: 'disabled' };
  if (req.headers['x-service-proxy'] === 'server') return { kind: 'proxy' };
  if (auth.allow_local_admin && fromLoopback(req)) return { kind: 'local-admin' };
  const session = sessions.get(cookieValue(req, SESSION_COOKIE));
  if (session) return { kind: 'session', user: session.user };
  return undefined;
}

export function authWrapper(cfg: Config, sessions: SessionStore) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const url = req.url ?? '/';
    const path = url.split('?')[0];
    if (PUBLIC_PATHS.has(path) || authenticate(req, cfg, sessions)) return next();
    if (acceptsHtml(req)) {
      res.statusCode = 302;
      res.setHeader('Location', `/login?return_to=${encodeURIComponent(url)}`);
      res.end();
      return;
    }
    sendText(res, 401, 'unauthorized');
  };
}
