// The auth gate (contract 5, decisions.md Auth): decides who a request is before the router sees
// it. It runs on the checked request target (web/request-target.ts), outside tinyhttp, so no
// routing rule can pass a request around it. Accepted: the local session cookie, the loopback
// local-admin principal, and X-Service-Proxy: server from a trusted proxy. Everything is
// protected except PUBLIC_PATHS, matched exactly.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/config.js';
import type { SessionStore } from './sessions.js';
import { SESSION_COOKIE } from './sessions.js';
import { acceptsHtml, cookieValue, type RequestFacts } from './request-facts.js';
import { sendText } from '../api/respond.js';

// Reachable without credentials: the version, and what a person needs to log in or set up.
export const PUBLIC_PATHS = new Set([
  '/api/version',
  '/login',
  '/login.js',
  '/api/v1/auth/login',
  '/api/v1/auth/logout',
  '/api/v1/auth/callback',
  '/api/v1/auth/setup',
]);

export type Principal = { kind: 'disabled' | 'proxy' | 'local-admin' | 'session'; user?: string };

const principals = new WeakMap<IncomingMessage, Principal>();

/** Who the gate found this request to be (undefined on a public path without credentials). */
export const principalOf = (req: IncomingMessage): Principal | undefined => principals.get(req);

export function authenticate(req: IncomingMessage, cfg: Config, sessions: SessionStore, facts: RequestFacts): Principal | undefined {
  const auth = cfg.web.auth;
  if (auth.mode === 'disabled') return { kind: 'disabled' };
  if (facts.fromServiceProxy(req)) return { kind: 'proxy' };
  if (auth.allow_local_admin && facts.fromLoopback(req)) return { kind: 'local-admin' };
  const session = sessions.get(cookieValue(req, SESSION_COOKIE));
  if (session) return { kind: 'session', user: session.user };
  return undefined;
}

/**
 * Returns true when the request may go on to the router; otherwise it has been answered: 302 to
 * the login page for a browser, 401 for anything else (contract 5.6).
 */
export function admit(req: IncomingMessage, res: ServerResponse, cfg: Config, sessions: SessionStore, facts: RequestFacts): boolean {
  const url = req.url ?? '/';
  const principal = authenticate(req, cfg, sessions, facts);
  if (principal) principals.set(req, principal);
  if (principal || PUBLIC_PATHS.has(url.split('?')[0])) return true;
  if (acceptsHtml(req)) {
    res.statusCode = 302;
    res.setHeader('Location', `/login?return_to=${encodeURIComponent(url)}`);
    res.end();
  } else {
    sendText(res, 401, 'unauthorized');
  }
  return false;
}
