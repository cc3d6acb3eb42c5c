// Accounts in password mode: the first account from the one-time setup code (onboarding), and a
// signed-in user's password change. `printbox-agent passwd` and provisioning are the other ways.
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { readStringFields } from '../body.js';
import { sendJson, sendText } from '../respond.js';
import { hashPassword, passwordProblem, verifyPassword } from '../../auth/passwords.js';
import { usernameProblem } from '../../store/accounts.js';
import { removeSetupCodeFile } from '../../auth/setup-code.js';
import { limiterKeys } from '../../auth/login-limiter.js';
import { principalOf } from '../../auth/gate.js';
import { SESSION_COOKIE } from '../../auth/sessions.js';
import { cookieValue } from '../../auth/request-facts.js';
import { startSession } from '../../auth/session-cookie.js';
import { countFailure, withinLimit } from './login.js';
import { formatTime } from '../../model/time.js';

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
    const keys = limiterKeys(ctx.facts.clientAddress(req), '(setup code)');
    if (!withinLimit(ctx, res, keys)) return;
    const hash = await hashPassword(password);
    if (!ctx.accounts.createFirstAccount(code, username, hash)) {
      if (ctx.accounts.count() > 0) return sendText(res, 409, 'an account exists already: sign in instead');
      countFailure(ctx, req, keys, 'setup code');
      return sendText(res, 401, 'invalid setup code');
    }
    ctx.loginLimiter.succeeded(keys);
    removeSetupCodeFile(ctx.config.data_dir);
    ctx.log.warn({ user: username, client: ctx.facts.clientAddress(req) }, 'first account created with the setup code');
    const session = startSession(req, res, ctx, username);
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
    const keys = limiterKeys(ctx.facts.clientAddress(req), user);
    if (!withinLimit(ctx, res, keys)) return;
    const account = ctx.accounts.get(user);
    if (!account || !(await verifyPassword(current, account.password_hash))) {
      countFailure(ctx, req, keys, `password change ${user}`);
      return sendText(res, 401, 'current_password is wrong');
    }
    ctx.loginLimiter.succeeded(keys);
    ctx.accounts.setPassword(user, await hashPassword(next));
    // Other sessions of this user end: a changed password locks out whoever else had it.
    ctx.sessions.deleteUser(user, cookieValue(req, SESSION_COOKIE));
    ctx.log.info({ user }, 'password changed');
    res.statusCode = 204;
    res.end();
  });
}
