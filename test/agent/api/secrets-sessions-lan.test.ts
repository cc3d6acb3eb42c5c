// Hostile site network: a session may not send the box's stored secrets somewhere new, and a
// session's event stream ends when the session does. A real agent in its own network namespace
// (password mode), the technician's browser and the attacker on "a laptop on the site network"
// (test/kit/lan.ts); the site's mail server and central server at 198.18.7.3, the
// attacker's at 198.18.7.2, both real servers that record what reaches them (lan-sinks.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli, writeConfig } from '../../kit/agent.js';
import { createLan, lanRequests, lanUnavailable, startAgentInBox, type BoxAgent, type Lan, type LanRequest, type LanResponse } from '../../kit/lan.js';
import { openLanEventStream, startLanSinks, type LanSinks } from '../../kit/lan-sinks.js';
import { until } from '../../kit/until.js';

const skip = lanUnavailable();
if (skip) console.log(`# secrets and sessions LAN tests skipped: ${skip}`);

const USER = 'tech';
let password = 'correct horse battery';
const SMTP_USER = 'printbox';
const SMTP_PASSWORD = 'mail-secret-Zq81';
const TOKEN = 'enroll-secret-Kx42';
const OPS = 'ops@example.test';
const SITE = '198.18.7.3';
const ATTACKER = '198.18.7.2';

describe('secrets and sessions against a host on the site network', { skip: skip ?? false }, () => {
  let lan: Lan;
  let sinks: LanSinks;
  let box: BoxAgent;
  const json = { 'Content-Type': 'application/json', Accept: 'application/json' };
  const fromLaptop = (reqs: LanRequest[]) => lanRequests(lan, lan.laptop, box.config.httpsPort, reqs);
  const one = async (r: LanRequest) => (await fromLaptop([r]))[0];
  const post = (path: string, body: unknown, cookie?: string): LanRequest => ({
    method: 'POST', path, headers: { ...json, ...(cookie ? { Cookie: cookie } : {}) }, body: JSON.stringify(body),
  });
  /** As the local admin on the box's own loopback. */
  const admin = async (path: string, body?: unknown): Promise<LanResponse> =>
    box.request(body === undefined ? { path, headers: { Accept: 'application/json' } } : post(path, body));
  const settings = async () => JSON.parse((await admin('/settings')).body) as any;
  const signIn = async (): Promise<string> => {
    const r = await one(post('/api/v1/auth/login', { username: USER, password }));
    assert.equal(r.status, 200, r.body);
    const cookie = (r.headers['set-cookie'] as string[]).find((c) => c.startsWith('pm_agent_session='));
    assert.ok(cookie);
    return cookie.split(';')[0];
  };
  const siteUrl = () => `https://${SITE}:${sinks.ports[SITE].https}`;
  const attackerUrl = () => `https://${ATTACKER}:${sinks.ports[ATTACKER].https}`;
  const mail = () => ({
    smtp_host: SITE, smtp_port: sinks.ports[SITE].smtp, smtp_security: 'starttls', smtp_user: SMTP_USER, smtp_from: 'box@example.test',
  });

  before(async () => {
    lan = createLan();
    sinks = await startLanSinks(lan, [ATTACKER, SITE]);
    const config = await writeConfig({
      authMode: 'password', allowLocalAdmin: true, listenAddress: '0.0.0.0',
      serverUrl: `https://${SITE}:${sinks.ports[SITE].https}`, server: { enrollment_token: TOKEN, ca_file: sinks.caFile },
    });
    const pw = await runCli(['passwd', USER], { configPath: config.configPath, input: password + '\n' });
    assert.equal(pw.code, 0, pw.stderr);
    box = await startAgentInBox(lan, { config });
    // The site's mail server, trusted through its certificate (ca_pem), with a password.
    const r = await admin('/settings', {
      notifications: { ...mail(), smtp_password: SMTP_PASSWORD, ca_pem: sinks.cert, digest_minutes: 0, recipients: [{ emails: [OPS] }] },
    });
    assert.equal(r.status, 200, r.body);
  });
  after(async () => {
    await box?.stop();
    sinks?.stop();
    lan?.destroy();
  });

  describe('an open event stream ends with its session', () => {
    const streamFor = async (cookie: string) => {
      const s = openLanEventStream(lan, box.config.httpsPort, cookie);
      await until('the stream to open', () => s.events().some((e) => e.event === 'connected') || (s.ended() ? assert.fail(`ended: ${s.ended()}`) : undefined));
      return s;
    };

    test('logout from another request ends the stream at once, with session_ended logout', async () => {
      const cookie = await signIn();
      const stream = await streamFor(cookie);
      try {
        assert.equal(stream.ended(), undefined, 'open before the logout');
        const out = await one(post('/api/v1/auth/logout', {}, cookie));
        assert.equal(out.status, 204, out.body);
        const why = await until('the stream to end', () => stream.ended());
        assert.equal(why, 'response complete', 'the box ended the response');
        assert.deepEqual(stream.events().at(-1), { event: 'session_ended', data: { reason: 'logout' } });
        const again = await one({ path: '/events', headers: { Cookie: cookie, Accept: 'text/event-stream' } });
        assert.equal(again.status, 401);
      } finally {
        stream.stop();
      }
    });

    test("a password change ends the account's other sessions' streams; the changing session's stays open", async () => {
      const changer = await signIn();
      const other = await signIn();
      const otherStream = await streamFor(other);
      const changerStream = await streamFor(changer);
      try {
        const next = 'another horse battery';
        const r = await one(post('/api/v1/auth/password', { current_password: password, new_password: next }, changer));
        assert.equal(r.status, 204, r.body);
        password = next;
        await until('the other stream to end', () => otherStream.ended());
        assert.deepEqual(otherStream.events().at(-1), { event: 'session_ended', data: { reason: 'password_changed' } });
        // Still open: the changing session's stream hears the next event. Logging it out ends it too.
        assert.equal(changerStream.ended(), undefined);
        assert.equal((await one(post('/api/v1/auth/logout', {}, changer))).status, 204);
        await until('the changing session’s stream to end', () => changerStream.ended());
        assert.deepEqual(changerStream.events().at(-1), { event: 'session_ended', data: { reason: 'logout' } });
      } finally {
        otherStream.stop();
        changerStream.stop();
      }
    });
  });

  describe('a stored secret does not follow a changed destination', () => {
    const sendTest = (cookie: string) => one(post('/api/notifications/test', { target: OPS }, cookie));
    const authsAt = (addr: string) => sinks.heard.filter((h) => h.kind === 'smtp_auth' && h.addr === addr);

    test('SMTP: moving the mail server without the password is refused and nothing reaches the new host; clearing or the password makes it go', async () => {
      const cookie = await signIn();
      const before = await settings();
      for (const change of [
        { smtp_host: ATTACKER, smtp_port: sinks.ports[ATTACKER].smtp },
        { smtp_port: sinks.ports[ATTACKER].smtp },
        { smtp_security: 'tls' },
        { smtp_allow_self_signed: true },
        { ca_pem: '' },
      ]) {
        const r = await one(post('/settings', { notifications: change }, cookie));
        assert.equal(r.status, 403, `${JSON.stringify(change)}: ${r.body}`);
        assert.match(r.body, /notifications\.smtp_password/);
        assert.match(r.body, new RegExp(`notifications\\.${Object.keys(change).at(-1)}`));
      }
      const wrong = await one(post('/settings', { current_password: 'not the password', notifications: { smtp_host: ATTACKER } }, cookie));
      assert.equal(wrong.status, 403);
      assert.match(wrong.body, /current_password is wrong/);
      assert.deepEqual((await settings()).notifications, before.notifications, 'nothing changed');

      // "Send a test" still goes to the site's server, with the password; the attacker hears nothing.
      const sent = JSON.parse((await sendTest(cookie)).body) as { results: { ok: boolean }[] };
      assert.equal(sent.results[0].ok, true, JSON.stringify(sent));
      assert.ok(authsAt(SITE).some((h) => h.password === SMTP_PASSWORD), 'the site server got the AUTH');
      assert.deepEqual(sinks.heard.filter((h) => h.addr === ATTACKER && h.kind.startsWith('smtp')), [], 'nothing reached the attacker');

      // Moved with the password cleared: accepted, and the test's AUTH carries no password.
      const cleared = await one(post('/settings', { notifications: { smtp_host: ATTACKER, smtp_port: sinks.ports[ATTACKER].smtp, smtp_password: null } }, cookie));
      assert.equal(cleared.status, 200, cleared.body);
      assert.equal(JSON.parse(cleared.body).notifications.smtp_password_set, false);
      await sendTest(cookie);
      await until('the attacker to be tried', () => sinks.heard.some((h) => h.addr === ATTACKER && h.kind === 'smtp_connect'));
      assert.ok(!sinks.heard.some((h) => h.password === SMTP_PASSWORD && h.addr === ATTACKER), 'the old password never reached the attacker');

      // The site's server again (the local admin gives the password), then moved with the account's password: it goes.
      assert.equal((await admin('/settings', { notifications: { ...mail(), smtp_password: SMTP_PASSWORD } })).status, 200);
      const moved = await one(post('/settings', { current_password: password, notifications: { smtp_host: ATTACKER, smtp_port: sinks.ports[ATTACKER].smtp } }, cookie));
      assert.equal(moved.status, 200, moved.body);
      assert.equal(JSON.parse(moved.body).notifications.smtp_password_set, true);
      await sendTest(cookie);
      assert.ok(authsAt(ATTACKER).some((h) => h.password === SMTP_PASSWORD), 'with the current password the change is the account holder’s');
      assert.equal((await admin('/settings', { notifications: { ...mail(), smtp_password: SMTP_PASSWORD } })).status, 200);
    });

    test('server.url: the enrollment token never reaches a new server URL without the password', async () => {
      const cookie = await signIn();
      const toAttacker = (h: { addr: string; kind: string }) => h.addr === ATTACKER && h.kind === 'https';
      const tokenSent = (h: { body?: string; path?: string; headers?: Record<string, string> }) =>
        `${h.body}${h.path}${JSON.stringify(h.headers)}`.includes(TOKEN);
      // The link is live, enrolling at the site's server with the token.
      await until('a registration at the site', () => sinks.heard.some((h) => h.addr === SITE && h.kind === 'https' && tokenSent(h)));

      const refused = await one(post('/settings', { server: { url: attackerUrl() } }, cookie));
      assert.equal(refused.status, 403, refused.body);
      assert.match(refused.body, /server\.url.*server\.enrollment_token/);
      const s = await settings();
      assert.equal(s.server.url, siteUrl());
      assert.equal(s.server.enrollment_token_set, true);

      // Cleared: the box goes to the new URL (registering without a token): the token is not in it.
      const cleared = await one(post('/settings', { server: { url: attackerUrl(), enrollment_token: null } }, cookie));
      assert.equal(cleared.status, 200, cleared.body);
      assert.equal(JSON.parse(cleared.body).server.enrollment_token_set, false);
      await until('a registration at the new URL', () => sinks.heard.some((h) => toAttacker(h) && h.path === '/api/v1/agents/register'));
      assert.deepEqual(sinks.heard.filter((h) => toAttacker(h) && tokenSent(h)), [], 'the token never reached the new URL');

      // Back to the site with the token (the local admin gives it), then moved with the account's password.
      assert.equal((await admin('/settings', { server: { url: siteUrl(), enrollment_token: TOKEN } })).status, 200);
      const moved = await one(post('/settings', { current_password: password, server: { url: attackerUrl() } }, cookie));
      assert.equal(moved.status, 200, moved.body);
      await until('the token at the new URL', () => sinks.heard.some((h) => toAttacker(h) && tokenSent(h)));
      // Unenrolling needs nothing: the token is then sent nowhere.
      assert.equal((await one(post('/settings', { server: { url: '' } }, cookie))).status, 200);
    });
  });
});
