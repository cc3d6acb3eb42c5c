// Accounts in password mode: the first account from the one-time setup code (onboarding), and a
// signed-in user's password change. `printbox-agent passwd` and provisioning are the other ways.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readStringFields } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { hashPassword, passwordProblem, verifyPassword } from '../../auth/passwords.js';
import { hashSetupCode, usernameProblem } from '../../store/accounts.js';
import { removeSetupCodeFile } from '../../auth/setup-code.js';
import { setupKeys } from '../../auth/login-limiter.js';
import { principalOf } from '../../auth/gate.js';
import { SESSION_COOKIE } from '../../auth/sessions.js';
import { cookieValue } from '../../auth/request-facts.js';
import { startSession } from '../../auth/session-cookie.js';
import { beginAttempt, countFailure } from './login.js';
import { formatTime } from '../../model/time.js';
import { createHash, timingSafeEqual } from 'node:crypto';

/** A key per session (its token's hash, never the token): a signed-in user is limited on their own failures. */
export const sessionLimitKey = (token: string): string => `session:${createHash('sha256').update(token).digest('base64url').slice(0, 22)}`;

export function register(app: App, ctx: AgentContext): void {
  const passwordMode = () => ctx.config.web.auth.mode === 'password';

  app.post('/api/v1/auth/setup', async (req, res) => {
    if (!passwordMode()) return sendText(res, 403, `account setup is not available in ${ctx.config.web.auth.mode} auth mode`);
    // Once an account exists nothing sent here can matter: said first, whatever the body holds.
    if (ctx.accounts.count() > 0) return sendText(res, 409, 'an account exists already: sign in instead');
    const form = await readStringFields(req, res, ['setup_code', 'username', 'password'] as const);
    if (!form) return;
    const { setup_code: code, username, password } = form;
    const problem = usernameProblem(username) ?? passwordProblem(password);
    if (problem) return sendText(res, 400, problem);
    const client = ctx.facts.clientAddress(req);
    const attempt = beginAttempt(ctx, res, setupKeys(client), { proved: false });
    if (!attempt) return;
    const refuse = () => {
      if (ctx.accounts.count() > 0) {
        attempt.abandoned();
        return sendText(res, 409, 'an account exists already: sign in instead');
      }
      countFailure(ctx, req, attempt, 'setup code');
      return sendText(res, 401, 'invalid setup code');
    };
    // The code is checked before the password is hashed: a wrong one costs the box no scrypt.
    const stored = ctx.accounts.setupCodeHash();
    if (!stored || !timingSafeEqual(Buffer.from(hashSetupCode(code)), Buffer.from(stored))) return refuse();
    const hash = await ctx.hashQueue.run(client, false, () => hashPassword(password)).catch((err: unknown) => {
      attempt.abandoned();
      throw err;
    });
    // Checked again, with the account's creation, in one transaction.
    let created: boolean;
    try {
      created = ctx.accounts.createFirstAccount(code, username, hash);
    } catch (err) {
      attempt.abandoned(); // not stored (507, 503): nothing was decided
      throw err;
    }
    if (!created) return refuse();
    attempt.succeeded();
    removeSetupCodeFile(ctx.config.data_dir);
    ctx.log.warn({ user: username, client }, 'first account created with the setup code');
    const session = startSession(req, res, ctx, username);
    ctx.deviceCookies.give(res, username, ctx.facts.isHttps(req));
    sendJson(res, 201, { user: username, expires_at: formatTime(session.expires) });
  });

  app.post('/api/v1/auth/password', async (req, res) => {
    if (!passwordMode()) return sendText(res, 403, `password change is not available in ${ctx.config.web.auth.mode} auth mode`);
    const principal = principalOf(req);
    if (principal?.kind !== 'session' || !principal.user) {
      return sendText(res, 403, 'password change needs a signed-in user (use printbox-agent passwd on the box)');
    }
    const user = principal.user;
    const form = await readStringFields(req, res, ['current_password', 'new_password'] as const);
    if (!form) return;
    const { current_password: current, new_password: next } = form;
    const problem = passwordProblem(next);
    if (problem) return sendText(res, 400, `new_password: ${problem}`);
    // Limited per session, so hosts guessing the account's password cannot block its change.
    const attempt = beginAttempt(ctx, res, [sessionLimitKey(cookieValue(req, SESSION_COOKIE) ?? '')], { proved: true });
    if (!attempt) return;
    const account = ctx.accounts.get(user);
    const hash = await ctx.hashQueue
      .run(ctx.facts.clientAddress(req), true, async () =>
        account && (await verifyPassword(current, account.password_hash)) ? hashPassword(next) : undefined,
      )
      .catch((err: unknown) => {
        attempt.abandoned();
        throw err;
      });
    if (!hash) {
      countFailure(ctx, req, attempt, `password change ${user}`);
      return sendText(res, 401, 'current_password is wrong');
    }
    attempt.succeeded();
    ctx.accounts.setPassword(user, hash);
    // Other sessions of this user end: a changed password locks out whoever else had it.
    ctx.sessions.deleteUser(user, cookieValue(req, SESSION_COOKIE));
    ctx.log.info({ user }, 'password changed');
    res.statusCode = 204;
    res.end();
  });
}
