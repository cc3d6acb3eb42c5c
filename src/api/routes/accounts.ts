// Who the request is (GET /api/v1/auth/me: the UI hides what a viewer may not do), and account
// management by an admin (password mode): list, create, change role or password, remove.
// The box keeps at least one admin (store/accounts.ts refuses otherwise, in the same transaction
// as the change). A changed or removed account's sessions end at once, their event streams with
// them (auth/session-streams.ts); an admin resetting their own password keeps the session they
// did it from, as a password change does.
import type { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentContext } from '../context.js';
import { readJsonBody, requireString } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { principalOf } from '../../auth/gate.js';
import { hashPassword, passwordProblem } from '../../auth/passwords.js';
import { SESSION_COOKIE } from '../../auth/sessions.js';
import { cookieValue } from '../../auth/request-facts.js';
import { AccountChangeRefused, ROLES, isRole, usernameProblem, type AccountSummary, type Role } from '../../store/accounts.js';
import { formatTime } from '../../model/time.js';

const accountJson = (a: AccountSummary) => ({ username: a.username, role: a.role, created_at: formatTime(a.created_at), updated_at: formatTime(a.updated_at) });

const REFUSED_STATUS: Record<AccountChangeRefused['reason'], number> = { exists: 409, missing: 404, last_admin: 409 };

export function register(app: App, ctx: AgentContext): void {
  /** Why this request may not manage accounts, or undefined. */
  const managerProblem = (req: IncomingMessage): string | undefined => {
    const mode = ctx.config.web.auth.mode;
    if (mode !== 'password') return `accounts are managed only in password auth mode (this box is in ${mode} mode)`;
    const p = principalOf(req);
    // The central server's channel keeps the rights it had, which never included the box's accounts.
    if (p?.role !== 'admin' || (p.kind !== 'session' && p.kind !== 'local-admin')) {
      return 'accounts are managed by a signed-in admin, or on the box itself (printbox-agent passwd)';
    }
    return undefined;
  };
  const allowed = (req: IncomingMessage, res: ServerResponse): boolean => {
    const problem = managerProblem(req);
    if (problem) sendText(res, 403, problem);
    return !problem;
  };

  /** The body's fields: `username` required, `role` and `password` as `need` says (`change`: one of them). */
  const readAccount = async (req: IncomingMessage, res: ServerResponse, need: { role: boolean; password: boolean; change?: boolean }) => {
    const body = await readJsonBody(req, res, 8 * 1024);
    if (!body) return undefined;
    const fail = (msg: string) => void sendText(res, 400, `${msg}. Nothing was changed`);
    const { username, role, password } = body;
    if (typeof username !== 'string') return fail('field username required (a string)');
    const nameProblem = usernameProblem(username);
    if (nameProblem) return fail(nameProblem);
    if (role !== undefined || need.role) {
      if (!isRole(role)) return fail(`field role must be one of ${ROLES.join(', ')}`);
    }
    if (password !== undefined || need.password) {
      if (typeof password !== 'string') return fail('field password required (a string)');
      const weak = passwordProblem(password);
      if (weak) return fail(`password: ${weak}`);
    }
    if (need.change && role === undefined && password === undefined) return fail('give role, password or both');
    return { username, role: role as Role | undefined, password: password as string | undefined };
  };
  /** The password's hash, or undefined with a 429 sent when the hash queue is full (as sign-in answers). */
  const hash = async (req: IncomingMessage, res: ServerResponse, password: string): Promise<string | undefined> => {
    if (!ctx.hashQueue.hasRoom(true)) {
      res.setHeader('Retry-After', '1');
      return void sendText(res, 429, 'too many sign-in attempts in progress: try again in 1 s');
    }
    return ctx.hashQueue.run(ctx.facts.clientAddress(req), true, () => hashPassword(password));
  };
  /** Runs an account change; a refusal is answered with its status and message. */
  const change = (res: ServerResponse, fn: () => void): boolean => {
    try {
      fn();
      return true;
    } catch (err) {
      if (!(err instanceof AccountChangeRefused)) throw err;
      sendText(res, REFUSED_STATUS[err.reason], `${err.message}. Nothing was changed`);
      return false;
    }
  };
  const answerAccount = (res: ServerResponse, status: number, username: string) => {
    const a = ctx.accounts.get(username);
    if (!a) return sendText(res, 404, `no account named ${JSON.stringify(username)}`);
    sendJson(res, status, accountJson(a));
  };

  app.get('/api/v1/auth/me', (req, res) => {
    const p = principalOf(req)!; // the path is not public: the gate found someone
    sendJson(res, 200, { ...(p.user ? { user: p.user } : {}), role: p.role, auth_mode: ctx.config.web.auth.mode, manage_accounts: managerProblem(req) === undefined });
  });

  app.get('/api/v1/accounts', (req, res) => {
    if (!allowed(req, res)) return;
    sendJson(res, 200, { accounts: ctx.accounts.list().map(accountJson) });
  });

  app.post('/api/v1/accounts', async (req, res) => {
    if (!allowed(req, res)) return;
    const a = await readAccount(req, res, { role: true, password: true });
    if (!a) return;
    if (ctx.accounts.get(a.username)) return sendText(res, 409, `an account named ${JSON.stringify(a.username)} exists already. Nothing was changed`);
    const passwordHash = await hash(req, res, a.password!);
    if (passwordHash === undefined) return;
    if (!change(res, () => ctx.accounts.create(a.username, passwordHash, a.role!))) return;
    ctx.log.warn({ user: a.username, role: a.role, by: principalOf(req)?.user ?? 'local admin' }, 'account created');
    answerAccount(res, 201, a.username);
  });

  app.post('/api/v1/accounts/update', async (req, res) => {
    if (!allowed(req, res)) return;
    const a = await readAccount(req, res, { role: false, password: false, change: true });
    if (!a) return;
    if (!ctx.accounts.get(a.username)) return sendText(res, 404, `no account named ${JSON.stringify(a.username)}. Nothing was changed`);
    const passwordHash = a.password === undefined ? undefined : await hash(req, res, a.password);
    if (a.password !== undefined && passwordHash === undefined) return;
    if (!change(res, () => ctx.accounts.update(a.username, { role: a.role, passwordHash }))) return;
    const by = principalOf(req)?.user;
    // The account's sessions end; its own password reset keeps the session it was made from.
    const keep = by === a.username && a.role === undefined ? cookieValue(req, SESSION_COOKIE) : undefined;
    ctx.sessions.deleteUser(a.username, keep, 'account_changed');
    ctx.log.warn({ user: a.username, ...(a.role ? { role: a.role } : {}), password_reset: a.password !== undefined, by: by ?? 'local admin' }, 'account changed');
    answerAccount(res, 200, a.username);
  });

  app.post('/api/v1/accounts/delete', async (req, res) => {
    if (!allowed(req, res)) return;
    const body = await readJsonBody(req, res, 8 * 1024);
    const username = body && requireString(body, 'username', res);
    if (username === undefined) return;
    if (!change(res, () => ctx.accounts.remove(username))) return;
    ctx.sessions.deleteUser(username, undefined, 'account_removed');
    ctx.log.warn({ user: username, by: principalOf(req)?.user ?? 'local admin' }, 'account removed');
    res.statusCode = 204;
    res.end();
  });
}
