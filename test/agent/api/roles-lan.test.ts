// Roles against a real agent in its own network namespace, in password mode, signed
// in from a laptop on the site network (not loopback: no local-admin rights): a viewer reads
// everything and every write is refused, for every route the agent registers (walked from the
// route table, so a route added later is covered); an admin manages the accounts, the last admin
// is kept, and a changed or removed account's sessions and event streams end at once;
// `printbox-agent passwd --role`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { routeTable } from '../../../src/api/app.js';
import { VIEWER_MAY_POST, VIEWER_REFUSAL } from '../../../src/auth/roles.js';
import { runCli, writeConfig, type TestConfig } from '../../kit/agent.js';
import { createLan, lanRequests, lanUnavailable, startAgentInBox, type BoxAgent, type Lan, type LanRequest } from '../../kit/lan.js';
import { openLanEventStream } from '../../kit/lan-sinks.js';
import { device, ndjson } from '../../kit/seed.js';
import { until } from '../../kit/until.js';

const skip = lanUnavailable();
if (skip) console.log(`# roles LAN tests skipped: ${skip}`);

const ADMIN = 'tech';
const ADMIN_PASSWORD = 'correct horse battery';
const VIEWER = 'office';
const VIEWER_PASSWORD = 'office staple battery';
const SERIAL = 'ROLE-1';
const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

describe('roles from a host on the site network', { skip: skip ?? false }, () => {
  let lan: Lan;
  let box: BoxAgent;
  let config: TestConfig;
  const json = { 'Content-Type': 'application/json', Accept: 'application/json' };
  const fromLaptop = (reqs: LanRequest[]) => lanRequests(lan, lan.laptop, box.config.httpsPort, reqs);
  const one = async (r: LanRequest) => (await fromLaptop([r]))[0];
  const post = (path: string, body: unknown, cookie?: string): LanRequest => ({
    method: 'POST', path, headers: { ...json, ...(cookie ? { Cookie: cookie } : {}) }, body: JSON.stringify(body),
  });
  const getAs = (path: string, cookie: string): LanRequest => ({ path, headers: { Accept: 'application/json', Cookie: cookie } });
  const signIn = async (username: string, password: string): Promise<string> => {
    const r = await one(post('/api/v1/auth/login', { username, password }));
    assert.equal(r.status, 200, `${username}: ${r.body}`);
    const cookie = (r.headers['set-cookie'] as string[]).find((c) => c.startsWith('pm_agent_session='));
    assert.ok(cookie);
    return cookie.split(';')[0];
  };
  /** What a refused write must leave as it was: the devices, the settings, the accounts (read by the local admin). */
  const state = async () => {
    const [devices, settings, accounts] = await box.requests(['/devices/list', '/settings', '/api/v1/accounts'].map((path) => ({ path, headers: { Accept: 'application/json' } })));
    return { devices: devices.body, settings: settings.body, accounts: accounts.body };
  };
  const streamFor = async (cookie: string) => {
    const s = openLanEventStream(lan, box.config.httpsPort, cookie);
    await until('the stream to open', () => s.events().some((e) => e.event === 'connected') || (s.ended() ? assert.fail(`ended: ${s.ended()}`) : undefined));
    return s;
  };

  before(async () => {
    lan = createLan();
    config = await writeConfig({ authMode: 'password', allowLocalAdmin: true, listenAddress: '0.0.0.0' });
    const pw = await runCli(['passwd', ADMIN], { configPath: config.configPath, input: ADMIN_PASSWORD + '\n' });
    assert.equal(pw.code, 0, pw.stderr);
    const vw = await runCli(['passwd', '--role', 'viewer', VIEWER], { configPath: config.configPath, input: VIEWER_PASSWORD + '\n' });
    assert.equal(vw.code, 0, vw.stderr);
    assert.match(vw.stdout, /password set for office \(role viewer\)/);
    box = await startAgentInBox(lan, { config, seed: ndjson([device(SERIAL, { ip: '198.18.7.9', is_saved: true, model: 'Role Printer' })]) });
  });
  after(async () => {
    await box?.stop();
    lan?.destroy();
  });

  test('who am I: the viewer, the admin and the loopback local admin', async () => {
    const viewer = await signIn(VIEWER, VIEWER_PASSWORD);
    const admin = await signIn(ADMIN, ADMIN_PASSWORD);
    const [v, a] = await fromLaptop([getAs('/api/v1/auth/me', viewer), getAs('/api/v1/auth/me', admin)]);
    assert.deepEqual(JSON.parse(v.body), { user: VIEWER, role: 'viewer', auth_mode: 'password', manage_accounts: false });
    assert.deepEqual(JSON.parse(a.body), { user: ADMIN, role: 'admin', auth_mode: 'password', manage_accounts: true });
    const local = await box.request({ path: '/api/v1/auth/me', headers: { Accept: 'application/json' } });
    assert.deepEqual(JSON.parse(local.body), { role: 'admin', auth_mode: 'password', manage_accounts: true });
  });

  test('a viewer is refused every write of every route the agent registers, and nothing changes', async () => {
    const viewer = await signIn(VIEWER, VIEWER_PASSWORD);
    const before = await state();
    // Every registered path (a parameter filled in), with every method that writes.
    const paths = [...new Set(routeTable().map((r) => r.path.replace(':serial', SERIAL).replace(':module', 'main.js').replace('*', 'index.html')))];
    assert.ok(paths.length > 40, `the route table has ${paths.length} paths`);
    const refused = paths.filter((p) => !VIEWER_MAY_POST.has(p));
    const reqs = refused.flatMap((path) => WRITE_METHODS.map((method) => ({ ...post(path, { serial: SERIAL, username: VIEWER, role: 'admin' }, viewer), method })));
    const answers = await fromLaptop(reqs);
    answers.forEach((r, i) => {
      assert.equal(r.status, 403, `${reqs[i].method} ${reqs[i].path}: ${r.status} ${r.body}`);
      assert.equal(r.body, VIEWER_REFUSAL + '\n', `${reqs[i].method} ${reqs[i].path}`);
    });
    // The paths a viewer may still send other methods to: the public ones (reachable without any
    // cookie: sign-in, sign-out, the version and the API's description) and its own password.
    assert.deepEqual(paths.filter((p) => VIEWER_MAY_POST.has(p)).sort(), [
      '/api/openapi.json', '/api/v1/auth/callback', '/api/v1/auth/login', '/api/v1/auth/logout', '/api/v1/auth/password',
      '/api/v1/auth/setup', '/api/version', '/favicon.ico', '/login', '/login.js',
    ]);
    // Refused before routing whatever the spelling the router accepts.
    for (const path of ['/Settings/', '/DEVICES/DELETE', '/api/v1/accounts/']) {
      const r = await one(post(path, { serial: SERIAL }, viewer));
      assert.equal(r.status, 403, `${path}: ${r.body}`);
    }
    assert.deepEqual(await state(), before, 'nothing changed');
    // The session still reads: refusals do not sign it out.
    assert.equal((await one(getAs('/devices/list', viewer))).status, 200);
  });

  test('a viewer reads what an admin reads: every GET route but the account list', async () => {
    const viewer = await signIn(VIEWER, VIEWER_PASSWORD);
    const admin = await signIn(ADMIN, ADMIN_PASSWORD);
    const gets = [...new Set(routeTable().filter((r) => r.method === undefined || r.method === 'GET').map((r) => r.path))]
      .filter((p) => !p.includes(':') && !p.includes('*'))
      .map((p) => (p.startsWith('/api/devices/') ? `${p}?serial=${SERIAL}` : p));
    // The event stream is read by its head here (a stream has no end); below, a whole stream.
    const ask = (cookie: string) => fromLaptop(gets.map((path) => ({ ...getAs(path, cookie), method: path === '/events' ? 'HEAD' : 'GET' })));
    const [asViewer, asAdmin] = [await ask(viewer), await ask(admin)];
    gets.forEach((path, i) => {
      if (path === '/api/v1/accounts') {
        assert.equal(asViewer[i].status, 403, asViewer[i].body);
        assert.equal(asAdmin[i].status, 200, asAdmin[i].body);
        return;
      }
      // The same answer as the admin's (a 403 only where the admin gets one too: the server-mode callback).
      assert.equal(asViewer[i].status, asAdmin[i].status, `GET ${path}: viewer ${asViewer[i].status} ${asViewer[i].body.slice(0, 200)}, admin ${asAdmin[i].status}`);
    });
    for (const path of ['/devices/list', '/settings', '/api/printers', '/backup', '/logs', `/api/devices/profile?serial=${SERIAL}`]) {
      assert.equal(asViewer[gets.indexOf(path)].status, 200, path);
    }
    assert.match(asViewer[gets.indexOf('/devices/list')].body, new RegExp(SERIAL));
    const stream = await streamFor(viewer);
    stream.stop();
    // The viewer's own password is theirs to change.
    const r = await one(post('/api/v1/auth/password', { current_password: VIEWER_PASSWORD, new_password: 'office staple battery 2' }, viewer));
    assert.equal(r.status, 204, r.body);
    const back = await one(post('/api/v1/auth/password', { current_password: 'office staple battery 2', new_password: VIEWER_PASSWORD }, viewer));
    assert.equal(back.status, 204, back.body);
  });

  test('an admin makes, changes and removes accounts; bad input is refused naming the field, and changes nothing', async () => {
    const admin = await signIn(ADMIN, ADMIN_PASSWORD);
    const list = async () => (JSON.parse((await one(getAs('/api/v1/accounts', admin))).body) as { accounts: { username: string; role: string }[] }).accounts
      .map((a) => `${a.username}:${a.role}`);
    assert.deepEqual(await list(), [`${VIEWER}:viewer`, `${ADMIN}:admin`]);
    const created = await one(post('/api/v1/accounts', { username: 'desk', password: 'desk lamp battery', role: 'viewer' }, admin));
    assert.equal(created.status, 201, created.body);
    assert.equal(JSON.parse(created.body).role, 'viewer');
    for (const [body, status, message] of [
      [{ username: 'desk', password: 'desk lamp battery', role: 'viewer' }, 409, /an account named "desk" exists already/],
      [{ username: 'Bad Name', password: 'desk lamp battery', role: 'viewer' }, 400, /username must be/],
      [{ username: 'other', password: 'short', role: 'viewer' }, 400, /password: password must have at least 8 characters/],
      [{ username: 'other', password: 'desk lamp battery', role: 'owner' }, 400, /field role must be one of admin, viewer/],
      [{ username: 'other', password: 'desk lamp battery' }, 400, /field role must be one of admin, viewer/],
    ] as const) {
      const r = await one(post('/api/v1/accounts', body, admin));
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.body}`);
      assert.match(r.body, message);
    }
    assert.deepEqual(await list(), ['desk:viewer', `${VIEWER}:viewer`, `${ADMIN}:admin`]);

    // The new viewer signs in; made an admin, its session ends at once, with its event stream.
    const desk = await signIn('desk', 'desk lamp battery');
    const stream = await streamFor(desk);
    try {
      const r = await one(post('/api/v1/accounts/update', { username: 'desk', role: 'admin' }, admin));
      assert.equal(r.status, 200, r.body);
      await until('the stream to end', () => stream.ended());
      assert.deepEqual(stream.events().at(-1), { event: 'session_ended', data: { reason: 'account_changed' } });
      assert.equal((await one(getAs('/devices/list', desk))).status, 401);
    } finally {
      stream.stop();
    }
    // A password reset: the old password stops working, sessions end, the new one signs in.
    const deskAdmin = await signIn('desk', 'desk lamp battery');
    const reset = await one(post('/api/v1/accounts/update', { username: 'desk', password: 'new desk lamp' }, admin));
    assert.equal(reset.status, 200, reset.body);
    assert.equal((await one(getAs('/devices/list', deskAdmin))).status, 401);
    assert.equal((await one(post('/api/v1/auth/login', { username: 'desk', password: 'desk lamp battery' }))).status, 401);
    const again = await signIn('desk', 'new desk lamp');
    assert.equal(JSON.parse((await one(getAs('/api/v1/auth/me', again))).body).role, 'admin');
    for (const [body, status, message] of [
      [{ username: 'desk' }, 400, /give role, password or both/],
      [{ username: 'nobody', role: 'viewer' }, 404, /no account named "nobody"/],
      [{ username: 'desk', role: 'root' }, 400, /field role must be one of admin, viewer/],
    ] as const) {
      const r = await one(post('/api/v1/accounts/update', body, admin));
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.body}`);
      assert.match(r.body, message);
    }
    // Removed: its session and stream end at once.
    const removedStream = await streamFor(again);
    try {
      const r = await one(post('/api/v1/accounts/delete', { username: 'desk' }, admin));
      assert.equal(r.status, 204, r.body);
      await until('the stream to end', () => removedStream.ended());
      assert.deepEqual(removedStream.events().at(-1), { event: 'session_ended', data: { reason: 'account_removed' } });
    } finally {
      removedStream.stop();
    }
    assert.equal((await one(getAs('/devices/list', again))).status, 401);
    assert.equal((await one(post('/api/v1/accounts/delete', { username: 'desk' }, admin))).status, 404);
    assert.deepEqual(await list(), [`${VIEWER}:viewer`, `${ADMIN}:admin`]);
  });

  test('the last admin can be neither removed nor made a viewer (API and CLI); a second admin makes it possible', async () => {
    const admin = await signIn(ADMIN, ADMIN_PASSWORD);
    for (const [path, body] of [['/api/v1/accounts/delete', { username: ADMIN }], ['/api/v1/accounts/update', { username: ADMIN, role: 'viewer' }]] as const) {
      const r = await one(post(path, body, admin));
      assert.equal(r.status, 409, `${path}: ${r.body}`);
      assert.equal(r.body, `${ADMIN} is the last admin: the box must keep at least one admin: make another account an admin first. Nothing was changed\n`);
    }
    const cli = await runCli(['passwd', '--role', 'viewer', ADMIN], { configPath: config.configPath, input: 'some new password\n' });
    assert.equal(cli.code, 1, cli.stdout);
    assert.match(cli.stderr, /tech is the last admin: .*; nothing changed/);
    assert.equal((await one(getAs('/devices/list', admin))).status, 200, 'the refused CLI change ended no session');
    assert.equal((await one(post('/api/v1/auth/login', { username: ADMIN, password: ADMIN_PASSWORD }))).status, 200, 'nor changed the password');
    const bad = await runCli(['passwd', '--role', 'owner', ADMIN], { configPath: config.configPath, input: 'x\n' });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--role must be one of admin, viewer, got "owner"/);

    // The loopback local admin manages accounts too: it makes a second admin, and then the first may go.
    const made = await box.request(post('/api/v1/accounts', { username: 'boss', password: 'boss desk battery', role: 'admin' }));
    assert.equal(made.status, 201, made.body);
    const demoted = await one(post('/api/v1/accounts/update', { username: ADMIN, role: 'viewer' }, admin));
    assert.equal(demoted.status, 200, demoted.body);
    assert.equal((await one(getAs('/devices/list', admin))).status, 401, 'the demotion ended its session');
    // Made an admin again from the shell: the CLI's --role on an existing account.
    const promoted = await runCli(['passwd', '--role', 'admin', ADMIN], { configPath: config.configPath, input: ADMIN_PASSWORD + '\n' });
    assert.equal(promoted.code, 0, promoted.stderr);
    const back = await signIn(ADMIN, ADMIN_PASSWORD);
    assert.equal(JSON.parse((await one(getAs('/api/v1/auth/me', back))).body).role, 'admin');
    // Without --role, the CLI keeps the role an account has.
    const keep = await runCli(['passwd', VIEWER], { configPath: config.configPath, input: VIEWER_PASSWORD + '\n' });
    assert.equal(keep.code, 0, keep.stderr);
    const viewer = await signIn(VIEWER, VIEWER_PASSWORD);
    assert.equal(JSON.parse((await one(getAs('/api/v1/auth/me', viewer))).body).role, 'viewer');
    assert.equal((await one(post('/api/v1/accounts/delete', { username: 'boss' }, back))).status, 204);
  });
});
