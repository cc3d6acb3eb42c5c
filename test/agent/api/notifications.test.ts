// Notifications through the real agent: e-mail to a real SMTP server (smtp-server,
// STARTTLS or TLS from the start, AUTH, a self-signed certificate the test makes) and webhooks to a
// real HTTP receiver that checks the HMAC signature. The agent runs in the box namespace of a test
// LAN (kit/lan.ts): it never sends a webhook to loopback or to itself, so the receivers, here in
// the test, are reached at a laptop's address (198.18.7.2) through relays (kit/ns-relay.ts); the
// mail servers are relayed to the box's own 127.0.0.1. Alerts open the way
// test/agent/api/alerts.test.ts opens its offline alert: saved printers that stopped answering, here
// judged again when `alerts.offline_after_minutes` changes. The outbox is tried across a mail
// server that answers 451, one that is down, and a kill -9 of the agent. Nothing leaves 127.0.0.0/8
// and the test's own namespaces.
import { test as nodeTest, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeConfig, expectJson, expectTextError, type Agent, type TestConfig } from '../../kit/agent.js';
import { device, ndjson, MINUTE } from '../../kit/seed.js';
import { until } from '../../kit/until.js';
import { loopbackCertificate, startSmtp, type SmtpServer } from '../../kit/smtp.js';
import { createLan, lanUnavailable, type Lan } from '../../kit/lan.js';
import { relayInto, startAgentInLan, type Relay } from '../../kit/ns-relay.js';

const lanSkip = lanUnavailable();
if (lanSkip) console.log(`# notification tests skipped: ${lanSkip}`);
const test = lanSkip ? nodeTest.skip : nodeTest;
/** Where the box reaches the test's webhook receivers: a laptop on the site network. */
const RECEIVER_HOST = '198.18.7.2';

const SERIALS = ['NOTIFY-1', 'NOTIFY-2', 'NOTIFY-3'];
const PASSWORD = 'smtp-password-7f3a9c';
const SECRET = 'webhook-secret-51d0e2b8';
const OPS = 'ops@example.test';
const SMTP_USER = 'printbox';

let cert: { cert: string; key: string };
let smtp: SmtpServer;
let smtpTls: SmtpServer;
let cfg: TestConfig;
let agent: Agent;

interface Hook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The signature matched HMAC-SHA256(secret, `<timestamp>.<body>`) and the timestamp is recent. */
  valid: boolean;
}
const hooks: Hook[] = [];
let receiver: http.Server;
let receiverPort = 0;
let lan: Lan;
const relays: Relay[] = [];

function verify(headers: http.IncomingHttpHeaders, body: string): boolean {
  const ts = Number(headers['x-printbox-timestamp']);
  const sig = String(headers['x-printbox-signature'] ?? '');
  if (!Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > 300) return false;
  const want = Buffer.from('sha256=' + createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex'));
  const got = Buffer.from(sig);
  return got.length === want.length && timingSafeEqual(got, want);
}

const settings = async () => expectJson(await agent.get('/settings')) as any;
const outbox = async () => expectJson(await agent.get('/api/notifications/outbox?limit=500')) as any;
const hookUrl = (path: string) => `http://${RECEIVER_HOST}:8080${path}`;
const mailsAbout = (serial: string) => smtp.received.filter((m) => m.raw.includes(serial));

/** Opens an offline alert for each seeded printer (silent 30 minutes, rule 10), after clearing any. */
async function openOfflineAlerts(): Promise<any[]> {
  expectJson(await agent.post('/settings', { alerts: { offline_after_minutes: 60 } }));
  await until('offline alerts cleared', async () => {
    const open = (expectJson(await agent.get('/api/alerts')) as any[]).filter((a) => SERIALS.includes(a.serial));
    return open.length === 0;
  });
  expectJson(await agent.post('/settings', { alerts: { offline_after_minutes: 10 } }));
  return until('three offline alerts', async () => {
    const open = (expectJson(await agent.get('/api/alerts')) as any[]).filter((a) => SERIALS.includes(a.serial) && a.kind === 'offline');
    return open.length === 3 ? open : undefined;
  });
}

const MAIL = () => ({
  smtp_host: '127.0.0.1',
  smtp_port: smtp.port,
  smtp_security: 'starttls',
  smtp_user: SMTP_USER,
  smtp_from: 'printbox@example.test',
});

before(async () => {
  if (lanSkip) return;
  lan = createLan();
  cert = await loopbackCertificate([RECEIVER_HOST]);
  smtp = await startSmtp({ ...cert, users: { [SMTP_USER]: PASSWORD } });
  smtpTls = await startSmtp({ ...cert, users: { [SMTP_USER]: PASSWORD }, implicitTls: true });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      hooks.push({ path: req.url ?? '', headers: req.headers, body, valid: verify(req.headers, body) });
      if (req.url === '/moved') {
        res.writeHead(302, { Location: hookUrl('/elsewhere') });
        return res.end();
      }
      res.writeHead(req.url === '/hook' ? 204 : 404);
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverPort = (receiver.address() as { port: number }).port;
  relays.push(await relayInto(lan.laptopNs, RECEIVER_HOST, 8080, receiverPort));

  cfg = await writeConfig();
  // Short retries, so a retry is seen in seconds: 0.5 s, 1 s, 2 s, 4 s, then failed.
  appendFileSync(cfg.configPath, '\n[notifications]\nretry_first_ms = 500\nmax_attempts = 5\n');
  const silent = Date.now() - 30 * MINUTE;
  agent = await startAgentInLan(lan, {
    config: cfg,
    expose: [smtp.port, smtpTls.port],
    // Named as a technician knows them: the messages say the model, location and address.
    seed: ndjson(SERIALS.map((s, i) => device(s, { ip: `127.0.36.${210 + i}`, is_saved: true, last_seen: silent, manufacturer: 'Kyocera', model: `ECOSYS P20${40 + i}dn`, location: `Floor ${i + 1}` }))),
  });
});

after(async () => {
  await agent?.stop();
  await smtp?.stop();
  await smtpTls?.stop();
  receiver?.close();
  for (const r of relays) r.stop();
  lan?.destroy();
});

test('defaults shown; bad values are a 400 naming the field and change nothing', async () => {
  const before = await settings();
  assert.deepEqual(before.notifications, {
    smtp_host: '', smtp_port: 587, smtp_security: 'starttls', smtp_user: '', smtp_password: '', smtp_from: '', ca_pem: '', smtp_allow_self_signed: false,
    webhook_secret: '', digest_minutes: 5, recipients: [], smtp_password_set: false, webhook_secret_set: false,
  });
  const cases: [unknown, string][] = [
    [{ smtp_port: 0 }, 'notifications.smtp_port must be an integer from 1 to 65535'],
    [{ smtp_security: 'ssl' }, 'notifications.smtp_security must be one of starttls, tls, none'],
    [{ smtp_host: 'mail server' }, 'notifications.smtp_host must be a host name or IP address, or "" (no e-mail)'],
    [{ smtp_from: 'nobody' }, 'notifications.smtp_from must be an e-mail address (name@host)'],
    [{ digest_minutes: -1 }, 'notifications.digest_minutes must be an integer from 0 to 1440'],
    [{ ca_pem: 'not a certificate' }, 'notifications.ca_pem is not a PEM certificate (-----BEGIN CERTIFICATE-----)'],
    [{ recipients: [{ emails: [] }] }, 'notifications.recipients[0] must name at least one e-mail address or webhook'],
    [{ recipients: [{ kinds: ['flood'], emails: [OPS] }] }, 'notifications.recipients[0].kinds must be one of supply_low, supply_empty_soon, jam, door_open, paper_out, service_requested, offline, counter_backwards'],
    [{ recipients: [{ emails: ['a@b@c'] }] }, 'notifications.recipients[0].emails must be an e-mail address (name@host)'],
    [{ recipients: [{ webhooks: ['file:///etc/passwd'] }], webhook_secret: SECRET }, 'notifications.recipients[0].webhooks must be an http:// or https:// URL'],
    [{ recipients: [{ webhooks: ['ftp://127.0.0.1/x'] }], webhook_secret: SECRET }, 'notifications.recipients[0].webhooks must be an http:// or https:// URL'],
    [{ recipients: [{ webhooks: ['https://u:p@127.0.0.1/x'] }], webhook_secret: SECRET }, 'notifications.recipients[0].webhooks must not carry a user name or password (the request is signed with webhook_secret)'],
    // The receiver where it really listens, on the test's loopback: loopback is never a webhook's target.
    [{ recipients: [{ webhooks: [`http://127.0.0.1:${receiverPort}/hook`] }], webhook_secret: SECRET }, 'notifications.recipients[0].webhooks must not name a loopback address (127.0.0.0/8): alerts go to another host'],
    [{ recipients: [{ webhooks: [hookUrl('/hook')] }] }, 'notifications.webhook_secret must be set: a rule names webhooks'],
    [{ recipients: [{ emails: [OPS] }] }, 'notifications.smtp_host must be set: a rule names e-mail addresses'],
    [{ smtp_security: 'none', smtp_user: 'x' }, 'notifications.smtp_security must be starttls or tls when smtp_user is set (the password would cross the network in clear)'],
    [{ recipients: [{ emails: [OPS], cc: [] }] }, 'unknown setting notifications.recipients[0].cc'],
    [{ bogus: 1 }, 'unknown setting notifications.bogus'],
  ];
  for (const [n, message] of cases) expectTextError(await agent.post('/settings', { notifications: n }), 400, message);
  assert.deepEqual(await settings(), before, 'nothing changed');
});

test('secrets are write-only: shown as "" and set/not set, kept when sent back as "", never in a response or the log', async () => {
  const s = expectJson(
    await agent.post('/settings', {
      notifications: { ...MAIL(), smtp_password: PASSWORD, webhook_secret: SECRET, digest_minutes: 0, recipients: [{ emails: [OPS], webhooks: [hookUrl('/hook')] }] },
    }),
  ) as any;
  assert.equal(s.notifications.smtp_password, '');
  assert.equal(s.notifications.webhook_secret, '');
  assert.equal(s.notifications.smtp_password_set, true);
  assert.equal(s.notifications.webhook_secret_set, true);
  // The UI sends the shown form back: "" and the read-only flags keep what is stored.
  const again = expectJson(await agent.post('/settings', { notifications: (await settings()).notifications })) as any;
  assert.equal(again.notifications.smtp_password_set, true);
  assert.equal(again.notifications.webhook_secret_set, true);
  for (const path of ['/settings', '/api/notifications/outbox', '/logs?tail=2000']) {
    const body = (await agent.get(path)).body;
    assert.ok(!body.includes(PASSWORD) && !body.includes(SECRET), `${path} carries no secret`);
  }
  assert.ok(!agent.stdout().includes(PASSWORD) && !agent.stdout().includes(SECRET), 'the log carries no secret');
});

test('send a test: certificates are verified (a self-signed one fails until trusted as ca_pem); then e-mail over STARTTLS with AUTH and a signed webhook', async () => {
  const refused = expectJson(await agent.post('/api/notifications/test', {})) as any;
  const mail = refused.results.find((r: any) => r.channel === 'email');
  assert.equal(mail.ok, false);
  assert.match(mail.error, /self[- ]signed|certificate/i, mail.error);
  assert.equal(smtp.received.length, 0, 'nothing sent over an unverified connection');

  // Trusting a certificate changes who may receive the stored password: it is given again.
  expectJson(await agent.post('/settings', { notifications: { ca_pem: cert.cert, smtp_password: PASSWORD } }));
  const ok = expectJson(await agent.post('/api/notifications/test', {})) as any;
  assert.deepEqual(
    ok.results.map((r: any) => [r.channel, r.target, r.ok]).sort(),
    [['email', OPS, true], ['webhook', hookUrl('/hook'), true]],
    JSON.stringify(ok.results),
  );
  assert.equal(smtp.received.length, 1);
  const m = smtp.received[0];
  assert.equal(m.secure, true, 'STARTTLS before the message');
  assert.equal(m.user, SMTP_USER, 'signed in');
  assert.deepEqual(m.to, [OPS]);
  assert.match(m.subject, /test message/);
  const hook = hooks.at(-1)!;
  assert.equal(hook.valid, true, 'the receiver verified the signature');
  assert.equal(JSON.parse(hook.body).event, 'test');

  // One recipient only; anything else is refused.
  const one = expectJson(await agent.post('/api/notifications/test', { target: OPS })) as any;
  assert.deepEqual(one.results.map((r: any) => r.target), [OPS]);
  expectTextError(await agent.post('/api/notifications/test', { target: 'other@example.test' }), 400, 'field target must be one of the e-mail addresses or webhooks in notifications.recipients');
  expectTextError(await agent.post('/api/notifications/test', { to: OPS }), 400, 'unknown field to');

  // A webhook over https, verified against ca_pem (the receiver's self-signed certificate).
  const secureHooks: Hook[] = [];
  const secure = https.createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      secureHooks.push({ path: req.url ?? '', headers: req.headers, body, valid: verify(req.headers, body) });
      res.writeHead(200);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
  const secureRelay = await relayInto(lan.laptopNs, RECEIVER_HOST, 8443, (secure.address() as { port: number }).port);
  try {
    const secureUrl = `https://${RECEIVER_HOST}:8443/hook`;
    expectJson(await agent.post('/settings', { notifications: { recipients: [{ emails: [OPS], webhooks: [hookUrl('/hook'), secureUrl] }] } }));
    const viaHttps = expectJson(await agent.post('/api/notifications/test', { target: secureUrl })) as any;
    assert.deepEqual(viaHttps.results, [{ channel: 'webhook', target: secureUrl, ok: true }]);
    assert.equal(secureHooks.length, 1);
    assert.equal(secureHooks[0].valid, true);
    expectJson(await agent.post('/settings', { notifications: { recipients: [{ emails: [OPS], webhooks: [hookUrl('/hook')] }] } }));
  } finally {
    secure.close();
    secureRelay.stop();
  }

  // TLS from the start (465-style), same certificate.
  expectJson(await agent.post('/settings', { notifications: { smtp_port: smtpTls.port, smtp_security: 'tls', smtp_password: PASSWORD } }));
  const tls = expectJson(await agent.post('/api/notifications/test', { target: OPS })) as any;
  assert.equal(tls.results[0].ok, true, JSON.stringify(tls.results));
  assert.equal(smtpTls.received.length, 1);
  assert.equal(smtpTls.received[0].secure, true);
  expectJson(await agent.post('/settings', { notifications: { ...MAIL(), smtp_password: PASSWORD } }));
});

test('digest: three alerts opened together are one e-mail and one webhook call', async () => {
  const mailsBefore = smtp.received.length;
  const hooksBefore = hooks.length;
  expectJson(await agent.post('/settings', { notifications: { digest_minutes: 1 } }));
  const alerts = await openOfflineAlerts();
  const row = await until('the digest delivered', async () => {
    const o = await outbox();
    const email = o.messages.find((m: any) => m.channel === 'email' && alerts.every((a) => m.alert_ids.includes(a.id)));
    return email?.state === 'sent' ? email : undefined;
  }, 150_000);
  assert.equal(row.attempts, 1);
  await until('the webhook delivered', () => hooks.length > hooksBefore);
  const mails = smtp.received.slice(mailsBefore);
  assert.equal(mails.length, 1, 'one e-mail for three alerts');
  for (const s of SERIALS) assert.ok(mails[0].raw.includes(s), `the digest names ${s}`);
  assert.match(mails[0].subject, /3 alerts \(3 critical\)/);
  const calls = hooks.slice(hooksBefore);
  assert.equal(calls.length, 1, 'one webhook call for three alerts');
  assert.equal(calls[0].valid, true);
  const body = JSON.parse(calls[0].body);
  assert.equal(body.event, 'alerts');
  assert.deepEqual(body.alerts.map((a: any) => a.id).sort(), alerts.map((a) => a.id).sort());
  // The machine-readable fields as GET /api/alerts has them; the words a person reads beside them.
  for (const a of body.alerts) {
    const listed = alerts.find((x) => x.id === a.id);
    for (const k of ['serial', 'kind', 'supply', 'severity', 'message', 'opened_at']) assert.deepEqual(a[k], listed[k], k);
    const i = SERIALS.indexOf(a.serial);
    assert.deepEqual(a.printer, { name: null, model: `Kyocera ECOSYS P20${40 + i}dn`, location: `Floor ${i + 1}`, ip: `127.0.36.${210 + i}` });
    assert.match(a.text, /^Not answering since \d{1,2} [A-Z][a-z]{2}, \d{2}:\d{2} /);
    assert.match(a.page_url, new RegExp(`^https://[^/]+:\\d+/#/printer/${a.serial}$`));
    assert.ok(body.text.includes(`Kyocera ECOSYS P20${40 + i}dn, Floor ${i + 1}, 127.0.36.${210 + i}\n  - ${a.text} (critical)`), body.text);
  }
  assert.match(body.text, /^PrintBox \S+ .*opened 3 alerts:/);
  assert.equal(calls[0].headers['x-printbox-delivery'], String(body.delivery_id));
  expectJson(await agent.post('/settings', { notifications: { digest_minutes: 0 } }));
});

test('a mail server answering 451 is tried again: each alert delivered once', async () => {
  expectJson(await agent.post('/settings', { notifications: { recipients: [{ kinds: ['offline'], emails: [OPS] }] } }));
  smtp.refuseNext(1);
  const before = smtp.received.length;
  const alerts = await openOfflineAlerts();
  const rows = await until('three messages delivered', async () => {
    const mine = (await outbox()).messages.filter((m: any) => alerts.some((a) => m.alert_ids.includes(a.id)));
    return mine.length === 3 && mine.every((m: any) => m.state === 'sent') ? mine : undefined;
  });
  assert.equal(smtp.refused, 1);
  assert.deepEqual(rows.map((r: any) => r.attempts).sort(), [1, 1, 2], 'the refused one took a second attempt');
  const mails = smtp.received.slice(before);
  assert.equal(mails.length, 3);
  for (const s of SERIALS) assert.equal(mails.filter((m) => m.raw.includes(s)).length, 1, `${s} mailed once`);
  assert.match(agent.stdout(), /451[^\n]*notification not delivered: retried later|notification not delivered: retried later[^\n]*451/);
});

test('a webhook that redirects is not followed: retried, then marked failed, in the outbox and the log', async () => {
  expectJson(await agent.post('/settings', { notifications: { recipients: [{ webhooks: [hookUrl('/moved')] }] } }));
  const alerts = await openOfflineAlerts();
  const failed = await until('three messages failed', async () => {
    const o = await outbox();
    const mine = o.messages.filter((m: any) => alerts.some((a) => m.alert_ids.includes(a.id)));
    return mine.length === 3 && mine.every((m: any) => m.state === 'failed') ? { o, mine } : undefined;
  });
  for (const m of failed.mine) {
    assert.equal(m.attempts, 5);
    assert.equal(m.last_error, 'HTTP 302 (redirects are not followed)', 'the status only: the Location is the receiver\'s own');
    assert.equal(m.next_attempt_at, null);
  }
  assert.ok(failed.o.counts.failed >= 3);
  assert.equal(hooks.filter((h) => h.path === '/elsewhere').length, 0, 'the redirect was never followed');
  assert.equal(hooks.filter((h) => h.path === '/moved').length, 15, 'five attempts at each of three');
  assert.match(agent.stdout(), /notification failed after 5 attempts: not sent/);
});

test('a message queued while the mail server is down survives a kill -9 and is delivered after the restart', async () => {
  expectJson(await agent.post('/settings', { notifications: { recipients: [{ kinds: ['offline'], emails: [OPS] }] } }));
  await smtp.stop(); // connection refused from now on
  const alerts = await openOfflineAlerts();
  await until('each message tried once and pending', async () => {
    const mine = (await outbox()).messages.filter((m: any) => alerts.some((a) => m.alert_ids.includes(a.id)));
    return mine.length === 3 && mine.every((m: any) => m.state === 'pending' && m.attempts >= 1 && /ECONNREFUSED|connect/i.test(m.last_error));
  });
  const killed = new Promise((r) => agent.proc.once('exit', r));
  agent.proc.kill('SIGKILL');
  await killed;
  await agent.stop({ keepDir: true }); // its relays

  const before = smtp.received.length;
  await smtp.listen(); // the same port again
  agent = await startAgentInLan(lan, { config: cfg, expose: [smtp.port, smtpTls.port] });
  const rows = await until('three messages delivered after the restart', async () => {
    const mine = (await outbox()).messages.filter((m: any) => alerts.some((a) => m.alert_ids.includes(a.id)));
    return mine.length === 3 && mine.every((m: any) => m.state === 'sent') ? mine : undefined;
  });
  for (const r of rows) assert.ok(r.attempts >= 2);
  const mails = smtp.received.slice(before);
  assert.equal(mails.length, 3);
  for (const s of SERIALS) assert.equal(mailsAbout(s).filter((m) => mails.includes(m)).length, 1, `${s} mailed once after the restart`);
});

test('outbox listing: bad limit is a 400', async () => {
  expectTextError(await agent.get('/api/notifications/outbox?limit=0'), 400, 'limit must be an integer from 1 to 500');
  expectTextError(await agent.get('/api/notifications/outbox?limit=x'), 400, 'limit must be an integer from 1 to 500');
});
