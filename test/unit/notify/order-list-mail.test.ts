// The weekly order-list e-mail on a simulated clock, through the real parts: a real
// SQLite file with saved printers and their supply history, the real order list (forecasts), the
// real outbox and dispatcher, and a real SMTP server (STARTTLS, AUTH, test/kit/smtp.ts). The
// clock is the schedule's own `now` (as test/unit/billing/reads.test.ts drives the billing reads):
// checks a minute apart across two weeks and a half in Berlin time, the mail server answers 451
// once. Sent on the weekday at the time, to the recipients who take supply alerts, once a week; a
// week whose list is empty sends nothing; the attached CSV parses back to the API's list.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { importNdjson } from '../../../src/store/ndjson.js';
import { DeviceStore } from '../../../src/store/devices.js';
import { MetricsStore } from '../../../src/store/metrics.js';
import { SettingsStore } from '../../../src/settings/store.js';
import { OutboxStore } from '../../../src/notify/outbox.js';
import { NotificationDispatcher } from '../../../src/notify/dispatcher.js';
import { EventBus } from '../../../src/events/bus.js';
import { orderList } from '../../../src/forecast/order-list.js';
import { OrderListMail, weeklyDue } from '../../../src/notify/order-list-mail.js';
import type { Logger } from '../../../src/log/logger.js';
import { openTemp } from '../../kit/rollup-db.js';
import { hourStart, device, metrics, ndjson, DAY, HOUR, MINUTE } from '../../kit/seed.js';
import { loopbackCertificate, startSmtp, type ReceivedMail, type SmtpServer } from '../../kit/smtp.js';
import { until } from '../../kit/until.js';

const at = (text: string) => Date.parse(text);
const iso = (t: number) => new Date(t).toISOString();
// Sunday 29 November 2026, 12:00 in Berlin (UTC+1): the list is due Mondays at 08:00 Berlin, 07:00 UTC.
const START = at('2026-11-29T11:00:00Z');
const SMTP_USER = 'printbox';
const PASSWORD = 'smtp-password-order-list';
const BUYER = 'buyer@example.test';
const OPS = 'ops@example.test';
const JAMS_ONLY = 'jams@example.test';

let smtp: SmtpServer;
let cert: { cert: string; key: string };
before(async () => {
  cert = await loopbackCertificate();
  smtp = await startSmtp({ ...cert, users: { [SMTP_USER]: PASSWORD } });
});
after(async () => {
  await smtp?.stop();
});

test('weekly due times: the weekday and time in the zone, the newest at or before now', () => {
  const due = (t: string, day: 'monday' | 'sunday' | 'friday', time: string, zone: string) => {
    const d = weeklyDue(at(t), day, time, zone);
    return [iso(d.at), d.key];
  };
  assert.deepEqual(due('2026-11-30T06:59:59Z', 'monday', '08:00', 'Europe/Berlin'), ['2026-11-23T07:00:00.000Z', 'order-list 2026-11-23']);
  assert.deepEqual(due('2026-11-30T07:00:00Z', 'monday', '08:00', 'Europe/Berlin'), ['2026-11-30T07:00:00.000Z', 'order-list 2026-11-30']);
  // Summer time: 08:00 Berlin is 06:00 UTC.
  assert.deepEqual(due('2027-07-05T12:00:00Z', 'monday', '08:00', 'Europe/Berlin'), ['2027-07-05T06:00:00.000Z', 'order-list 2027-07-05']);
  // Sunday 23:30 in New York is Monday in UTC: the zone's own weekday counts.
  assert.deepEqual(due('2026-12-07T04:40:00Z', 'sunday', '23:30', 'America/New_York'), ['2026-12-07T04:30:00.000Z', 'order-list 2026-12-06']);
  // Across a year end.
  assert.deepEqual(due('2027-01-02T00:00:00Z', 'friday', '00:00', 'UTC'), ['2027-01-01T00:00:00.000Z', 'order-list 2027-01-01']);
});

/** A printer whose black runs out in about 4 days and sits below 10 % now; another that is full. */
function seed(now: number): string {
  // 1.5 points a day: the last week as raw readings, the three before as the hourly roll-ups keep them.
  const reading = (t: number) => {
    const daysLeft = (now - t) / DAY + 4;
    return { page_count: Math.round(50_000 - daysLeft * 200), toner_levels: { black: Math.round(daysLeft * 1.5) } };
  };
  const rows = [];
  for (let t = hourStart(now - 28 * DAY); t < now - 7 * DAY; t += 6 * HOUR) rows.push(metrics('ORDER-1', 'hourly', t, reading(t)));
  for (let t = now - 6 * DAY; t <= now - HOUR; t += 6 * HOUR) rows.push(metrics('ORDER-1', 'raw', t, reading(t)));
  return ndjson([
    device('ORDER-1', '10.59.0.1', now, {
      is_saved: true, manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', location: 'Store, "cellar"\n2nd door', created_at: now - 30 * DAY,
      printer_info: { ip: '10.59.0.1', last_seen: iso(now), learned_oids: {}, supply_part_numbers: { black: '=TK-1160' } },
    }),
    device('FULL-2', '10.59.0.2', now, { is_saved: true, model: 'Full', created_at: now - 30 * DAY }),
    ...rows,
    metrics('FULL-2', 'raw', now - HOUR, { page_count: 10, toner_levels: { black: 95 } }),
  ]);
}

/** The CSV attached to a received mail, decoded (nodemailer sends it base64 in its own MIME part). */
function attachment(mail: ReceivedMail): { filename: string; text: string } {
  const part = mail.raw.split(/\r?\n--/).find((p) => /Content-Disposition: attachment/i.test(p));
  assert.ok(part, 'the mail has an attachment');
  const filename = /filename="?([^"\r\n;]+)"?/i.exec(part)![1];
  const body = part.split(/\r?\n\r?\n/).slice(1).join('\n').replace(/\s+/g, '');
  assert.match(part, /Content-Transfer-Encoding: base64/i);
  return { filename, text: Buffer.from(body, 'base64').toString('utf8') };
}

test('weekly order list: on Monday 08:00 Berlin, once, to the supply recipients, retried through the outbox; an empty week sends nothing', async () => {
  const clock = { t: START };
  const { db } = openTemp('order-list-mail-');
  const imported = await importNdjson(db, Readable.from([seed(START)]));
  assert.equal(imported.devices, 2);
  const said: string[] = [];
  const note = (o: object, m: string) => void said.push(`${m} ${JSON.stringify(o)}`);
  const log = { info: note, warn: note, error: note, debug() {} } as unknown as Logger;
  const settings = new SettingsStore(db, { subnet_scan: false, auto_discover: false, allowed_ranges: [] });
  settings.update({
    billing: { time_zone: 'Europe/Berlin' },
    order_list: { email_enabled: true, email_weekday: 'monday', email_time: '08:00', within_days: 14 },
    notifications: {
      smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_security: 'starttls', smtp_user: SMTP_USER, smtp_password: PASSWORD,
      smtp_from: 'printbox@example.test', ca_pem: cert.cert,
      recipients: [{ kinds: ['supply_low'], emails: [BUYER] }, { kinds: [], emails: [OPS, BUYER] }, { kinds: ['jam'], emails: [JAMS_ONLY] }],
    },
  });
  const devices = new DeviceStore(db);
  const metricsStore = new MetricsStore(db);
  const outbox = new OutboxStore(db);
  const dispatcher = new NotificationDispatcher({ outbox, settings, events: new EventBus(), log, now: () => clock.t, retryFirstMs: 200, maxAttempts: 5 });
  dispatcher.start();
  const list = () => {
    const s = settings.get();
    const printers = [...devices.eachSaved(['serial', 'manufacturer', 'model', 'location', 'asset_number', 'printer_info'] as const)];
    return orderList(printers, metricsStore, s.order_list.within_days, s.alerts.supply_below_percent, () => clock.t);
  };
  const mail = new OrderListMail({
    settings: () => settings.get(), orderList: list, box: 'box-59',
    queueScheduled: (...a) => dispatcher.queueScheduled(...a), scheduledDone: (k) => outbox.scheduledDone(k), now: () => clock.t, log,
  });
  /** Checks every minute until `end` (the agent's tick); returns the outbox rows queued meanwhile. */
  const run = async (end: number) => {
    for (; clock.t < end; clock.t += MINUTE) await mail.check();
  };
  const orderRows = () => outbox.list(500).filter((r) => r.message);
  try {
    const monday = at('2026-11-30T07:00:00Z');
    await run(monday - MINUTE);
    assert.equal(orderRows().length, 0, 'nothing before Monday 08:00 Berlin');
    // The first delivery is refused once (451): the outbox tries again.
    smtp.refuseNext(1);
    await run(monday + MINUTE);
    const rows = orderRows();
    assert.deepEqual(rows.map((r) => r.target).sort(), [BUYER, OPS], 'each supply recipient once; the jams-only rule is left out');
    assert.ok(rows.every((r) => r.created_at === monday), `queued at the due minute: ${rows.map((r) => iso(r.created_at))}`);
    // Time goes on while the outbox waits to try again (a retry is due 200 ms after the refusal).
    const received = await until('both mails delivered', () => {
      clock.t += 1000;
      return smtp.received.length >= 2 ? smtp.received : undefined;
    }).catch((err: Error) => assert.fail(`${err.message}; the log: ${said.join('\n')}`));
    assert.equal(smtp.refused, 1, 'the first attempt was refused and retried');
    assert.deepEqual(received.flatMap((m) => m.to).sort(), [BUYER, OPS]);
    for (const m of received) {
      assert.equal(m.secure, true);
      assert.match(m.subject, /^\[PrintBox box-59\] Order list 2026-11-30: 1 supply to order$/);
      assert.match(m.raw, /Store, "cellar" 2nd door/, 'the location on one line of the text');
      const csv = attachment(m);
      assert.equal(csv.filename, 'order-list-2026-11-30.csv');
      const records = parse(csv.text, { bom: true, columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
      const api = await list();
      assert.equal(records.length, api.length);
      assert.equal(records[0].serial, 'ORDER-1');
      assert.equal(records[0].supply, 'black');
      assert.equal(records[0].part_number, "'=TK-1160", 'a leading = is written as text');
      assert.equal(records[0].location, api[0].location);
      assert.equal(records[0].expected_empty_on, api[0].expected_empty_on);
      assert.equal(records[0].reasons, 'low forecast');
    }
    // The rest of the week: checked every minute, nothing more (the outbox rows are all sent).
    await run(at('2026-12-07T06:59:00Z'));
    assert.equal(orderRows().length, 2, 'not twice in a week');
    await until('sent rows', () => outbox.list(500).filter((r) => r.message && r.state === 'sent').length === 2 || undefined);
    assert.equal(smtp.received.length, 2);

    // The next Monday's list is empty (nothing below 0 %, nothing within a day): nothing is sent, and
    // a list that fills later that day is not sent either (the week is done).
    settings.update({ order_list: { within_days: 1 }, alerts: { supply_below_percent: 0 } });
    await run(at('2026-12-07T09:00:00Z'));
    assert.equal(orderRows().length, 2, 'an empty list sends nothing');
    assert.equal(outbox.scheduledDone('order-list 2026-12-07'), true, 'the empty week is recorded');
    settings.update({ order_list: { within_days: 14 }, alerts: { supply_below_percent: 10 } });
    await run(at('2026-12-08T09:00:00Z'));
    assert.equal(orderRows().length, 2);

    // Turned on mid-week (after the weekday's window), nothing until the next Monday; then sent again.
    await run(at('2026-12-14T07:00:00Z') - MINUTE);
    assert.equal(orderRows().length, 2);
    await run(at('2026-12-14T07:00:00Z') + 2 * MINUTE);
    assert.equal(orderRows().length, 4, 'the third Monday');
    await until('four mails delivered', () => smtp.received.length === 4 || undefined);
    assert.match(smtp.received[3].subject, /Order list 2026-12-14/);
  } finally {
    dispatcher.stop();
    db.close();
  }
});

test('weekly order list: a box that was off on Monday sends within the day after; off all Monday, it waits for the next week', async () => {
  const { db } = openTemp('order-list-late-');
  const outbox = new OutboxStore(db);
  const queued: string[] = [];
  const clock = { t: at('2026-11-30T15:00:00Z') };
  const settings = new SettingsStore(db, { subnet_scan: false, auto_discover: false, allowed_ranges: [] });
  settings.update({ order_list: { email_enabled: true, email_weekday: 'monday', email_time: '08:00' }, notifications: { smtp_host: '127.0.0.1', smtp_from: 'a@example.test', recipients: [{ emails: [OPS] }] } });
  const log = { info() {}, warn() {}, error() {}, debug() {} } as unknown as Logger;
  const mail = new OrderListMail({
    settings: () => settings.get(), box: 'b', log, now: () => clock.t, scheduledDone: (k) => outbox.scheduledDone(k),
    orderList: async () => [{ serial: 'S', manufacturer: null, model: null, location: null, asset_number: null, supply: 'black', part_number: null, level: 3, days_to_empty: 1, expected_empty_on: '2026-12-01', reasons: ['low', 'forecast'] }],
    queueScheduled: (key, dueAt, emails, message, items) => {
      const ok = outbox.addScheduled(key, dueAt, emails, message, items, clock.t);
      if (ok) queued.push(key);
      return ok;
    },
  });
  try {
    await mail.check(); // Monday 16:00 in UTC, 8 hours late: sent now
    await mail.check();
    assert.deepEqual(queued, ['order-list 2026-11-30']);
    clock.t = at('2026-12-08T09:00:00Z'); // off from before Monday 08:00 until Tuesday 10:00
    await mail.check();
    assert.deepEqual(queued, ['order-list 2026-11-30'], 'a day late is too late: the next Monday');
    clock.t = at('2026-12-14T08:00:00Z');
    await mail.check();
    assert.deepEqual(queued, ['order-list 2026-11-30', 'order-list 2026-12-14']);
    // Turned off: nothing.
    settings.update({ order_list: { email_enabled: false } });
    clock.t = at('2026-12-21T08:00:00Z');
    await mail.check();
    assert.equal(queued.length, 2);
  } finally {
    db.close();
  }
});
