// Authentication (contract 5 and 7; docs/decisions/0014-trusted-proxies.md,
// 0015-auth-modes-and-sessions.md): modes local / server / disabled, the loopback local-admin
// principal (remote address or first X-Forwarded-For value), X-Service-Proxy, 302 vs 401, the
// pm_agent_session cookie and its attributes, server-mode login against a test double of the
// central server's POST /api/v1/auth/login, session expiry and loss on restart.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { freePort, startAgent, expectJson, expectTextError, describe as show, type Agent, type Res } from '../../kit/agent.js';
import { device, metrics, ndjson, HOUR } from '../../kit/seed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SEED = ndjson([device('AUTH-1', { ip: '10.9.0.1', is_saved: true }), metrics('AUTH-1', 'raw', Date.now() - HOUR, { page_count: 3 })]);

const PROTECTED = [
  '/devices/list',
  '/devices/discovered',
  '/api/devices/profile?serial=AUTH-1',
  '/api/devices/metrics/latest?serial=AUTH-1',
  '/api/devices/metrics/history?serial=AUTH-1',
  '/api/devices/metrics/bounds?serial=AUTH-1',
];
const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

// ---------------------------------------------------------------- central server test double
interface Seen { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }
const seen: Seen[] = [];
const tokens = new Map<string, string>(); // token -> username
let serverDouble: http.Server;
let serverUrl = '';
const USERS: Record<string, { password: string; ttlMs?: number; expiresAt?: string }> = {
  alice: { password: 'secret', ttlMs: 2 * HOUR },
  short: { password: 'secret', ttlMs: 4000 },
  noexp: { password: 'secret' },
  past: { password: 'secret', ttlMs: -HOUR },
  garbled: { password: 'secret', expiresAt: 'tomorrow-ish' },
  forever: { password: 'secret', ttlMs: 50 * 365 * 24 * HOUR },
};
let tokenCounter = 0;

async function startServerDouble(): Promise<void> {
  const port = await freePort();
  serverDouble = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      if (req.method === 'POST' && req.url === '/api/v1/auth/login') {
        let u: { username?: string; password?: string } = {};
        try {
          u = JSON.parse(body);
        } catch {
          return json(400, { error: 'bad request', details: 'invalid JSON' });
        }
        const user = u.username ? USERS[u.username] : undefined;
        if (!user || user.password !== u.password) return json(401, { error: 'unauthorized', details: 'bad credentials' });
        const token = `srv-token-${u.username}-${++tokenCounter}`;
        tokens.set(token, u.username!);
        const expires_at = user.expiresAt ?? (user.ttlMs ? new Date(Date.now() + user.ttlMs).toISOString() : undefined);
        return json(200, expires_at ? { token, expires_at } : { token });
      }
      // Anything else: accept a known bearer token (so an agent may validate a callback token).
      const m = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''));
      if (m && tokens.has(m[1]!)) return json(200, { username: tokens.get(m[1]!), token: m[1], expires_at: new Date(Date.now() + HOUR).toISOString() });
      return json(401, { error: 'unauthorized', details: '' });
    });
  });
  await new Promise<void>((r) => serverDouble.listen(port, '127.0.0.1', () => r()));
  serverUrl = `http://127.0.0.1:${port}`;
}

// ---------------------------------------------------------------- helpers
interface Cookie { value: string; attrs: Map<string, string> }
function sessionCookie(r: Res): Cookie | undefined {
  const all = r.headers['set-cookie'] ?? [];
  const c = all.find((s) => s.startsWith('pm_agent_session='));
  if (!c) return undefined;
  const [nv, ...attrs] = c.split(';').map((s) => s.trim());
  const map = new Map<string, string>();
  for (const a of attrs) {
    const i = a.indexOf('=');
    map.set((i < 0 ? a : a.slice(0, i)).toLowerCase(), i < 0 ? '' : a.slice(i + 1));
  }
  return { value: nv!.slice('pm_agent_session='.length), attrs: map };
}
/** 302 to /login?return_to=<path>; in server mode the configured server login URL is also allowed (contract 5.6). */
function expectRedirectToLogin(r: Res, path: string, serverMode = false): void {
  assert.equal(r.status, 302, show(r));
  assert.equal(r.body, '', '302 body is empty');
  const loc = String(r.headers.location ?? '');
  const u = new URL(loc, 'https://agent.invalid');
  if (serverMode && u.host !== 'agent.invalid' && serverUrl && loc.startsWith(serverUrl)) return; // server login URL variant
  assert.equal(u.pathname, '/login', `Location: ${loc}`);
  assert.equal(u.searchParams.get('return_to'), path, `Location: ${loc}`);
}

let strict: Agent; // local, allow_local_admin = false
let disabled: Agent; // disabled, allow_local_admin = false
let server: Agent; // server mode, allow_local_admin = false, HTTP listener serves the API
// Requests from non-loopback peers (forwarding headers, path forms, cookies): lan-access.test.ts.

before(async () => {
  await startServerDouble();
  [strict, disabled, server] = await Promise.all([
    startAgent({ seed: SEED, authMode: 'local', allowLocalAdmin: false }),
    startAgent({ seed: SEED, authMode: 'disabled', allowLocalAdmin: false }),
    startAgent({ seed: SEED, authMode: 'server', allowLocalAdmin: false, redirectHttpToHttps: false, serverUrl }),
  ]);
});
after(async () => {
  await Promise.all([strict?.stop(), disabled?.stop(), server?.stop()]);
  serverDouble?.close();
});

// ---------------------------------------------------------------- local mode, no local admin
describe('local mode without the loopback allowance', () => {
  for (const p of PROTECTED) {
    test(`${p}: 401 without Accept text/html, 302 with it`, async () => {
      expectTextError(await strict.request(p), 401, 'unauthorized');
      expectTextError(await strict.request(p, { headers: { Accept: 'application/json' } }), 401, 'unauthorized');
      expectTextError(await strict.request(p, { headers: { Accept: '*/*' } }), 401, 'unauthorized');
      expectRedirectToLogin(await strict.request(p, { headers: { Accept: HTML } }), p);
      expectRedirectToLogin(await strict.request(p, { headers: { Accept: 'text/html' } }), p);
    });
  }
  test('/api/version is public', async () => {
    expectJson(await strict.request('/api/version'));
    expectJson(await strict.request('/api/version', { headers: { Accept: HTML } }));
  });
  for (const [name, headers] of Object.entries<Record<string, string>>({
    'Bearer': { Authorization: 'Bearer anything' },
    'Basic': { Authorization: 'Basic ' + Buffer.from('admin:admin').toString('base64') },
    'server pm_session cookie': { Cookie: 'pm_session=abc' },
    'forged pm_agent_session': { Cookie: 'pm_agent_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    'X-Service-Proxy other value': { 'X-Service-Proxy': 'client' },
    'X-Forwarded-For loopback (allowance off)': { 'X-Forwarded-For': '127.0.0.1' },
  })) {
    test(`${name} is not a credential`, async () => {
      expectTextError(await strict.request('/devices/list', { headers }), 401, 'unauthorized');
    });
  }
  test('X-Service-Proxy: server is accepted', async () => {
    const list = expectJson(await strict.request('/devices/list', { headers: { 'X-Service-Proxy': 'server' } })) as unknown[];
    assert.equal(list.length, 1);
  });
  test('order of checks: authentication before 405 before 400', async () => {
    expectTextError(await strict.request('/api/devices/profile?serial=AUTH-1', { method: 'POST' }), 401, 'unauthorized');
    expectRedirectToLogin(await strict.request('/api/devices/profile', { method: 'POST', headers: { Accept: HTML } }), '/api/devices/profile');
    expectTextError(await strict.request('/api/devices/profile'), 401, 'unauthorized');
    expectTextError(await strict.request('/api/devices/metrics/history?since=x&until=y&serial=A'), 401, 'unauthorized');
    const proxy = { 'X-Service-Proxy': 'server' };
    expectTextError(await strict.request('/api/devices/profile', { method: 'POST', headers: proxy }), 405, 'GET only');
    expectTextError(await strict.request('/api/devices/profile', { headers: proxy }), 400, 'serial parameter required');
    expectTextError(await strict.request('/api/devices/profile?serial=NOPE', { headers: proxy }), 404, 'not found');
  });
  test('/api/version 405 needs no credential', async () => {
    expectTextError(await strict.request('/api/version', { method: 'POST' }), 405, 'GET only');
  });
  test('local mode has no password login', async () => {
    const r = await strict.request('/api/v1/auth/login', {
      method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'secret' }),
    });
    assert.equal(sessionCookie(r), undefined, `no session in local mode: ${show(r)}`);
    assert.ok(r.status >= 400, show(r));
    expectTextError(await strict.request('/devices/list', { headers: { Cookie: (r.headers['set-cookie'] ?? []).join('; ') } }), 401, 'unauthorized');
  });
});

// ---------------------------------------------------------------- disabled
describe('disabled mode', () => {
  for (const p of PROTECTED) {
    test(`${p} needs nothing`, async () => {
      expectJson(await disabled.request(p, { headers: { Accept: HTML } }));
      expectJson(await disabled.request(p, { headers: { Accept: 'application/json', Authorization: 'Bearer x' } }));
      expectJson(await disabled.request(p));
    });
  }
  test('method guard still applies', async () => {
    expectTextError(await disabled.request('/api/devices/profile?serial=AUTH-1', { method: 'DELETE' }), 405, 'GET only');
  });
});

// ---------------------------------------------------------------- server mode
const login = (a: Agent, username: string, password: string, extra: { http?: boolean; headers?: Record<string, string> } = {}) =>
  a.request('/api/v1/auth/login', {
    method: 'POST', http: extra.http,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(extra.headers ?? {}) },
    body: JSON.stringify({ username, password }),
  });

describe('server mode', () => {
  let aliceCookie = '';
  test('without a session: 401, or 302 to the login page', async () => {
    for (const p of PROTECTED) {
      expectTextError(await server.request(p), 401, 'unauthorized');
      expectRedirectToLogin(await server.request(p, { headers: { Accept: HTML } }), p, true);
    }
    expectJson(await server.request('/api/version'));
  });
  test('login is validated against the central server and sets pm_agent_session', async () => {
    const before = seen.length;
    const t0 = Date.now();
    const r = await login(server, 'alice', 'secret');
    assert.ok(r.status >= 200 && r.status < 400, show(r));
    const calls = seen.slice(before).filter((s) => s.url === '/api/v1/auth/login');
    assert.equal(calls.length, 1, 'one call to the server login');
    assert.equal(calls[0]!.method, 'POST');
    assert.deepEqual(JSON.parse(calls[0]!.body), { username: 'alice', password: 'secret' });
    const c = sessionCookie(r);
    assert.ok(c, `Set-Cookie pm_agent_session: ${JSON.stringify(r.headers['set-cookie'])}`);
    assert.match(c.value, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    assert.ok(![...tokens.keys()].includes(c.value), 'the cookie is not the server token');
    assert.equal(c.attrs.get('path'), '/');
    assert.ok(c.attrs.has('httponly'), 'HttpOnly');
    assert.equal(c.attrs.get('samesite')?.toLowerCase(), 'lax');
    assert.ok(c.attrs.has('secure'), 'Secure over HTTPS');
    const maxAge = Number(c.attrs.get('max-age'));
    assert.ok(maxAge > 2 * 3600 - 60 && maxAge <= 2 * 3600, `Max-Age from expires_at (2 h): ${maxAge}`);
    const expires = Date.parse(c.attrs.get('expires') ?? '');
    assert.ok(Math.abs(expires - (t0 + 2 * HOUR)) < 60_000, `Expires from expires_at: ${c.attrs.get('expires')}`);
    aliceCookie = `pm_agent_session=${c.value}`;
    expectJson(await server.request('/devices/list', { headers: { Cookie: aliceCookie } }));
    expectJson(await server.request('/api/devices/profile?serial=AUTH-1', { headers: { Cookie: aliceCookie, Accept: HTML } }));
  });
  test('each login gets its own session', async () => {
    const a = sessionCookie(await login(server, 'alice', 'secret'));
    const b = sessionCookie(await login(server, 'alice', 'secret'));
    assert.ok(a && b);
    assert.notEqual(a.value, b.value);
  });
  test('rejected credentials: no session', async () => {
    for (const [u, p] of [['alice', 'wrong'], ['mallory', 'secret'], ['', '']]) {
      const r = await login(server, u!, p!);
      assert.ok(r.status >= 400 && r.status < 500, show(r));
      assert.equal(sessionCookie(r), undefined);
    }
    const bad = await server.request('/api/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"username":' });
    assert.ok(bad.status >= 400 && bad.status < 500, show(bad));
    assert.equal(sessionCookie(bad), undefined);
  });
  test('server tokens and the server cookie are not local credentials', async () => {
    const r = await login(server, 'alice', 'secret');
    assert.ok(sessionCookie(r));
    const token = [...tokens.keys()].pop()!;
    expectTextError(await server.request('/devices/list', { headers: { Authorization: `Bearer ${token}` } }), 401, 'unauthorized');
    expectTextError(await server.request('/devices/list', { headers: { Cookie: `pm_session=${token}` } }), 401, 'unauthorized');
    expectTextError(await server.request('/devices/list', { headers: { Cookie: `pm_agent_session=${token}` } }), 401, 'unauthorized');
  });
  test('session expiry comes from the server expires_at', async () => {
    const c = sessionCookie(await login(server, 'short', 'secret'));
    assert.ok(c);
    const maxAge = Number(c.attrs.get('max-age'));
    assert.ok(maxAge >= 1 && maxAge <= 4, `Max-Age ${maxAge}`);
    expectJson(await server.request('/devices/list', { headers: { Cookie: `pm_agent_session=${c.value}` } }));
    await sleep(5000);
    expectTextError(await server.request('/devices/list', { headers: { Cookie: `pm_agent_session=${c.value}` } }), 401, 'unauthorized');
  });
  test('an expires_at already past, or unreadable, starts no session', async () => {
    expectTextError(await login(server, 'past', 'secret'), 502, 'central server login reply has an expires_at in the past');
    expectTextError(await login(server, 'garbled', 'secret'), 502, 'central server login reply has an unreadable expires_at');
  });
  test('an expires_at years ahead is capped at 30 days', async () => {
    const c = sessionCookie(await login(server, 'forever', 'secret'));
    assert.ok(c);
    assert.equal(Number(c.attrs.get('max-age')), 30 * 86400);
  });
  test('failed server-mode logins are rate-limited too', async () => {
    // From another loopback address, so the other tests' client is not the one locked out.
    const from = { localAddress: '127.0.0.77' };
    const attempt = () => server.request('/api/v1/auth/login', {
      ...from, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'bob', password: 'nope' }),
    });
    for (let i = 0; i < 5; i++) expectTextError(await attempt(), 401, 'invalid credentials');
    const before = seen.length;
    const r = await attempt();
    assert.equal(r.status, 429, show(r));
    assert.ok(Number(r.headers['retry-after']) >= 1);
    assert.equal(seen.length, before, 'a locked attempt is not forwarded to the central server');
  });
  test('24-hour fallback when the server gives no expires_at', async () => {
    const c = sessionCookie(await login(server, 'noexp', 'secret'));
    assert.ok(c);
    const maxAge = Number(c.attrs.get('max-age'));
    assert.ok(maxAge > 86400 - 60 && maxAge <= 86400, `Max-Age ${maxAge}`);
  });
  test('Secure follows HTTPS: plain HTTP without, X-Forwarded-Proto=https with', async () => {
    const plain = sessionCookie(await login(server, 'alice', 'secret', { http: true }));
    assert.ok(plain);
    assert.ok(!plain.attrs.has('secure'), 'no Secure over plain HTTP');
    assert.equal(plain.attrs.get('path'), '/');
    assert.ok(plain.attrs.has('httponly'));
    const fwd = sessionCookie(await login(server, 'alice', 'secret', { http: true, headers: { 'X-Forwarded-Proto': 'https' } }));
    assert.ok(fwd);
    assert.ok(fwd.attrs.has('secure'), 'Secure with X-Forwarded-Proto: https');
    expectJson(await server.request('/devices/list', { http: true, headers: { Cookie: `pm_agent_session=${plain.value}` } }));
  });
  test('callback: an unvalidated token creates no session', async () => {
    for (const t of ['bogus', '', 'srv-token-unknown']) {
      const r = await server.request(`/api/v1/auth/callback?token=${encodeURIComponent(t)}`);
      assert.equal(sessionCookie(r), undefined, `token ${JSON.stringify(t)}: ${show(r)}`);
      assert.ok(r.status !== 200 || !r.headers['set-cookie'], show(r));
    }
  });
  test('callback: a session only after the agent validated the token with the server', async () => {
    const r0 = await login(server, 'alice', 'secret');
    assert.ok(sessionCookie(r0));
    const token = [...tokens.keys()].pop()!;
    const before = seen.length;
    const r = await server.request(`/api/v1/auth/callback?token=${encodeURIComponent(token)}`);
    const asked = seen.slice(before).some((s) => JSON.stringify(s).includes(token));
    const c = sessionCookie(r);
    if (!asked) {
      assert.equal(c, undefined, 'a callback token the agent never validated must not create a session');
      return;
    }
    assert.ok(c, `validated callback creates a session: ${show(r)}`);
    assert.notEqual(c.value, token);
    assert.equal(c.attrs.get('path'), '/');
    assert.ok(c.attrs.has('httponly') && c.attrs.has('secure'));
    assert.equal(c.attrs.get('samesite')?.toLowerCase(), 'lax');
    expectJson(await server.request('/devices/list', { headers: { Cookie: `pm_agent_session=${c.value}` } }));
  });
  test('callback: return_to is followed only when it is a local path', async () => {
    const local = (loc: string) => loc.startsWith('/') && !loc.startsWith('//') && !loc.startsWith('/\\');
    for (const [rt, wanted] of [
      ['/devices/list?x=1', '/devices/list?x=1'], ['//evil.example/x', undefined], ['/\\evil.example/x', undefined],
      ['https://evil.example/x', undefined], ['evil.example', undefined],
    ] as const) {
      const r0 = await login(server, 'alice', 'secret');
      assert.ok(sessionCookie(r0));
      const token = [...tokens.keys()].pop()!;
      const r = await server.request(`/api/v1/auth/callback?token=${encodeURIComponent(token)}&return_to=${encodeURIComponent(rt)}`);
      if (r.status !== 302) continue; // the callback may answer without redirecting
      const loc = String(r.headers.location ?? '');
      assert.ok(local(loc), `return_to ${rt} -> Location ${loc}`);
      assert.ok(!loc.includes('evil.example'), `return_to ${rt} -> Location ${loc}`);
      if (wanted) assert.equal(loc, wanted);
    }
  });
  test('login page does not carry a non-local return_to', async () => {
    for (const bad of ['https://evil.example/x', '//evil.example/x', '/\\evil.example/x', 'evil.example']) {
      const r = await server.request(`/login?return_to=${encodeURIComponent(bad)}`, { headers: { Accept: HTML } });
      assert.ok(r.status < 500, show(r));
      assert.ok(!r.body.includes('evil.example'), `return_to ${bad} must not be used: ${show(r)}`);
      assert.ok(!String(r.headers.location ?? '').includes('evil.example'), `Location: ${r.headers.location}`);
    }
  });
  test('sessions outlast a restart, also those the central server vouched for', async () => {
    const c = sessionCookie(await login(server, 'alice', 'secret'));
    assert.ok(c);
    expectJson(await server.request('/devices/list', { headers: { Cookie: `pm_agent_session=${c.value}` } }));
    await server.restart();
    expectJson(await server.request('/devices/list', { headers: { Cookie: `pm_agent_session=${c.value}` } }));
  });
});
