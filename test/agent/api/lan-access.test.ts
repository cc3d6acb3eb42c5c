// Every way in, tried from "a laptop on the site network": a real agent in its own network
// namespace, requests from another namespace over a veth pair (test/kit/lan.ts), so the TCP
// peer is a real non-loopback address. Each route the app registers is tried in every path form
// (`//x`, `///x`, `/%2Fx`, `/./x`, `/../`, absolute form ...), with forged forwarding headers, and
// with forged cookies: each must be refused (400 or 401) and must change nothing. The same
// forwarding headers from a trusted proxy follow the contract (5.4, 5.5).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli, writeConfig } from '../../kit/agent.js';
import { createLan, lanRequests, lanUnavailable, startAgentInBox, type BoxAgent, type Lan, type LanRequest, type LanResponse } from '../../kit/lan.js';
import { device, ndjson } from '../../kit/seed.js';
import { routeTable } from '../../../src/api/app.js';
import { PUBLIC_PATHS } from '../../../src/auth/gate.js';

const skip = lanUnavailable();
if (skip) console.log(`# LAN access tests skipped: ${skip}`);

// The seeded printer sits at an address inside the test's namespace subnet where nothing answers:
// were a poll to get through, it would go nowhere.
const SEED = ndjson([device('LAN-1', { ip: '198.18.7.50', is_saved: true, location: 'hall' })]);
const PASSWORD = 'correct horse battery';
const FORGED_HEADERS: Record<string, Record<string, string>> = {
  'X-Forwarded-For 127.0.0.1': { 'X-Forwarded-For': '127.0.0.1' },
  'X-Forwarded-For ::1': { 'X-Forwarded-For': '::1' },
  'X-Forwarded-For 127.0.0.1 with X-Forwarded-Proto https': { 'X-Forwarded-For': '127.0.0.1', 'X-Forwarded-Proto': 'https' },
  'X-Real-IP 127.0.0.1': { 'X-Real-IP': '127.0.0.1' },
  'Forwarded for=127.0.0.1': { Forwarded: 'for=127.0.0.1' },
  'X-Service-Proxy server': { 'X-Service-Proxy': 'server' },
};
const FORGED_COOKIES = [
  'pm_agent_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  'pm_agent_session=',
  'pm_session=abc',
  'pm_agent_session=x; pm_agent_session=y',
];

/** A request for a route that would change something if it got through. */
function attempt(method: string, target: string, headers: Record<string, string> = {}): LanRequest {
  const body =
    method === 'GET'
      ? undefined
      : JSON.stringify({ serial: 'LAN-1', location: 'stolen', discovery: { manual_ranges: true, ranges_text: '198.18.7.60' } });
  return { method, path: target, headers: { Accept: 'application/json', 'Content-Type': 'application/json', ...headers }, body };
}

/** Every non-canonical spelling of a path that a router might still match. */
function pathForms(path: string, port: number): { target: string; canonical: boolean }[] {
  const rest = path.slice(1);
  return [
    { target: path, canonical: true },
    { target: `https://198.18.7.1:${port}${path}`, canonical: true },
    ...(path === '/' ? [] : [{ target: `${path}/`, canonical: true }]),
    { target: path.toUpperCase(), canonical: true },
    { target: `/${path}`, canonical: false },
    { target: `//${path}`, canonical: false },
    { target: `/%2F${rest}`, canonical: false },
    { target: `/%2f${rest}`, canonical: false },
    { target: `/.${path}`, canonical: false },
    { target: `/x/..${path}`, canonical: false },
    { target: `/%2E${path}`, canonical: false },
    { target: `/\\${rest}`, canonical: false },
    { target: `https://198.18.7.1:${port}/${path}`, canonical: false },
  ];
}

const PROTECTED = routeTable().filter((r) => !PUBLIC_PATHS.has(r.path));

function expectRefused(r: LanResponse, what: string): void {
  assert.ok(r.status === 400 || r.status === 401, `${what}: ${r.status} ${JSON.stringify(r.body.slice(0, 200))}`);
  if (r.status === 401) assert.equal(r.body, 'unauthorized\n', what);
  assert.equal(r.headers['set-cookie'], undefined, `${what}: no cookie`);
}

describe('from a laptop on the site network', { skip: skip ?? false }, () => {
  let lan: Lan;
  let box: BoxAgent; // password mode, loopback local admin, default trusted proxies (loopback only)
  let proxied: BoxAgent; // local mode, 198.18.7.3 is a trusted proxy
  let before_: { devices: string; settings: string };
  const fromLaptop = (reqs: LanRequest[], agent = box) => lanRequests(lan, lan.laptop, agent.config.httpsPort, reqs);
  const state = async () => {
    const [devices, settings] = await box.requests([{ path: '/devices/list' }, { path: '/settings' }]);
    assert.equal(devices.status, 200, devices.body);
    // `storage` is measured (free space, every minute), not set: another process writing to the
    // disk changes it while these tests run.
    const { storage: _measured, ...set } = JSON.parse(settings.body) as Record<string, unknown>;
    return { devices: devices.body, settings: JSON.stringify(set) };
  };

  before(async () => {
    lan = createLan();
    const config = await writeConfig({ authMode: 'password', allowLocalAdmin: true, listenAddress: '0.0.0.0' });
    const pw = await runCli(['passwd', 'tech'], { configPath: config.configPath, input: PASSWORD + '\n' });
    assert.equal(pw.code, 0, pw.stderr);
    [box, proxied] = await Promise.all([
      startAgentInBox(lan, { config, seed: SEED }),
      startAgentInBox(lan, { authMode: 'local', allowLocalAdmin: true, trustedProxies: ['198.18.7.3/32'], seed: SEED }),
    ]);
    before_ = await state();
    assert.match(before_.devices, /LAN-1/);
  });
  after(async () => {
    await Promise.all([box?.stop(), proxied?.stop()]);
    lan?.destroy();
  });

  test('the app registers the routes this test walks', () => {
    const paths = PROTECTED.map((r) => r.path);
    for (const p of ['/devices/list', '/devices/delete', '/settings', '/events', '/discover', '/logs', '/']) assert.ok(paths.includes(p), p);
  });

  test('every protected route, in every path form: 400 or 401, nothing changed', async () => {
    const port = box.config.httpsPort;
    const cases = PROTECTED.flatMap((r) =>
      pathForms(r.path, port).map((f) => ({ ...f, route: r, req: attempt(r.method ?? 'GET', f.target) })),
    );
    const answers = await fromLaptop(cases.map((c) => c.req));
    cases.forEach((c, i) => {
      const what = `${c.req.method} ${c.target}`;
      expectRefused(answers[i], what);
      // A path that is not canonical never reaches authentication or the router.
      if (!c.canonical) assert.equal(answers[i].status, 400, `${what}: ${answers[i].body}`);
    });
    assert.deepEqual(await state(), before_);
  });

  test('forged forwarding headers from an untrusted peer count for nothing', async () => {
    const cases = PROTECTED.flatMap((r) =>
      Object.entries(FORGED_HEADERS).map(([name, headers]) => ({ name, req: attempt(r.method ?? 'GET', r.path, headers) })),
    );
    const answers = await fromLaptop(cases.map((c) => c.req));
    cases.forEach((c, i) => expectRefused(answers[i], `${c.req.method} ${c.req.path} with ${c.name}`));
    assert.deepEqual(await state(), before_);
  });

  test('forged cookies and foreign credentials are not sessions', async () => {
    const cases = PROTECTED.flatMap((r) => [
      ...FORGED_COOKIES.map((cookie) => attempt(r.method ?? 'GET', r.path, { Cookie: cookie })),
      attempt(r.method ?? 'GET', r.path, { Authorization: 'Bearer anything' }),
      attempt(r.method ?? 'GET', r.path, { Authorization: 'Basic ' + Buffer.from(`tech:${PASSWORD}`).toString('base64') }),
    ]);
    const answers = await fromLaptop(cases);
    cases.forEach((c, i) => expectRefused(answers[i], `${c.method} ${c.path} with ${JSON.stringify(c.headers)}`));
    assert.deepEqual(await state(), before_);
  });

  test('public paths answer without credentials', async () => {
    const [version, login, script, openapi, shouted, doubled] = await fromLaptop([
      { path: '/api/version' }, { path: '/login' }, { path: '/login.js' },
      { path: '/api/openapi.json' }, { path: '/API/OPENAPI.JSON' }, { path: '//api/openapi.json' },
    ]);
    assert.equal(version.status, 200);
    assert.equal(openapi.status, 200);
    assert.match(openapi.body, /"openapi":"3\.1\.0"/);
    // Public means that exact path: other spellings the router would accept still need a credential.
    assert.equal(shouted.status, 401, shouted.body);
    assert.equal(doubled.status, 400, doubled.body);
    assert.equal(login.status, 200);
    assert.match(login.body, /data-endpoint="\/api\/v1\/auth\/login"/);
    assert.equal(script.status, 200);
  });

  test('a browser without a session is sent to the login page', async () => {
    const [r] = await fromLaptop([{ path: '/settings', headers: { Accept: 'text/html' } }]);
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, 'login?return_to=%2Fsettings');
  });

  test('the technician signs in with the password and then gets in from the laptop', async () => {
    const [wrong, right] = await fromLaptop([
      { method: 'POST', path: '/api/v1/auth/login', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'tech', password: 'wrong password' }) },
      { method: 'POST', path: '/api/v1/auth/login', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'tech', password: PASSWORD }) },
    ]);
    assert.equal(wrong.status, 401, wrong.body);
    assert.equal(right.status, 200, right.body);
    const cookie = (right.headers['set-cookie'] as string[])[0];
    assert.match(cookie, /^pm_agent_session=[A-Za-z0-9_-]{43}; /);
    assert.match(cookie, /; Secure/);
    const session = cookie.split(';')[0];
    const [list, doubled] = await fromLaptop([
      { path: '/devices/list', headers: { Cookie: session } },
      { path: '//devices/list', headers: { Cookie: session } },
    ]);
    assert.equal(list.status, 200, list.body);
    assert.match(list.body, /LAN-1/);
    assert.equal(doubled.status, 400, 'a non-canonical path is refused even with a session');

    // Cross-site request forgery: the session's browser, driven by a page of another origin.
    const here = `https://${lan.boxAddress}:${box.config.httpsPort}`;
    const change = (headers: Record<string, string>) => ({
      method: 'POST',
      path: '/settings',
      headers: { Cookie: session, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ collection: { interval_minutes: 42 } }),
    });
    const forged = await fromLaptop([
      change({ Origin: 'https://evil.example' }),
      change({ Origin: `http://${lan.boxAddress}:${box.config.httpsPort}` }), // another scheme
      change({ Origin: `https://${lan.boxAddress}:${box.config.httpPort}` }), // another port of the box
      change({ Origin: 'null' }),
      change({ 'Sec-Fetch-Site': 'cross-site' }),
      change({ 'Sec-Fetch-Site': 'same-site', Origin: here }),
    ]);
    for (const r of forged) {
      assert.equal(r.status, 403, r.body);
      assert.match(r.body, /^cross-origin request refused: /);
    }
    assert.equal((await state()).settings, before_.settings, 'nothing changed');
    const [own, noOrigin] = await fromLaptop([change({ Origin: here, 'Sec-Fetch-Site': 'same-origin' }), change({})]);
    assert.equal(own.status, 200, own.body);
    assert.equal(noOrigin.status, 200, 'a client that is not a browser sends no Origin');
    assert.match(own.body, /"interval_minutes":42/);
  });

  describe('behind a trusted proxy (web.auth.trusted_proxies = ["198.18.7.3/32"])', () => {
    const via = (from: string, headers: Record<string, string>) =>
      lanRequests(lan, from, proxied.config.httpsPort, [{ path: '/devices/list', headers: { Accept: 'application/json', ...headers } }]).then((r) => r[0]);

    test('a loopback first X-Forwarded-For is the local admin (contract 5.4)', async () => {
      assert.equal((await via(lan.proxyLaptop, { 'X-Forwarded-For': '127.0.0.1, 198.18.7.9' })).status, 200);
      assert.equal((await via(lan.proxyLaptop, { 'X-Forwarded-For': '198.18.7.9, 127.0.0.1' })).status, 401);
      assert.equal((await via(lan.proxyLaptop, {})).status, 401);
    });
    test('X-Service-Proxy: server is accepted (contract 5.5)', async () => {
      assert.equal((await via(lan.proxyLaptop, { 'X-Service-Proxy': 'server' })).status, 200);
      assert.equal((await via(lan.proxyLaptop, { 'X-Service-Proxy': 'client' })).status, 401);
    });
    test('the same headers from a peer outside the list are ignored', async () => {
      for (const headers of Object.values(FORGED_HEADERS)) assert.equal((await via(lan.laptop, headers)).status, 401, JSON.stringify(headers));
    });
    test('ignored headers are logged at debug level only', () => {
      assert.doesNotMatch(proxied.stdout(), /"level":(40|50).*forwarding headers/);
    });
  });
});
