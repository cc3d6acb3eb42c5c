// What a viewer may do: read everything an admin reads, change nothing. Judged once,
// before routing (api/app.ts), by method: every request but GET and HEAD is a write, so a route
// added later is refused to viewers until someone decides otherwise here. The GETs this box
// serves change nothing (the event stream, exports, logs and a printer's pages through the proxy
// are reads); a GET that does change something must be named in WRITING_GETS. ACCOUNT_PATHS are
// reads a viewer is not shown either: the accounts and their roles are an admin's business.
import type { IncomingMessage } from 'node:http';
import { PUBLIC_PATHS, type Principal } from './gate.js';

/**
 * Non-GET requests a viewer may still send: its own password, and the public paths (sign-in and
 * sign-out: anyone may send those without a cookie, so a viewer's cookie must not stop them).
 */
export const VIEWER_MAY_POST = new Set(['/api/v1/auth/password', ...PUBLIC_PATHS]);

/** GET paths that change something (none today: a new one must be listed here). */
export const WRITING_GETS = new Set<string>();

/** Paths only an admin reads (account management). */
export const ACCOUNT_PATHS = new Set(['/api/v1/accounts']);

/** The 403 message a viewer gets for a refused request. */
export const VIEWER_REFUSAL = 'forbidden: this account is a viewer (it reads, but changes nothing): ask an admin';

/** Why the principal may not make this request (a 403 message), or undefined. */
export function roleProblem(req: IncomingMessage, principal: Principal | undefined): string | undefined {
  if (principal?.role !== 'viewer') return undefined;
  const path = (req.url ?? '/').split('?')[0].toLowerCase().replace(/(.)\/$/, '$1');
  const read = req.method === 'GET' || req.method === 'HEAD';
  if (read ? WRITING_GETS.has(path) || ACCOUNT_PATHS.has(path) : !VIEWER_MAY_POST.has(path)) return VIEWER_REFUSAL;
  return undefined;
}
