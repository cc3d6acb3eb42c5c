// Signing in (docs/decisions/0015-auth-modes-and-sessions.md). Password mode checks local accounts;
// server mode checks the person's credentials against the central server and issues the agent's own
// session cookie, never the server's token. Both count attempts when they start, per client address
// and account name, or per device cookie (auth/login-limiter.ts).
import type { App } from '@tinyhttp/app';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentContext } from '../context.js';
import { readStringFields } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { queryOf } from '../query.js';
import { parseTime, formatTime } from '../../model/time.js';
import { SESSION_COOKIE } from '../../auth/sessions.js';
import { cookieValue, safeReturnTo } from '../../auth/request-facts.js';
import { clearSessionCookie, startSession } from '../../auth/session-cookie.js';
import { isRefusal, limiterKeys, refusalMessage, signInKeys, type Attempt, type Refusal } from '../../auth/login-limiter.js';
import { dummyHash, verifyPassword } from '../../auth/passwords.js';
import { LOGIN_JS, loginPage, type LoginView } from '../../ui/login-page.js';
import { errorText } from '../../shared/error-text.js';

const SERVER_TIMEOUT_MS = 10_000;

function serverUrl(ctx: AgentContext, path: string): string {
  return new URL(path, ctx.config.server.url.replace(/\/?$/, '/')).toString();
}

function loginView(ctx: AgentContext): LoginView {
  const mode = ctx.config.web.auth.mode;
  if (mode === 'password') return ctx.accounts.count() === 0 ? 'setup' : 'login';
  return mode === 'server' ? 'login' : 'notice';
}

/** Answers 429 with Retry-After for a refused attempt. */
export function sendRefusal(res: ServerResponse, r: Refusal): void {
  res.setHeader('Retry-After', String(r.wait));
  sendText(res, 429, refusalMessage(r));
}

/**
 * Starts a credential check (the shared order of sign-in, setup and password change): refused
 * (429) when a key is locked or, for a check that hashes, when the hash queue is full; otherwise
 * counted now, before anything is checked. Undefined when the answer has been sent.
 */
export function beginAttempt(
  ctx: AgentContext,
  res: ServerResponse,
  keys: string[],
  hashes?: { proved: boolean },
): Attempt | undefined {
  const locked = ctx.loginLimiter.check(keys);
  if (locked.wait > 0) return void sendRefusal(res, locked);
  if (hashes && !ctx.hashQueue.hasRoom(hashes.proved)) {
    res.setHeader('Retry-After', '1');
    return void sendText(res, 429, 'too many sign-in attempts in progress: try again in 1 s');
  }
  const attempt = ctx.loginLimiter.begin(keys);
  if (isRefusal(attempt)) return void sendRefusal(res, attempt); // not reached: checked just above
  return attempt;
}

/** Logs a failed credential check (a warning once the limit is reached). */
export function countFailure(ctx: AgentContext, req: IncomingMessage, attempt: Attempt, what: string): void {
  const failures = attempt.failed();
  const entry = { client: ctx.facts.clientAddress(req), failures, what };
  if (failures >= 5) ctx.log.warn(entry, 'repeated failed sign-in attempts: rate limited');
  else ctx.log.info(entry, 'failed sign-in attempt');
}

/** Server mode: the central server's answer to the credentials, or an error already sent. */
async function checkWithServer(
  ctx: AgentContext,
  res: ServerResponse,
  username: string,
  password: string,
): Promise<'rejected' | { expires?: number } | undefined> {
  const fail = (status: number, message: string) => {
    sendText(res, status, message);
    return undefined;
  };
  let answer: Response;
  try {
    answer = await fetch(serverUrl(ctx, 'api/v1/auth/login'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ username, password }),
      signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
    });
  } catch (err) {
    ctx.log.warn({ err: errorText(err) }, 'central server login request failed');
    return fail(502, 'central server unreachable');
  }
  if (answer.status === 401 || answer.status === 403) return 'rejected';
  if (!answer.ok) return fail(502, `central server answered ${answer.status}`);
  let reply: { token?: unknown; expires_at?: unknown };
  try {
    reply = (await answer.json()) as typeof reply;
  } catch {
    return fail(502, 'central server sent an unreadable login reply');
  }
  if (typeof reply.token !== 'string' || reply.token === '') return fail(502, 'central server login reply has no token');
  if (reply.expires_at === undefined || reply.expires_at === null) return { expires: undefined }; // 24-hour fallback
  const expires = typeof reply.expires_at === 'string' ? parseTime(reply.expires_at) : null;
  // A session the server already ended, or one it dated in a way we cannot read, is not started.
  if (expires === null) return fail(502, 'central server login reply has an unreadable expires_at');
  if (expires <= ctx.now()) return fail(502, 'central server login reply has an expires_at in the past');
  return { expires };
}

export function register(app: App, ctx: AgentContext): void {
  app.get('/login', (req, res) => {
    const body = loginPage(loginView(ctx), safeReturnTo(queryOf(req).get('return_to')));
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
    res.end(body);
  });
  app.get('/login.js', (_req, res) => {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(LOGIN_JS);
  });

  app.post('/api/v1/auth/login', async (req, res) => {
    const mode = ctx.config.web.auth.mode;
    if (mode !== 'server' && mode !== 'password') {
      return sendText(res, 403, `password login is not available in ${mode} auth mode`);
    }
    const form = await readStringFields(req, res, ['username', 'password'] as const);
    if (!form) return;
    const { username, password } = form;
    const client = ctx.facts.clientAddress(req);
    // A device cookie for this account: limited on its own failures, not the account's.
    const device = ctx.deviceCookies.fromRequest(req, username);
    const attempt = beginAttempt(ctx, res, signInKeys(client, username, device), mode === 'password' ? { proved: Boolean(device) } : undefined);
    if (!attempt) return;

    let expires: number | undefined;
    if (mode === 'password') {
      const account = ctx.accounts.get(username);
      // An unknown name is checked against a real hash too: it costs what a wrong password costs.
      const ok = await ctx.hashQueue
        .run(client, Boolean(device), async () => verifyPassword(password, account?.password_hash ?? (await dummyHash())))
        .catch((err: unknown) => {
          attempt.abandoned(); // nothing was decided: the key must not stay held
          throw err;
        });
      if (!ok || !account) {
        countFailure(ctx, req, attempt, `login ${username}`);
        return sendText(res, 401, 'invalid credentials');
      }
    } else {
      const answer = await checkWithServer(ctx, res, username, password);
      if (answer === undefined) return attempt.abandoned(); // answered with a 502: nothing was checked
      if (answer === 'rejected') {
        countFailure(ctx, req, attempt, `login ${username}`);
        return sendText(res, 401, 'invalid credentials');
      }
      expires = answer.expires;
    }
    attempt.succeeded();
    const session = startSession(req, res, ctx, username, expires);
    ctx.deviceCookies.give(res, username, ctx.facts.isHttps(req));
    ctx.log.info({ user: username, client: ctx.facts.clientAddress(req) }, 'login');
    sendJson(res, 200, { user: username, expires_at: formatTime(session.expires) });
  });

  app.post('/api/v1/auth/logout', (req, res) => {
    const token = cookieValue(req, SESSION_COOKIE);
    if (token) ctx.sessions.delete(token);
    clearSessionCookie(req, res, ctx.facts);
    res.statusCode = 204;
    res.end();
  });

  // The central server hands the browser a server token; the agent checks it by asking the server
  // for an authenticated resource with it, then issues its own cookie (24-hour expiry: the server
  // does not say the token's lifetime here).
  app.get('/api/v1/auth/callback', async (req, res) => {
    if (ctx.config.web.auth.mode !== 'server') {
      return sendText(res, 403, `server callback is not available in ${ctx.config.web.auth.mode} auth mode`);
    }
    const q = queryOf(req);
    const serverToken = q.get('token');
    if (!serverToken) return sendText(res, 400, 'token parameter required');
    const attempt = beginAttempt(ctx, res, [limiterKeys(ctx.facts.clientAddress(req), '')[0]]);
    if (!attempt) return;
    let answer: Response;
    try {
      answer = await fetch(serverUrl(ctx, 'api/v1/agents'), {
        headers: { Authorization: `Bearer ${serverToken}`, Accept: 'application/json' },
        signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
      });
      await answer.body?.cancel();
    } catch (err) {
      ctx.log.warn({ err: errorText(err) }, 'central server token check failed');
      attempt.abandoned(); // nothing was checked
      return sendText(res, 502, 'central server unreachable');
    }
    if (!answer.ok) {
      countFailure(ctx, req, attempt, 'server callback');
      return sendText(res, 401, 'invalid token');
    }
    attempt.succeeded();
    startSession(req, res, ctx, 'server');
    res.statusCode = 302;
    res.setHeader('Location', safeReturnTo(q.get('return_to')));
    res.end();
  });
}
