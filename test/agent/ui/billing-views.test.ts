// The Order list and Billing views and the Download CSV buttons in Chromium, against a
// real agent in password mode (no local admin: both accounts sign in). The box holds a printer
// running out of black toner with its part number (hostile text in its model and location), a
// full one, and two billing periods of meter reads, one taken from the nearest reading. A viewer
// sees both views at phone width (390 px, nothing wider) with no serious or critical axe finding,
// and every Download button (printers list, a printer's meter history at the range and tier
// shown, billing reads, order list) gives a file named by the box that csv-parse reads back equal
// to the API's JSON for the same query. An admin changes the billing settings; a viewer cannot.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { runCli, startAgent, type Agent } from '../../kit/agent.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { DAY, HOUR, MINUTE, device, hourStart, metrics, ndjson, nowSeconds, rfc3339 } from '../../kit/seed.js';
import { accessible, fitsWidth } from '../../kit/page-checks.js';

const skip = chromiumMissing;
const PHONE = { width: 390, height: 844 };
const LOW = 'ORDER-UI-1';
const FULL = 'ORDER-UI-2';
const MODEL = '=TASKalfa, "A3"';
const LOCATION = 'Room 5, "cellar"';
type Json = Record<string, any>;

let agent: Agent;
let browser: import('playwright-core').Browser;
let base: string;
const now = nowSeconds();
const month = (back: number) => {
  const d = new Date(now);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1));
};
// This month's reads are there already, so the agent's billing schedule (day 1, 00:00 UTC) owes none.
const PERIOD = month(0).toISOString().slice(0, 7);
const EARLIER = month(1).toISOString().slice(0, 7);

/** Black falls 1.5 points a day and is at 6 % now: low, and empty in about 4 days. */
function draining(serial: string) {
  const reading = (t: number) => {
    const left = (now - t) / DAY + 4;
    return { page_count: Math.round(60_000 - left * 200), mono_pages: Math.round(60_000 - left * 200), toner_levels: { black: Math.round(left * 1.5) } };
  };
  const rows = [];
  for (let t = hourStart(now - 28 * DAY); t < now - 7 * DAY; t += 6 * HOUR) rows.push(metrics(serial, 'hourly', t, reading(t)));
  for (let t = now - 6 * DAY; t <= now - HOUR; t += 6 * HOUR) rows.push(metrics(serial, 'raw', t, reading(t)));
  return rows;
}

const read = (serial: string, period: string, source: 'poll' | 'nearest', page: number, offsetMs: number) => {
  const due = Date.parse(`${period}-01T00:00:00Z`);
  return { kind: 'meter_read', serial, period, billing_time: rfc3339(due), read_at: rfc3339(due + offsetMs), source, attempts: source === 'poll' ? 1 : 48, page_count: page, mono_pages: page };
};

before(async () => {
  if (skip) return;
  agent = await startAgent({
    authMode: 'password',
    allowLocalAdmin: false,
    seed: ndjson([
      device(LOW, '127.0.59.11', now, {
        is_saved: true, manufacturer: 'Kyocera', model: MODEL, location: LOCATION, created_at: now - 90 * DAY,
        printer_info: { ip: '127.0.59.11', last_seen: new Date(now).toISOString(), learned_oids: {}, supply_part_numbers: { black: 'TK-8345K' } },
      }),
      device(FULL, '127.0.59.12', now, { is_saved: true, manufacturer: 'HP', model: 'LaserJet M404', location: 'Front desk', created_at: now - 90 * DAY }),
      ...draining(LOW),
      metrics(FULL, 'raw', now - HOUR, { page_count: 1234, toner_levels: { black: 95 } }),
      read(LOW, EARLIER, 'poll', 40_000, 7000),
      read(FULL, EARLIER, 'poll', 1000, 9000),
      read(LOW, PERIOD, 'nearest', 45_500, -(3 * HOUR + 20 * MINUTE)),
      read(FULL, PERIOD, 'poll', 1200, 5000),
    ]),
  });
  for (const [user, role, password] of [['tech', 'admin', 'admin password 59'], ['office', 'viewer', 'viewer password 59']]) {
    const r = await runCli(['passwd', '--role', role, user], { configPath: agent.configPath, input: password + '\n' });
    assert.equal(r.code, 0, r.stderr);
  }
  browser = await launchChromium();
  base = `https://127.0.0.1:${agent.httpsPort}`;
});
after(async () => {
  await browser?.close();
  await agent?.stop();
});

async function signIn(user: string, password: string, viewport = PHONE) {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport, acceptDownloads: true });
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${base}/#/printers`);
  await page.fill('input[name=username]', user);
  await page.fill('input[name=password]', password);
  await Promise.all([page.waitForURL(`${base}/`), page.press('input[name=password]', 'Enter')]);
  await page.waitForSelector('body[data-role]', { state: 'attached' });
  return { page, errors };
}

async function go(page: import('playwright-core').Page, hash: string, ready: string) {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.waitForSelector(ready, { state: 'attached' });
}

/**
 * Presses a Download CSV link: the file's name as the box sent it, its records (csv-parse), and the
 * JSON the same address gives without format=csv (asked by the page, with its session).
 */
async function download(page: import('playwright-core').Page, selector: string) {
  const href = await page.getAttribute(selector, 'href');
  assert.ok(href && /[?&]format=csv$/.test(href), `${selector}: ${href}`);
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const path = await file.path();
  const text = readFileSync(path!, 'utf8');
  assert.ok(text.startsWith('\ufeff'), 'UTF-8 with a byte order mark');
  const records = parse(text, { bom: true, columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
  const json = (await page.evaluate(`fetch(${JSON.stringify(href.replace(/[?&]format=csv$/, ''))}, { headers: { Accept: 'application/json' } }).then((r) => r.json())`)) as any;
  return { name: file.suggestedFilename(), records, json, href };
}

const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'string' && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v));

test('a viewer: the Order list and Billing views at 390 px, and every Download CSV matches the API', { skip: skip || false }, async () => {
  const { page, errors } = await signIn('office', 'viewer password 59');
  assert.equal(await page.getAttribute('body', 'data-role'), 'viewer');
  // At 390 px the navigation is behind the Menu button.
  await page.click('#menu-button');
  assert.ok(await page.isVisible('header nav a[data-nav="order-list"]'));
  assert.ok(await page.isVisible('header nav a[data-nav="billing"]'));
  await page.click('#menu-button');

  // Order list: the low printer's black, with its part number and a link to its page; not the full one.
  await go(page, '#/order-list', '#order-list[data-loaded]');
  const api = (await page.evaluate(`fetch('./api/supplies/order-list', { headers: { Accept: 'application/json' } }).then((r) => r.json())`)) as Json;
  const rows = await page.$$eval('#order-list tbody tr', (trs) => trs.map((tr) => ({
    serial: tr.getAttribute('data-serial'), supply: tr.getAttribute('data-supply'),
    cells: [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim()),
    link: tr.querySelector('a')?.getAttribute('href'),
  })));
  assert.deepEqual(rows.map((r) => `${r.serial} ${r.supply}`), api.items.map((i: Json) => `${i.serial} ${i.supply}`));
  assert.deepEqual(rows.map((r) => r.serial), [LOW]);
  assert.equal(rows[0].link, `#/printer/${LOW}`);
  assert.equal(rows[0].cells[1], 'TK-8345K');
  assert.match(rows[0].cells[0], new RegExp(`^${api.items[0].expected_empty_on} \\(in \\d+ days\\)$`));
  assert.match(rows[0].cells[3], /^6 %/);
  assert.match(rows[0].cells[4], /Kyocera =TASKalfa, "A3"/);
  assert.equal(rows[0].cells[5], LOCATION);
  await fitsWidth(page, 'order list');
  await accessible(page, 'order list');
  const order = await download(page, '#order-list-csv');
  assert.match(order.name, /^order-list-\d{4}-\d{2}-\d{2}\.csv$/);
  assert.deepEqual(order.records.map((r) => [r.serial, r.supply, r.part_number, r.expected_empty_on, r.level_percent, r.model, r.location]),
    order.json.items.map((i: Json) => [i.serial, i.supply, cell(i.part_number), cell(i.expected_empty_on), cell(i.level), cell(i.model), cell(i.location)]));
  assert.equal(order.records[0].model, `'${MODEL}`, 'a leading = is text in the file');

  // Billing: the newest period, the delta against the one before, the nearest read's note.
  await go(page, '#/billing', '#billing-reads[data-loaded]');
  assert.equal(await page.getAttribute('#billing-reads', 'data-period'), PERIOD);
  const low = await page.$$eval(`#billing-reads tr[data-serial="${LOW}"] td`, (tds) => tds.map((td) => (td.textContent ?? '').trim()));
  assert.equal(low[3], '45,500');
  assert.equal(low[6], `${EARLIER}: 40,000`);
  assert.equal(low[7], '5,500');
  assert.equal(low[8], 'Nearest reading, 3 h 20 min before the billing time: the printer was silent all billing day.');
  assert.equal(await page.textContent(`#billing-reads tr[data-serial="${FULL}"] td:last-child`), '');
  await fitsWidth(page, 'billing');
  await accessible(page, 'billing');
  const bill = await download(page, '#billing-csv');
  assert.equal(bill.name, `billing-reads-${PERIOD}.csv`);
  assert.deepEqual(bill.records.map((r) => [r.serial, r.period, r.source, r.offset_minutes, r.total, r.previous_period, r.delta_total, r.model, r.location]),
    bill.json.reads.map((x: Json) => [x.serial, PERIOD, x.source, cell(x.offset_minutes), cell(x.total), cell(x.previous?.period), cell(x.delta.total), cell(x.model), cell(x.location)]));
  // The earlier period: the table and the file follow the choice.
  await page.selectOption('#billing-period', EARLIER);
  await page.waitForSelector(`#billing-reads[data-period="${EARLIER}"]`);
  const earlier = await download(page, '#billing-csv');
  assert.equal(earlier.name, `billing-reads-${EARLIER}.csv`);
  assert.deepEqual(earlier.records.map((r) => r.total), ['40000', '1000']);

  // The printers list as shown, and a printer's meter history at the range and tier the page shows.
  await go(page, '#/printers', `#saved [data-serial="${LOW}"]`);
  const printers = await download(page, '#printers-csv');
  assert.match(printers.name, /^printers-\d{4}-\d{2}-\d{2}\.csv$/);
  assert.deepEqual(printers.records.map((r) => r.serial), printers.json.printers.map((p: Json) => p.serial));
  assert.deepEqual(printers.records.map((r) => r.serial).sort(), [LOW, FULL]);
  await go(page, `#/printer/${LOW}`, '#meter-chart[data-points]');
  await page.click('button[data-period="year"]');
  await page.waitForSelector('#meter-chart[data-period="year"]');
  assert.equal(await page.inputValue('#history-tier'), 'daily', 'a year: daily rows');
  await page.selectOption('#history-tier', 'hourly');
  const history = await download(page, '#history-csv');
  assert.equal(history.name, `meter-history-${LOW}-hourly.csv`);
  assert.match(history.href, /since=[^&]+&until=[^&]+/);
  assert.ok(history.records.length > 50, `a year of hourly rows: ${history.records.length}`);
  assert.deepEqual(history.records.map((r) => [r.timestamp, r.page_count, r.supply_black_percent]),
    history.json.map((s: Json) => [s.timestamp, cell(s.page_count), cell(s.toner_levels?.black)]));
  await fitsWidth(page, 'printer page');

  // The settings are the viewer's to read, not to change.
  await go(page, '#/settings/billing', '#settings-billing');
  await page.waitForFunction(() => (document.querySelector('#settings-billing input') as HTMLInputElement | null)?.disabled === true);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('an admin changes the billing day, time zone and the weekly order-list e-mail in Settings', { skip: skip || false }, async () => {
  const { page, errors } = await signIn('tech', 'admin password 59', { width: 1280, height: 900 });
  await go(page, '#/settings/billing', '#settings-billing');
  const form = '#settings-billing';
  await page.fill(`${form} [data-path="billing.day"]`, '15');
  await page.fill(`${form} [data-path="billing.time_zone"]`, 'Mars/Olympus');
  await page.click(`${form} button[type=submit]`);
  await page.waitForFunction(() => /time zone/.test(document.querySelector('#settings-billing [data-error-for="billing.time_zone"]')?.textContent ?? ''));
  await page.fill(`${form} [data-path="billing.time_zone"]`, 'Europe/Berlin');
  await page.check(`${form} [data-path="order_list.email_enabled"]`);
  await page.selectOption(`${form} [data-path="order_list.email_weekday"]`, 'friday');
  await page.fill(`${form} [data-path="order_list.email_time"]`, '07:30');
  await page.fill(`${form} [data-path="order_list.within_days"]`, '21');
  await page.click(`${form} button[type=submit]`);
  await page.waitForFunction(() => document.querySelector('#settings-billing .okmsg')?.textContent === 'Saved.');
  const saved = (await page.evaluate(`fetch('./settings', { headers: { Accept: 'application/json' } }).then((r) => r.json())`)) as Json;
  assert.deepEqual(saved.billing, { enabled: true, day: 15, time: '00:00', time_zone: 'Europe/Berlin' });
  assert.deepEqual(saved.order_list, { within_days: 21, email_enabled: true, email_weekday: 'friday', email_time: '07:30' });
  await go(page, '#/order-list', '#order-list[data-loaded]');
  assert.match(await page.textContent('#order-list-intro') ?? '', /within 21 days/);
  assert.deepEqual(errors, []);
  await page.context().close();
});
