// Password mode end to end over real HTTPS (docs/decisions/0015-auth-modes-and-sessions.md):
// onboarding with the one-time setup code, sign-in, the cookie's attributes, sign-out, password
// change, brute-force limits (429 with Retry-After), and the CLI's passwd. allow_local_admin is
// off, so loopback is an ordinary client here (the LAN tests try it from a non-loopback peer).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startAgent, expectJson, expectTextError, type Agent, type Res } from '../../kit/agent.js';

const json = (value: unknown, cookie?: string) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(cookie ? { Cookie: cookie } : {}) },
  body: JSON.stringify(value),
});
const session = (r: Res) => (r.headers['set-cookie'] ?? []).find((c) => c.startsWith('pm_agent_session='));
const attrs = (cookie: string) => new Map(cookie.split(';').slice(1).map((a) => {
  const [k, v = ''] = a.trim().split('=');
  return [k.toLowerCase(), v] as const;
}));

describe('password mode', () => {
  let agent: Agent;
  let code = '';
  let cookie = '';
  const login = (username: string, password: string) => agent.request('/api/v1/auth/login', json({ username, password }));

  before(async () => {
    agent = await startAgent({ authMode: 'password', allowLocalAdmin: false });
    code = readFileSync(join(agent.dataDir, 'setup-code'), 'utf8').trim();
  });
  after(() => agent?.stop());

  test('no account yet: a setup code exists (0600), the login page asks for it, nothing else opens', async () => {
    assert.match(code, /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    assert.equal((await import('node:fs')).statSync(join(agent.dataDir, 'setup-code')).mode & 0o777, 0o600);
    assert.doesNotMatch(agent.stdout(), new RegExp(code), 'the code never goes to the log');
    const page = await agent.request('/login', { headers: { Accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.match(page.body, /data-endpoint="\/api\/v1\/auth\/setup"/);
    expectTextError(await login('admin', 'whatever-password'), 401, 'invalid credentials');
    expectTextError(await agent.request('/devices/list'), 401, 'unauthorized');
  });

  test('onboarding: bad input and a wrong code change nothing', async () => {
    expectTextError(await agent.request('/api/v1/auth/setup', json({ setup_code: code, username: 'Admin!', password: 'long enough pw' })), 400,
      'username must be 1 to 32 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter or digit');
    expectTextError(await agent.request('/api/v1/auth/setup', json({ setup_code: code, username: 'admin', password: 'short' })), 400,
      'password must have at least 8 characters');
    expectTextError(await agent.request('/api/v1/auth/setup', json({ username: 'admin', password: 'long enough pw' })), 400, 'missing field setup_code');
    expectTextError(await agent.request('/api/v1/auth/setup', json({ setup_code: 'AAAA-BBBB-CCCC', username: 'admin', password: 'long enough pw' })), 401, 'invalid setup code');
    assert.ok(existsSync(join(agent.dataDir, 'setup-code')), 'code still there');
    expectTextError(await login('admin', 'long enough pw'), 401, 'invalid credentials');
  });

  test('onboarding with the right code (any case, spaces) makes the account and signs in', async () => {
    const typed = code.toLowerCase().replace(/-/g, ' ');
    const r = await agent.request('/api/v1/auth/setup', json({ setup_code: typed, username: 'admin', password: 'first password' }));
    assert.equal(r.status, 201, r.body);
    assert.deepEqual(Object.keys(JSON.parse(r.body)), ['user', 'expires_at']);
    assert.ok(session(r));
    assert.ok(!existsSync(join(agent.dataDir, 'setup-code')), 'the code file is gone');
    expectJson(await agent.request('/devices/list', { headers: { Cookie: session(r)!.split(';')[0] } }));
  });

  test('the setup code dies with the first account', async () => {
    expectTextError(await agent.request('/api/v1/auth/setup', json({ setup_code: code, username: 'second', password: 'other password' })), 409,
      'an account exists already: sign in instead');
    // 409 whatever the body: a bad one is not worth a 400 once setup is over.
    expectTextError(await agent.request('/api/v1/auth/setup', json({ username: '' })), 409, 'an account exists already: sign in instead');
    const page = await agent.request('/login', { headers: { Accept: 'text/html' } });
    assert.match(page.body, /data-endpoint="\/api\/v1\/auth\/login"/);
  });

  test('sign-in sets pm_agent_session with the contract attributes and a 24-hour expiry', async () => {
    const t0 = Date.now();
    const r = await login('admin', 'first password');
    assert.equal(r.status, 200, r.body);
    const c = session(r)!;
    assert.match(c, /^pm_agent_session=[A-Za-z0-9_-]{43};/);
    const a = attrs(c);
    assert.equal(a.get('path'), '/');
    assert.ok(a.has('httponly') && a.has('secure'));
    assert.equal(a.get('samesite'), 'Lax');
    const maxAge = Number(a.get('max-age'));
    assert.ok(maxAge > 86400 - 60 && maxAge <= 86400, `Max-Age ${maxAge}`);
    assert.ok(Math.abs(Date.parse(a.get('expires')!) - (t0 + 86_400_000)) < 60_000);
    cookie = c.split(';')[0];
    expectJson(await agent.request('/settings', { headers: { Cookie: cookie, Accept: 'application/json' } }));
  });

  test('sign-out ends the session and clears the cookie', async () => {
    const c = session(await login('admin', 'first password'))!.split(';')[0];
    const out = await agent.request('/api/v1/auth/logout', { method: 'POST', headers: { Cookie: c } });
    assert.equal(out.status, 204);
    assert.match(session(out)!, /^pm_agent_session=; .*Max-Age=0/);
    expectTextError(await agent.request('/devices/list', { headers: { Cookie: c } }), 401, 'unauthorized');
    expectJson(await agent.request('/devices/list', { headers: { Cookie: cookie } }), 200);
  });

  test('password change: the current password is checked, other sessions end, the new one works', async () => {
    const other = session(await login('admin', 'first password'))!.split(';')[0];
    expectTextError(await agent.request('/api/v1/auth/password', json({ current_password: 'nope nope', new_password: 'second password' }, cookie)), 401,
      'current_password is wrong');
    expectTextError(await agent.request('/api/v1/auth/password', json({ current_password: 'first password', new_password: 'short' }, cookie)), 400,
      'new_password: password must have at least 8 characters');
    const r = await agent.request('/api/v1/auth/password', json({ current_password: 'first password', new_password: 'second password' }, cookie));
    assert.equal(r.status, 204, r.body);
    expectJson(await agent.request('/devices/list', { headers: { Cookie: cookie } }));
    expectTextError(await agent.request('/devices/list', { headers: { Cookie: other } }), 401, 'unauthorized');
    expectTextError(await login('admin', 'first password'), 401, 'invalid credentials');
    assert.equal((await login('admin', 'second password')).status, 200);
  });

  test('guessing is rate-limited: after 5 failures the next attempt answers 429 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) expectTextError(await login('admin', `guess ${i}`), 401, 'invalid credentials');
    const locked = await login('admin', 'second password');
    assert.equal(locked.status, 429, locked.body);
    assert.match(locked.body, /^too many failed attempts for this account \(a browser that has signed in to it here before is not held back\): try again in \d+ s\n$/);
    const wait = Number(locked.headers['retry-after']);
    assert.ok(wait >= 1, `Retry-After ${locked.headers['retry-after']}`);
    assert.equal(session(locked), undefined, 'no session while locked, even with the right password');
    assert.match(agent.stdout(), /repeated failed sign-in attempts: rate limited/);
    await new Promise((r) => setTimeout(r, wait * 1000 + 100));
    assert.equal((await login('admin', 'second password')).status, 200, 'after the wait the right password works');
  });

  test('passwd on the command line makes or changes an account (password from stdin)', async () => {
    const bad = await runCli(['passwd', 'tech'], { configPath: agent.configPath, input: 'short\n' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /password must have at least 8 characters; nothing changed/);
    const ok = await runCli(['passwd', 'tech'], { configPath: agent.configPath, input: 'from the shell\n' });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((await login('tech', 'from the shell')).status, 200);
    const usage = await runCli(['passwd'], { configPath: agent.configPath });
    assert.equal(usage.code, 2);
  });

  test('sessions outlast a restart (kept in the database: test/agent/api/sessions-persist.test.ts)', async () => {
    await agent.restart();
    expectJson(await agent.request('/devices/list', { headers: { Cookie: cookie } }));
  });
});
