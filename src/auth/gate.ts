// The auth gate (contract 5, docs/decisions/0014-trusted-proxies.md,
// 0015-auth-modes-and-sessions.md): decides who a request is before the router sees it. It runs on
// the checked request target (web/request-target.ts), outside tinyhttp, so no routing rule can pass
// a request around it. Accepted: the local session cookie, the loopback local-admin principal, and
// X-Service-Proxy: server from a trusted proxy. Everything is protected except PUBLIC_PATHS,
// matched exactly.
import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/config.js';
import type { SessionStore } from './sessions.js';
import { SESSION_COOKIE } from './sessions.js';
import { cookieValue, type RequestFacts } from './request-facts.js';
import type { AccountStore, Role } from '../store/accounts.js';

// Reachable without credentials: the version, the API's description, and what a person needs to
// log in or set up (the sign-in page's icon too).
export const PUBLIC_PATHS = new Set([
  '/api/version',
  '/favicon.ico',
  '/api/openapi.json',
  '/login',
  '/login.js',
  '/api/v1/auth/login',
  '/api/v1/auth/logout',
  '/api/v1/auth/callback',
  '/api/v1/auth/setup',
]);

/**
 * Who a request is. `role` is the local account's in password mode; every other principal (auth
 * disabled, the central server's channel or a trusted proxy, the loopback local admin, a server-mode
 * session) has the rights it had before roles existed: admin.
 */
export type Principal = { kind: 'disabled' | 'proxy' | 'local-admin' | 'session'; user?: string; role: Role };

// Kept on the request under a symbol of this module, which nothing from the network can name. Not
// a WeakMap: one entry a request made V8 grow, rehash and sweep the map's table under load, about
// 1.5 % of a `latest` request's CPU (docs/performance.md).
const PRINCIPAL = Symbol('printbox.principal');
type Judged = IncomingMessage & { [PRINCIPAL]?: Principal };

/** Who the gate found this request to be (undefined on a public path without credentials). */
export const principalOf = (req: IncomingMessage): Principal | undefined => (req as Judged)[PRINCIPAL];

// Requests the central server sent over the box's own WebSocket channel (server/proxy.ts). Only
// in-process code can put a request here: nothing that arrives from the network can.
const channelRequests = new WeakSet<IncomingMessage>();

/** Marks a request made in process for the central server's channel: it gets the proxy principal. */
export function markFromServerChannel(req: IncomingMessage): void {
  channelRequests.add(req);
}

/** Whether the request came over the central server's channel (marked by markFromServerChannel). */
export const fromServerChannel = (req: IncomingMessage): boolean => channelRequests.has(req);

function authenticate(req: IncomingMessage, cfg: Config, sessions: SessionStore, accounts: AccountStore, facts: RequestFacts): Principal | undefined {
  const auth = cfg.web.auth;
  if (channelRequests.has(req)) return { kind: 'proxy', role: 'admin' };
  if (auth.mode === 'disabled') return { kind: 'disabled', role: 'admin' };
  if (facts.fromServiceProxy(req)) return { kind: 'proxy', role: 'admin' };
  if (auth.allow_local_admin && facts.fromLoopback(req)) return { kind: 'local-admin', role: 'admin' };
  const session = sessions.get(cookieValue(req, SESSION_COOKIE));
  if (!session) return undefined;
  if (auth.mode !== 'password') return { kind: 'session', user: session.user, role: 'admin' };
  // Read on every request, so a role takes effect at once; an account removed (by another
  // process, before its sessions were ended) admits nobody.
  const role = accounts.roleOf(session.user);
  return role ? { kind: 'session', user: session.user, role } : undefined;
}

/**
 * Whether the request may go on to the router: it has a principal, or its path is public. The
 * caller answers a refusal (302 to the login page for a browser, 401 otherwise: contract 5.6).
 */
export function admit(req: IncomingMessage, cfg: Config, sessions: SessionStore, accounts: AccountStore, facts: RequestFacts): boolean {
  const principal = authenticate(req, cfg, sessions, accounts, facts);
  if (principal) (req as Judged)[PRINCIPAL] = principal;
  return Boolean(principal) || PUBLIC_PATHS.has((req.url ?? '/').split('?')[0]);
}
