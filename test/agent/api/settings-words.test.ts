// Settings refused in a person's words, and CA certificates trusted from the settings.
// A real agent (local mode: the loopback client is the admin). Each refusal keeps the text body API
// clients read (the key and the rule) and names the field in Settings-Field, with the Settings
// page's words in Settings-Problem; nothing changes. A CA certificate is checked when saved: a
// private CA's certificate (test/kit/private-ca.ts) and a self-signed one are taken, a server's
// own certificate, an expired CA and text that is no certificate are refused saying why. A mail
// server whose certificate comes from that CA (the real SMTP server of test/kit/smtp.ts) is
// said in plain words before its CA is given, and takes the message after, without a restart.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectJson, startAgent, type Agent, type Res } from '../../kit/agent.js';
import { issueServerCert, makeCa, type Pems } from '../../kit/private-ca.js';
import { loopbackCertificate, startSmtp, type SmtpServer } from '../../kit/smtp.js';

let agent: Agent;
let ca: Pems;
let leaf: Pems;
let smtp: SmtpServer;
const OPS = 'ops@example.test';

const post = (body: unknown) =>
  agent.request('/settings', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const settingsNow = async () => expectJson(await agent.get('/settings')) as Record<string, any>;

before(async () => {
  ca = await makeCa('Site Private CA');
  leaf = await issueServerCert(ca, ['127.0.0.1']);
  smtp = await startSmtp({ cert: leaf.cert, key: leaf.key, users: { box: 'mail-secret-1' } });
  agent = await startAgent();
});
after(async () => {
  await agent?.stop();
  await smtp?.stop();
});

/** A 400 with the machine message as the body, and its field and plain words in the headers. */
function refused(r: Res, body: string, field: string, plain: string): void {
  assert.equal(r.status, 400, r.body);
  assert.equal(r.body, body + '\n');
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(r.headers['settings-field'], field);
  assert.equal(decodeURIComponent(String(r.headers['settings-problem'])), plain);
}

test('a refused setting: the body as API clients read it, the field and the plain words in headers; nothing changes', async () => {
  const before = await settingsNow();
  refused(await post({ snmp: { v3: [{ user: 'tech', auth_protocol: 'SHA', auth_key: 'short', priv_protocol: 'none' }] } }),
    'snmp.v3[0].auth_key must have at least 8 characters', 'snmp.v3[0].auth_key', 'SNMPv3 user 1: the authentication key needs at least 8 characters');
  refused(await post({ snmp: { v3: [{ user: 'a', auth_protocol: 'SHA', auth_key: 'longenough' }, { user: 'b', auth_protocol: 'none', priv_protocol: 'AES', priv_key: 'longenough' }] } }),
    'snmp.v3[1].priv_protocol needs an auth_protocol', 'snmp.v3[1].priv_protocol', 'SNMPv3 user 2: the privacy protocol needs an authentication protocol first');
  refused(await post({ collection: { interval_minutes: 0 } }),
    'collection.interval_minutes must be an integer from 1 to 1440', 'collection.interval_minutes', 'The polling interval (minutes) needs a whole number from 1 to 1440');
  refused(await post({ server: { url: 'ftp://central.example/' } }),
    'server.url must be an http:// or https:// URL', 'server.url', 'The server address must be an address starting with http:// or https://');
  refused(await post({ notifications: { recipients: [{ emails: [OPS] }, { emails: ['not an address'] }] } }),
    'notifications.recipients[1].emails must be an e-mail address (name@host)', 'notifications.recipients[1].emails', 'Rule 2: the e-mail addresses must be an e-mail address (name@host)');
  refused(await post({ notifications: { recipients: [{ emails: [OPS] }] } }),
    'notifications.smtp_host must be set: a rule names e-mail addresses', 'notifications.smtp_host', 'The mail server is needed: a rule sends e-mail');
  // Words from the request itself, outside ASCII: percent-encoded in the header, whole once decoded.
  const r = await post({ discovery: { ranges_text: '10.0.0.0/24\ncafé' } });
  assert.equal(r.status, 400);
  assert.equal(r.headers['settings-field'], 'discovery.ranges_text');
  assert.match(String(r.headers['settings-problem']), /^[\x20-\x7e]+$/);
  assert.match(decodeURIComponent(String(r.headers['settings-problem'])), /^The ranges: line 2: "café" is not an IPv4 address, CIDR, /);
  // Not a setting: named as such, in both.
  refused(await post({ log: { colour: true } }), 'unknown setting log.colour', 'log.colour', 'log.colour is not a setting this box knows');
  // A body problem names no setting: no headers.
  const bad = await agent.request('/settings', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[1]' });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers['settings-field'], undefined);
  assert.deepEqual(await settingsNow(), before, 'nothing changed');
});

test('CA certificates: a CA and a self-signed certificate are taken; a server\'s own, an expired CA and no certificate are refused saying why', async () => {
  const before = await settingsNow();
  const expired = await makeCa('Old CA', { expired: true });
  for (const key of ['server', 'notifications'] as const) {
    const who = key === 'server' ? "The central server's CA certificate" : "The mail server's CA certificate";
    refused(await post({ [key]: { ca_pem: leaf.cert } }),
      `${key}.ca_pem: the certificate for 127.0.0.1 is a server's own certificate issued by Site Private CA, not a CA: give the CA certificate that issued it`,
      `${key}.ca_pem`, `${who}: the certificate for 127.0.0.1 is a server's own certificate issued by Site Private CA, not a CA: give the CA certificate that issued it`);
    const r = await post({ [key]: { ca_pem: expired.cert } });
    assert.equal(r.status, 400);
    assert.match(r.body, new RegExp(`^${key}\\.ca_pem: the certificate Old CA expired on \\d{4}-\\d\\d-\\d\\d\\n$`));
    refused(await post({ [key]: { ca_pem: 'MIIB...' } }), `${key}.ca_pem is not a PEM certificate (-----BEGIN CERTIFICATE-----)`, `${key}.ca_pem`,
      `${who} is not a PEM certificate (-----BEGIN CERTIFICATE-----)`);
    refused(await post({ [key]: { ca_pem: `${ca.cert}\ntrailing words` } }), `${key}.ca_pem is not a PEM certificate (-----BEGIN CERTIFICATE-----)`, `${key}.ca_pem`,
      `${who} is not a PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  assert.deepEqual(await settingsNow(), before, 'nothing changed');
  const selfSigned = await loopbackCertificate();
  const both = `${ca.cert.trim()}\n${selfSigned.cert.trim()}`;
  const saved = expectJson(await post({ server: { ca_pem: both }, notifications: { ca_pem: ca.cert.trim() } })) as Record<string, any>;
  assert.equal(saved.server.ca_pem, both, 'stored with the settings and shown (not secret)');
  assert.equal(saved.notifications.ca_pem, ca.cert.trim());
  expectJson(await post({ server: { ca_pem: '' }, notifications: { ca_pem: '' } }));
});

test('an enrollment token stored: a new server CA is a new destination for it (403 without proof), as the mail CA is for the mail password', async () => {
  expectJson(await post({ server: { url: 'https://127.0.0.1:9', enrollment_token: 'join-secret-1' } }));
  const r = await post({ server: { ca_pem: ca.cert } });
  assert.equal(r.status, 403, r.body);
  assert.match(r.body, /server\.ca_pem/);
  assert.equal((await settingsNow()).server.ca_pem, '', 'nothing changed');
  // Given anew with it: taken.
  expectJson(await post({ server: { ca_pem: ca.cert, enrollment_token: 'join-secret-1' } }));
  expectJson(await post({ server: { url: '', ca_pem: '' } }));
});

test('the mail server with a private CA: said in plain words until its CA is given, then delivered (no restart)', async () => {
  expectJson(await post({ notifications: { smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_security: 'starttls', smtp_user: 'box', smtp_password: 'mail-secret-1', smtp_from: 'box@example.test', ca_pem: '', recipients: [{ emails: [OPS] }] } }));
  const before = expectJson(await agent.request('/api/notifications/test', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })) as any;
  assert.equal(before.results[0].ok, false);
  assert.equal(before.results[0].error, `the mail server at 127.0.0.1:${smtp.port}: its certificate comes from a CA this box does not know: upload its CA certificate in Settings → Notifications (Trusted CA certificate)`);
  assert.doesNotMatch(before.results[0].error, /use-system-ca|unable to/);
  assert.equal(smtp.received.length, 0);
  // The CA, with the password again (a new CA is a new destination for it).
  expectJson(await post({ notifications: { ca_pem: ca.cert, smtp_password: 'mail-secret-1' } }));
  const after = expectJson(await agent.request('/api/notifications/test', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })) as any;
  assert.deepEqual(after.results.map((x: any) => [x.target, x.ok]), [[OPS, true]], JSON.stringify(after));
  assert.equal(smtp.received.length, 1);
  assert.equal(smtp.received[0].secure, true);
  assert.equal(smtp.received[0].user, 'box');
});
