// An alert e-mail a person can act on, through the real agent: an Epson inkjet
// (its recording, printmaster/epson_cw: cyan, magenta and yellow ink at 1%) served by snmpsim over
// UDP on loopback is found, saved, given a location and read; its low-ink alerts go to a real SMTP
// server the test starts (STARTTLS, AUTH, a certificate trusted as ca_pem). Each e-mail says the
// supply as ink (its prtMarkerSuppliesType), the printer's model, location and address, the box's
// name, a link to the printer's page and the opening time in display.time_zone (Sydney, in summer
// time in November). Nothing leaves 127.0.0.0/8.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { startSnmpSim, fixturePath, type SnmpSim } from '../../kit/snmpsim.js';
import { loopbackCertificate, startSmtp, type SmtpServer } from '../../kit/smtp.js';
import { until } from '../../kit/until.js';

const ADDRESS = '127.0.58.1';
const SERIAL = 'X7F4008528';
const LOCATION = '2nd floor plan room';
const ZONE = 'Australia/Sydney';
const OPS = 'ops@example.test';
const USER = 'printbox';
const PASSWORD = 'smtp-password-58';

let sim: SnmpSim;
let smtp: SmtpServer;
let agent: Agent;


/** The message's text as a reader sees it: quoted-printable soft breaks and escapes undone. */
const readable = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))).replace(/\r\n/g, '\n');

before(async () => {
  sim = await startSnmpSim({ endpoints: [{ address: ADDRESS, recording: fixturePath('printmaster/epson_cw.snmprec') }] });
  const cert = await loopbackCertificate();
  smtp = await startSmtp({ ...cert, users: { [USER]: PASSWORD } });
  agent = await startAgent();
  expectJson(
    await agent.post('/settings', {
      discovery: { manual_ranges: true, ranges_text: ADDRESS, allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 1500, subnet_scan: false },
      snmp: { port: sim.port, communities: ['public'] },
      // No forecast here: the printer has one reading (the unit tests cover "will run out around").
      // The low rule off until the printer has its location (as a technician sets it up).
      alerts: { supply_empty_within_days: 0, supply_below_percent: 0 },
      notifications: {
        smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_security: 'starttls', smtp_user: USER, smtp_password: PASSWORD,
        smtp_from: 'printbox@example.test', ca_pem: cert.cert, digest_minutes: 0, recipients: [{ kinds: ['supply_low'], emails: [OPS] }],
      },
      display: { time_zone: ZONE },
    }),
  );
  expectJson(await agent.post('/discover', {}), 202);
  await until('the scan to find the printer', async () => ((expectJson(await agent.get('/discover')) as any).state === 'running' ? undefined : true));
  expectJson(await agent.post('/devices/save', { serial: SERIAL }));
  expectJson(await agent.post('/devices/update', { serial: SERIAL, location: LOCATION }));
});

after(async () => {
  await agent?.stop();
  await smtp?.stop();
  await sim?.stop();
});

test('display.time_zone: an IANA name, else a 400 naming the field and nothing changed', async () => {
  const before = (expectJson(await agent.get('/settings')) as any).display;
  assert.equal(before.time_zone, ZONE);
  expectTextError(await agent.post('/settings', { display: { time_zone: 'Mars/Olympus' } }), 400, 'display.time_zone must be an IANA time zone name such as UTC or Europe/Berlin');
  expectTextError(await agent.post('/settings', { display: { zone: 'UTC' } }), 400, 'unknown setting display.zone');
  assert.deepEqual((expectJson(await agent.get('/settings')) as any).display, before, 'nothing changed');
});

test('a low-ink e-mail names the ink, the model, location and address, the box, a local time and the link', async () => {
  expectJson(await agent.post('/devices/metrics/collect', { serial: SERIAL }));
  expectJson(await agent.post('/settings', { alerts: { supply_below_percent: 15 } }));
  const mails = await until('three low-ink e-mails', () => {
    const mine = smtp.received.filter((m) => readable(m.raw).includes(SERIAL));
    return mine.length >= 3 ? mine : undefined;
  });
  const open = (expectJson(await agent.get('/api/alerts')) as any[]).filter((a) => a.serial === SERIAL && a.kind === 'supply_low');
  assert.deepEqual(open.map((a) => a.supply).sort(), ['cyan', 'magenta', 'yellow']);
  const cyan = open.find((a) => a.supply === 'cyan');
  // The machine fields as they were; the words beside them.
  assert.equal(cyan.message, 'cyan at 1% (below 15%)');
  assert.equal(cyan.text, 'Cyan ink is low (1%)');
  assert.equal(cyan.supply_name, 'Cyan ink');
  assert.deepEqual(cyan.printer, { name: null, model: cyan.printer.model, location: LOCATION, ip: ADDRESS });
  assert.match(cyan.printer.model, /^Epson CW-/);
  const link = `https://${hostname()}.local:${agent.httpsPort}/#/printer/${SERIAL}`;
  assert.equal(cyan.page_url, link);

  const mail = mails.find((m) => m.subject.includes('Cyan'));
  assert.ok(mail, mails.map((m) => m.subject).join(' | '));
  assert.equal(mail.subject, `[PrintBox ${hostname()}] Cyan ink is low (1%) (${cyan.printer.model}, ${LOCATION}, ${ADDRESS})`);
  const text = readable(mail.raw);
  assert.ok(text.includes(`${cyan.printer.model}, ${LOCATION}, ${ADDRESS}\n  - Cyan ink is low (1%)\n`), text);
  // The opening time as a clock in Sydney shows it (the test's own formatter, summer time: AEDT).
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: ZONE, day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(Date.parse(cyan.opened_at));
  assert.ok(text.includes(`Serial ${SERIAL}; opened ${local}`), `${local} in:\n${text}`);
  assert.ok(text.includes(link), text);
  assert.match(text, new RegExp(`PrintBox ${hostname()}`));
  assert.ok(!/toner/i.test(text), 'an inkjet never says toner');
  assert.ok(!text.includes(cyan.opened_at), 'no UTC timestamp');
});
