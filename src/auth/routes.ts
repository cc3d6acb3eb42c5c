// Login in server auth mode (decisions.md, Auth): the agent checks the person's credentials
// against the central server and issues its own session cookie, never the server's token.
import type { App } from '@tinyhttp/app';
import type { ServerResponse, IncomingMessage } from 'node:http';
import type { AgentContext } from '../api/context.js';
import { readJsonBody, requireString } from '../api/body.js';
import { sendJson, sendText } from '../api/respond.js';
import { queryOf } from '../api/query.js';
import { parseTime, formatTime } from '../model/time.js';
import { SESSION_COOKIE } from './sessions.js';
import { isHttps, safeReturnTo } from './request-facts.js';

const SERVER_TIMEOUT_MS = 10_000;

function setSessionCookie(req: IncomingMessage, res: ServerResponse, token: string, expires: number, now: number): void {
  const maxAge = Math.max(0, Math.floor((expires - now) / 1000));
  const parts = [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    `Expires=${new Date(expires).toUTCString()}`,
    `Max-Age=${maxAge}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (isHttps(req)) parts.push('Secure');
  res.setHeader('Set-Cookie', parts.join('; '));
}

function serverUrl(ctx: AgentContext, path: string): string | undefined {
  return ctx.config.server.url ? new URL(path, ctx.config.server.url.replace(/\/?$/, '/')).toString() : undefined;
}

const loginPage = (returnTo: string, mode: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PrintBox login</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>PrintBox</h1>
${
  mode === 'server'
    ? `<form id="login"><label>User <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button>Log in</button><p id="error" role="alert"></p></form>
<script>
document.getElementById('login').addEventListener('submit', async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const r = await fetch('/api/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: f.get('username'), password: f.get('password') }) });
  if (r.ok) location.href = ${JSON.stringify(returnTo).replace(/</g, '\\u003c')};
  else document.getElementById('error').textContent = (await r.text()).trim();
});
</script>`
    : '<p>This box uses local authentication: open it from the box itself (loopback) or through the central server.</p>'
}
</main></body></html>
`;

export function register(app: App, ctx: AgentContext): void {
  app.get('/login', (req, res) => {
    const body = loginPage(safeReturnTo(queryOf(req).get('return_to')), ctx.config.web.auth.mode);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'self'; script-src 'unsafe-inline'; form-action 'self'");
    res.end(body);
  });

  app.post('/api/v1/auth/login', async (req, res) => {
    if (ctx.config.web.auth.mode !== 'server') {
      return sendText(res, 403, `password login is not available in ${ctx.config.web.auth.mode} auth mode`);
    }
    const body = await readJsonBody(req, res, 8 * 1024);
    if (!body) return;
    const username = requireString(body, 'username', res);
    if (username === undefined) return;
    const password = requireString(body, 'password', res);
    if (password === undefined) return;
    const url = serverUrl(ctx, 'api/v1/auth/login');
    if (!url) return sendText(res, 503, 'server auth mode needs server.url in the configuration');
    let answer: Response;
    try {
      answer = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ username, password }),
        signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
      });
    } catch (err) {
      ctx.log.warn({ err: (err as Error).message }, 'central server login request failed');
      return sendText(res, 502, 'central server unreachable');
    }
    if (answer.status === 401 || answer.status === 403) return sendText(res, 401, 'invalid credentials');
    if (!answer.ok) return sendText(res, 502, `central server answered ${answer.status}`);
    let reply: { token?: unknown; expires_at?: unknown };
    try {
      reply = (await answer.json()) as typeof reply;
    } catch {
      return sendText(res, 502, 'central server sent an unreadable login reply');
    }
    if (typeof reply.token !== 'string' || reply.token === '') return sendText(res, 502, 'central server login reply has no token');
    const expiresAt = typeof reply.expires_at === 'string' ? parseTime(reply.expires_at) : null;
    const now = ctx.now();
    const { token, session } = ctx.sessions.create(username, expiresAt ?? undefined);
    setSessionCookie(req, res, token, session.expires, now);
    ctx.log.info({ user: username }, 'login');
    sendJson(res, 200, { user: username, expires_at: formatTime(session.expires) });
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
    const url = serverUrl(ctx, 'api/v1/agents');
    if (!url) return sendText(res, 503, 'server auth mode needs server.url in the configuration');
    let answer: Response;
    try {
      answer = await fetch(url, {
        headers: { Authorization: `Bearer ${serverToken}`, Accept: 'application/json' },
        signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
      });
      await answer.body?.cancel();
    } catch (err) {
      ctx.log.warn({ err: (err as Error).message }, 'central server token check failed');
      return sendText(res, 502, 'central server unreachable');
    }
    if (!answer.ok) return sendText(res, 401, 'invalid token');
    const now = ctx.now();
    const { token, session } = ctx.sessions.create('server');
    setSessionCookie(req, res, token, session.expires, now);
    res.statusCode = 302;
    res.setHeader('Location', safeReturnTo(q.get('return_to')));
    res.end();
  });
}
