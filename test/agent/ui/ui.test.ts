// The technician's web UI in a real browser (Debian's Chromium driven by playwright-core)
// against a real agent (local mode, allow_local_admin: the loopback browser is the admin) and a
// simulated printer (snmpsim on 127.0.1.1). Each page's main task at desktop size, the pages again
// at phone size (360x740, nothing wider than the screen), an axe-core check on each (no serious or
// critical violation), and no CSP violation anywhere. Screenshots go to the test's temporary
// directory (PRINTBOX_UI_SHOTS=DIR keeps them there; PRINTBOX_UI_DOCS=1 copies the tour set into
// docs/ui/). Password-mode sign-in is test/agent/api/login-browser.test.ts.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { importNdjson, repoRoot, runCli, startAgent, expectJson, type Agent } from '../../kit/agent.js';
import { DAY, HOUR, bucketStart, device, metrics, ndjson, type MetricsLine } from '../../kit/seed.js';
import { fixturePath, startSnmpSim, ensureSnmpsim, type SnmpSim } from '../../kit/snmpsim.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { createLan, lanUnavailable } from '../../kit/lan.js';
import { relayInto, startAgentInLan } from '../../kit/ns-relay.js';
import { accessible, fitsWidth } from '../../kit/page-checks.js';

const skip = chromiumMissing || (ensureSnmpsim() ?? false);
if (skip) console.log(`# web UI tests skipped: ${skip}`);

const SIM_ADDRESS = '127.0.1.1';
const SIM_SERIAL = 'VD21457943'; // test/fixtures/snmp/printmaster/kyocera_p2040.snmprec
const TWO_YEARS = 'UI-2Y-0001';
const MONO_COLOUR = 'UI-MC-0002';
const DISCOVERED = 'UI-DISC-0003';
const TO_HIDE = 'UI-DISC-0004';
const WSD_ONLY = 'UI-DISC-0005';
/** Saved, asleep, ink low (said twice by the printer), and silent since the last poll. */
const SLEEPY = 'UI-SLEEP-0006';
const SILENT_SINCE = '2026-11-20T08:30:00Z';
/** A colour printer with two years of history: pages per period. */
const PAGES = 'UI-PAGES-0007';
const PHONE = { width: 360, height: 740 };
const DESKTOP = { width: 1280, height: 860 };

const shots = process.env.PRINTBOX_UI_SHOTS || mkdtempSync(join(tmpdir(), 'printbox-ui-shots-'));
mkdirSync(shots, { recursive: true });
const TOUR = ['printers-desktop', 'printer-desktop', 'pages-per-period-desktop', 'pages-per-period-phone', 'discovered-desktop', 'settings-error-desktop', 'logs-desktop', 'printers-phone', 'printer-phone'];

/** Two years of history in every tier: raw (7 days, hourly), hourly (to 30 days, every 3 h), daily, monthly. */
function twoYears(serial: string, now: number): MetricsLine[] {
  const rows: MetricsLine[] = [];
  const pages = (t: number) => Math.round(200_000 - (now - t) / HOUR * 4);
  const toner = (t: number) => ({ black: 10 + Math.round(((now - t) / DAY) % 90), cyan: 60, magenta: 12, yellow: 80 });
  const add = (tier: 'raw' | 'hourly' | 'daily' | 'monthly', t: number) => rows.push(metrics(serial, tier, tier === 'raw' ? t : bucketStart(tier, t), { page_count: pages(t), mono_pages: Math.round(pages(t) * 0.7), color_pages: pages(t) - Math.round(pages(t) * 0.7), toner_levels: toner(t) }));
  for (let t = now - 7 * DAY + HOUR; t <= now - 5 * 60_000; t += HOUR) add('raw', t);
  for (let t = now - 30 * DAY; t < now - 7 * DAY; t += 3 * HOUR) add('hourly', t);
  for (let t = now - 365 * DAY; t < now - 30 * DAY; t += DAY) add('daily', t);
  for (let t = now - 730 * DAY; t < now - 365 * DAY; t += 30 * DAY) add('monthly', t);
  return rows;
}

let agent: Agent;
let sim: SnmpSim;
let browser: import('playwright-core').Browser;
let desktop: import('playwright-core').Page;
let phone: import('playwright-core').Page;
let base: string;
const cspViolations: string[] = [];


before(async () => {
  if (skip) return;
  const now = Date.now();
  sim = await startSnmpSim({ endpoints: [{ address: SIM_ADDRESS, recording: fixturePath('printmaster/kyocera_p2040.snmprec') }] });
  agent = await startAgent({
    seed: ndjson([
      device(TWO_YEARS, { ip: '127.0.1.60', is_saved: true, manufacturer: 'Kyocera', model: 'TASKalfa 2554ci', firmware: '2XN_S000.002.301', mac_address: '00:17:c8:aa:bb:cc', location: 'Floor 3', status_messages: ['Paper jam in tray 2'], first_seen: now - 730 * DAY, created_at: now - 730 * DAY,
        web_ui_url: 'https://127.0.1.60/startwlm/Start_Wlm.htm', printer_info: { discovery_methods: ['ipp', 'subnet_scan'], detection_reasons: ['ipp: ipps port 443 answered Get-Printer-Attributes'] } }),
      ...twoYears(TWO_YEARS, now),
      device(PAGES, { ip: '127.0.1.66', is_saved: true, manufacturer: 'Kyocera', model: 'ECOSYS M5526cdw', first_seen: now - 730 * DAY, created_at: now - 730 * DAY }),
      ...twoYears(PAGES, now),
      device(MONO_COLOUR, { ip: '127.0.1.61', is_saved: true, manufacturer: 'HP', model: 'Color LaserJet M555', location: 'Reception' }),
      device(SLEEPY, { ip: '127.0.1.65', is_saved: true, manufacturer: 'Epson', model: 'WF-C5890', status_messages: ['Sleep', 'Ink is low.', `not answering since ${SILENT_SINCE}: no SNMP or IPP answer`],
        printer_info: { toner_alerts: ['ink is low'] } }),
      metrics(MONO_COLOUR, 'raw', now - HOUR, { mono_pages: 1200, color_pages: 345, toner_levels: { black: 40, cyan: 9, magenta: 55, yellow: 70 } }),
      device(DISCOVERED, { ip: '127.0.1.62', manufacturer: 'Brother', model: 'HL-L5100DN', web_ui_url: 'http://127.0.1.62/general/status.html',
        printer_info: { discovery_methods: ['ipp', 'mdns'], detection_reasons: ['mdns: _ipp._tcp', 'ipp: ipp port 631 answered Get-Printer-Attributes'] } }),
      metrics(DISCOVERED, 'raw', now - HOUR, { page_count: 4321, toner_levels: { black: 66 } }),
      device(TO_HIDE, { ip: '127.0.1.63', manufacturer: 'Epson', model: 'WF-C5790' }),
      // Its web page as the LAN said it: not an http(s) URL, so never a link.
      device(WSD_ONLY, { ip: '127.0.1.64', manufacturer: 'Canon', model: 'MF455dw', web_ui_url: 'javascript:alert(document.cookie)',
        printer_info: { discovery_methods: ['port_probe', 'wsd'], detection_reasons: ['wsd: Hello (wprt:PrintDeviceType)', 'port_probe: 9100 open'] } }),
    ]),
  });
  // What the simulator needs (its UDP port, a short timeout); no range is enabled yet.
  expectJson(await agent.post('/settings', { discovery: { allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 800 }, snmp: { port: sim.port, communities: ['public'] } }));
  browser = await launchChromium();
  base = `https://127.0.0.1:${agent.httpsPort}`;
  desktop = await browser.newPage({ ignoreHTTPSErrors: true, viewport: DESKTOP });
  phone = await browser.newPage({ ignoreHTTPSErrors: true, viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  for (const p of [desktop, phone]) {
    p.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
    p.on('pageerror', (e) => cspViolations.push(`page error: ${e.message}`));
    // Leaving a view with unsaved edits asks (a confirm): the tests that leave edits behind on
    // purpose (refused values) go on; the unsaved-edits test answers it itself.
    p.on('dialog', (d) => { if (!leaveAnswer.has(p)) void d.accept(); });
  }
});
/** Pages whose leave question a test answers itself. */
const leaveAnswer = new Set<import('playwright-core').Page>();
after(async () => {
  await browser?.close();
  await agent?.stop();
  await sim?.stop();
  if (!skip) {
    console.log(`# screenshots: ${shots}`);
    if (process.env.PRINTBOX_UI_DOCS) {
      mkdirSync(join(repoRoot, 'docs/ui'), { recursive: true });
      for (const n of TOUR) if (existsSync(join(shots, `${n}.png`))) copyFileSync(join(shots, `${n}.png`), join(repoRoot, 'docs/ui', `${n}.png`));
    }
  }
});

async function shot(page: import('playwright-core').Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true, scale: 'css' });
}

async function go(page: import('playwright-core').Page, hash: string, ready: string): Promise<void> {
  if (page.url().startsWith(base)) await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  else await page.goto(`${base}/${hash}`);
  await page.waitForSelector(ready);
}

const settingsNow = async () => {
  const s = expectJson(await agent.get('/settings')) as Record<string, unknown>;
  delete s.storage; // measured every minute
  return s;
};

test('printers: saved printers with meters (mono + colour when there is no total), supplies, status; search; hide', { skip }, async () => {
  await go(desktop, '#/printers', `#saved[data-loaded] tr[data-serial="${MONO_COLOUR}"]`);
  await desktop.waitForSelector('#conn[data-state="live"]');
  assert.equal(await desktop.textContent('#conn'), 'Live');
  const mc = desktop.locator(`#saved tr[data-serial="${MONO_COLOUR}"]`);
  assert.equal(await mc.locator('.meter-total').textContent(), '1,545', 'the total is mono + colour');
  assert.match((await mc.textContent()) ?? '', /cyan.*9% low/, 'a low supply is marked');
  const big = desktop.locator(`#saved tr[data-serial="${TWO_YEARS}"]`);
  assert.match((await big.textContent()) ?? '', /Paper jam in tray 2/);
  // Empties soonest: black drains 1 %/day and is at 10 %; one reading is no forecast.
  assert.match((await big.locator('td.soonest').textContent()) ?? '', /^black ~(9|10|11) d$/);
  assert.match((await big.locator('td.soonest').getAttribute('title')) ?? '', /^Empty about \d{4}-\d{2}-\d{2}, about [\d,]+ pages \(confidence \d+%\)$/);
  assert.equal(await mc.locator('td.soonest').textContent(), '–');
  // Status as it is: a normal state plain, a line said twice shown once, silence with its local time and no OK.
  const sleepy = desktop.locator(`#saved tr[data-serial="${SLEEPY}"] td[data-label="Status"] .badge`);
  const badges = await sleepy.evaluateAll((els) => els.map((e) => `${e.className}|${e.textContent}`));
  const localSilent = await desktop.evaluate((iso) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)), SILENT_SINCE);
  assert.deepEqual(badges, ['badge|Sleep', 'badge bad|Ink is low.', `badge bad|Not answering since ${localSilent}`]);
  // The printer's own web page, through the box, where it has one (a web UI URL or port 80/443).
  assert.equal(await big.locator('a.web-page').getAttribute('href'), `./proxy/${TWO_YEARS}/`);
  assert.equal(await big.locator('a.web-page').getAttribute('target'), '_blank');
  assert.equal(await mc.locator('a.web-page').count(), 0, 'no web page known: no button');
  // Keyboard: the first Tab reaches the skip link, which moves focus to the page without leaving it.
  await desktop.reload();
  await desktop.waitForSelector(`#saved[data-loaded] tr[data-serial="${MONO_COLOUR}"]`);
  await desktop.keyboard.press('Tab');
  assert.equal(await desktop.evaluate('document.activeElement.id'), 'skip');
  await desktop.keyboard.press('Enter');
  assert.equal(await desktop.evaluate('document.activeElement.id'), 'view');
  assert.equal(new URL(desktop.url()).hash, '#/printers');
  await accessible(desktop, 'printers');
  await shot(desktop, 'printers-desktop');

  await desktop.fill('#printer-search', 'reception');
  await desktop.waitForSelector(`#saved tr[data-serial="${TWO_YEARS}"]`, { state: 'detached' });
  assert.equal(await desktop.locator('#saved tbody tr').count(), 1);
  await desktop.fill('#printer-search', '');
  await desktop.click(`button[data-hide="${MONO_COLOUR}"]`);
  await desktop.waitForSelector(`#saved tr[data-serial="${MONO_COLOUR}"]`, { state: 'detached' });
  assert.equal((expectJson(await agent.get(`/api/devices/profile?serial=${MONO_COLOUR}`)) as any).device.visible, false);
  await desktop.selectOption('#printer-filter', 'hidden');
  await desktop.click(`button[data-hide="${MONO_COLOUR}"]`); // "Show" again
  await desktop.waitForSelector(`#saved tr[data-serial="${MONO_COLOUR}"]`, { state: 'detached' });
  assert.equal((expectJson(await agent.get(`/api/devices/profile?serial=${MONO_COLOUR}`)) as any).device.visible, true);
  await desktop.selectOption('#printer-filter', 'visible');

  await go(phone, '#/printers', `#saved[data-loaded] tr[data-serial="${MONO_COLOUR}"]`);
  await fitsWidth(phone, 'printers (phone)');
  await accessible(phone, 'printers (phone)');
  await shot(phone, 'printers-phone');
});

test('discovered: no range enabled says so, a scan with nothing to scan says why; save and hide', { skip }, async () => {
  await go(desktop, '#/discovered', `#discovered tr[data-serial="${DISCOVERED}"]`);
  assert.match((await desktop.textContent('#no-ranges')) ?? '', /No ranges enabled: turn on subnet scan or add a range/);
  await desktop.click('#scan');
  await desktop.waitForFunction(() => /Scan done/.test(document.getElementById('scan-state')?.textContent ?? ''));
  assert.match((await desktop.textContent('#scan-state')) ?? '', /Scan done: 0 found \(nothing was enabled to scan/);
  // How each was found, in plain words, and its web page: a link only for an http(s) URL, in a new
  // tab that gets no handle on the box's page.
  const announced = desktop.locator(`#discovered tr[data-serial="${DISCOVERED}"]`);
  assert.equal(await announced.locator('.found-by').textContent(), 'IPP, mDNS');
  assert.match((await announced.textContent()) ?? '', /mDNS: _ipp\._tcp; IPP: ipp port 631 answered Get-Printer-Attributes/);
  const link = announced.locator('a.web-ui');
  assert.equal(await link.getAttribute('href'), 'http://127.0.1.62/general/status.html');
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
  const wsd = desktop.locator(`#discovered tr[data-serial="${WSD_ONLY}"]`);
  assert.equal(await wsd.locator('.found-by').textContent(), 'port probe, WS-Discovery');
  assert.match((await wsd.textContent()) ?? '', /WS-Discovery: Hello \(wprt:PrintDeviceType\); port probe: 9100 open/);
  assert.equal(await wsd.locator('a').count(), 0, 'a javascript: URL is no link');
  assert.equal(await wsd.locator('.web-ui').textContent(), 'javascript:alert(document.cookie)', 'but it is shown, as text');
  assert.equal(await desktop.locator(`#discovered tr[data-serial="${TO_HIDE}"] .found-by`).textContent(), 'imported', 'nothing recorded: imported');
  await accessible(desktop, 'discovered');
  await go(phone, '#/discovered', `#discovered tr[data-serial="${DISCOVERED}"]`);
  await fitsWidth(phone, 'discovered (phone)');
  await accessible(phone, 'discovered (phone)');
  await shot(phone, 'discovered-phone');

  await desktop.click(`button[data-save="${DISCOVERED}"]`);
  await desktop.waitForSelector(`#discovered tr[data-serial="${DISCOVERED}"]`, { state: 'detached' });
  assert.equal((expectJson(await agent.get(`/api/devices/profile?serial=${DISCOVERED}`)) as any).device.is_saved, true);
  await desktop.click(`button[data-hide="${TO_HIDE}"]`);
  await desktop.waitForSelector(`#discovered tr[data-serial="${TO_HIDE}"]`, { state: 'detached' });
  const hidden = (expectJson(await agent.get(`/api/devices/profile?serial=${TO_HIDE}`)) as any).device;
  assert.equal(hidden.visible, false);
  assert.equal(hidden.is_saved, false);
});

test('settings: errors under their fields and nothing changes (ranges, polling, SNMPv3 key, server URL); good values saved; secrets never come back', { skip }, async () => {
  const before = await settingsNow();
  await go(desktop, '#/settings', '#s-discovery-ranges_text');
  assert.match((await desktop.textContent('#settings-no-ranges')) ?? '', /No ranges enabled/);
  await desktop.check('#s-discovery-manual_ranges');
  await desktop.fill('#s-discovery-ranges_text', `${SIM_ADDRESS}\n127.0.0.0/8`);
  await desktop.click('#settings-discovery button[type=submit]');
  await desktop.waitForFunction(() => (document.getElementById('s-discovery-ranges_text-err')?.textContent ?? '') !== '');
  assert.match((await desktop.textContent('#s-discovery-ranges_text-err')) ?? '', /^The ranges: line 2: /);
  assert.equal(await desktop.getAttribute('#s-discovery-ranges_text', 'aria-invalid'), 'true');
  assert.match((await desktop.textContent('#settings-discovery-msg')) ?? '', /Nothing was changed/);
  assert.deepEqual(await settingsNow(), before, 'nothing changed');
  // A bad polling interval: its error under its own field, in its own part (leaving the refused
  // ranges unsaved: the question is answered yes).
  await go(desktop, '#/settings/polling', '#s-collection-interval_minutes');
  await desktop.fill('#s-collection-interval_minutes', '0');
  await desktop.click('#settings-polling button[type=submit]');
  await desktop.waitForFunction(() => (document.getElementById('s-collection-interval_minutes-err')?.textContent ?? '') !== '');
  assert.match((await desktop.textContent('#s-collection-interval_minutes-err')) ?? '', /^The polling interval \(minutes\) needs a whole number from 1 to 1440$/);
  await accessible(desktop, 'settings with errors');
  await shot(desktop, 'settings-error-desktop');
  assert.deepEqual(await settingsNow(), before, 'nothing changed');

  await go(desktop, '#/settings/discovery', '#s-discovery-ranges_text');
  await desktop.check('#s-discovery-manual_ranges');
  await desktop.fill('#s-discovery-ranges_text', `${SIM_ADDRESS}-2`);
  await desktop.click('#settings-discovery button[type=submit]');
  await desktop.waitForFunction(() => document.getElementById('settings-discovery-msg')?.textContent === 'Saved.');
  const after = (await settingsNow()) as any;
  assert.equal(after.discovery.ranges_text, `${SIM_ADDRESS}-2`);
  assert.equal(after.discovery.manual_ranges, true);
  assert.equal(after.snmp.port, sim.port, 'other sections untouched');
  assert.equal(await desktop.isHidden('#settings-no-ranges'), true);

  // An SNMPv3 user: its keys are stored and never come back to the page.
  await go(desktop, '#/settings/snmp', '#settings-snmp');
  await desktop.click('button:text("Add an SNMPv3 user")');
  await desktop.fill('#s-snmp-v3-0--user', 'tech');
  await desktop.fill('#s-snmp-v3-0--auth_key', 'short');
  await desktop.fill('#s-snmp-v3-0--priv_key', 'privsecret');
  await desktop.click('#settings-snmp button[type=submit]');
  await desktop.waitForFunction(() => (document.getElementById('s-snmp-v3-0--auth_key-err')?.textContent ?? '') !== '');
  assert.match((await desktop.textContent('#s-snmp-v3-0--auth_key-err')) ?? '', /^SNMPv3 user 1: the authentication key needs at least 8 characters$/);
  await desktop.fill('#s-snmp-v3-0--auth_key', 'authsecret');
  await desktop.click('#settings-snmp button[type=submit]');
  await desktop.waitForFunction(() => document.getElementById('settings-snmp-msg')?.textContent === 'Saved.');
  assert.equal(await desktop.inputValue('#s-snmp-v3-0--auth_key'), '', 'the key is not kept in the page');
  assert.equal(((await settingsNow()) as any).snmp.v3[0].user, 'tech');
  await go(desktop, '#/printers', '#saved');
  await go(desktop, '#/settings/snmp', '#s-snmp-v3-0--auth_key');
  assert.equal(await desktop.inputValue('#s-snmp-v3-0--auth_key'), '', 'never echoed back');
  assert.doesNotMatch(await desktop.content(), /authsecret|privsecret/);
  expectJson(await agent.post('/settings', { snmp: { v3: [] } })); // the simulator speaks v2c only: keep the scan below short

  // The central server: a bad address under its field; a good one (a closed loopback port) starts
  // the enrollment, and the link's state follows live (server_status); the token never comes back.
  await go(desktop, '#/settings/server', '#s-server-url');
  assert.equal(await desktop.inputValue('#s-server-enrollment_token'), '', 'no secret in the page');
  await desktop.fill('#s-server-url', 'ftp://127.0.0.1/');
  await desktop.click('#settings-server button[type=submit]');
  await desktop.waitForFunction(() => (document.getElementById('s-server-url-err')?.textContent ?? '') !== '');
  assert.equal(await desktop.textContent('#s-server-url-err'), 'The server address must be an address starting with http:// or https://');
  assert.match((await desktop.textContent('#server-link')) ?? '', /off/);
  await desktop.fill('#s-server-url', 'https://127.0.0.1:9');
  await desktop.fill('#s-server-enrollment_token', 'join-secret-123');
  await desktop.click('#settings-server button[type=submit]');
  await desktop.waitForFunction(() => !/^off/.test(document.querySelector('#server-link .badge')?.textContent ?? 'off'));
  assert.equal(await desktop.inputValue('#s-server-enrollment_token'), '');
  assert.doesNotMatch(await desktop.content(), /join-secret-123/);
  expectJson(await agent.post('/settings', { server: { url: '' } }));
  await desktop.waitForFunction(() => /^off/.test(document.querySelector('#server-link .badge')?.textContent ?? ''));

  await go(phone, '#/settings', '#s-discovery-ranges_text');
  await fitsWidth(phone, 'settings (phone)');
  await accessible(phone, 'settings (phone)');
  await shot(phone, 'settings-phone');
});

test('updates: the running version and why this machine cannot update; a bad manifest URL is refused under its field; a good one is saved', { skip }, async () => {
  await go(desktop, '#/settings/updates', '#update-state dl');
  assert.match((await desktop.textContent('#update-state')) ?? '', /Running0\.\d+\.\d+/);
  assert.match((await desktop.textContent('#update-msg')) ?? '', /updates need RAUC/);
  assert.equal(await desktop.isDisabled('#update-check'), true, 'no check without RAUC');
  assert.equal(await desktop.isHidden('#update-install'), true, 'nothing to install');
  const before = await settingsNow();
  await desktop.fill('#s-update-url', 'ftp://updates.example/m.json');
  await desktop.click('#settings-update button[type=submit]');
  await desktop.waitForFunction(() => (document.getElementById('s-update-url-err')?.textContent ?? '') !== '');
  assert.match((await desktop.textContent('#s-update-url-err')) ?? '', /^The update manifest URL must be an address starting with http:\/\/ or https:\/\/$/);
  assert.deepEqual(await settingsNow(), before, 'nothing changed');
  await desktop.fill('#s-update-url', 'https://updates.example/printbox/manifest.json');
  await desktop.click('#settings-update button[type=submit]');
  await desktop.waitForFunction(() => document.getElementById('settings-update-msg')?.textContent === 'Saved.');
  assert.equal(((await settingsNow()) as { update: { url: string } }).update.url, 'https://updates.example/printbox/manifest.json');
  await accessible(desktop, 'settings with the updates section');
});

test('live update: a scan shows its progress and the printer it finds without a reload', { skip }, async () => {
  await go(desktop, '#/discovered', '#scan');
  // Every text the scan line shows, as it changes.
  await desktop.evaluate(`{ const el = document.getElementById('scan-state'); window.__scanTexts = []; new MutationObserver(() => window.__scanTexts.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true }); }`);
  await desktop.click('#scan');
  await desktop.waitForSelector(`#discovered tr[data-serial="${SIM_SERIAL}"]`, { timeout: 30_000 });
  await desktop.waitForFunction(() => /Scan done: 1 found/.test(document.getElementById('scan-state')?.textContent ?? ''));
  assert.match((await desktop.textContent(`#discovered tr[data-serial="${SIM_SERIAL}"]`)) ?? '', /SNMP scan \(range\)/, 'why it is listed: found by the range scan');
  await shot(desktop, 'discovered-desktop');
  const texts = (await desktop.evaluate('window.__scanTexts')) as string[];
  assert.ok(texts.some((t) => /^Scanning: \d+ of 2 addresses/.test(t)), `progress shown: ${JSON.stringify(texts)}`);
  assert.match((await desktop.textContent('#status')) ?? '', /Scan done: 1 found/, 'the header line too');
  await desktop.click('#save-all');
  await desktop.waitForSelector(`#discovered tr[data-serial="${SIM_SERIAL}"]`, { state: 'detached' });
  assert.equal((expectJson(await agent.get(`/api/devices/profile?serial=${SIM_SERIAL}`)) as any).device.is_saved, true);
});

test('alerts: the header counts unacknowledged alerts; the Alerts view lists open ones first and acknowledges; the rules are a settings form', { skip }, async () => {
  // Judged at the agent's start from what the store holds: the seeded jam and the 9% cyan (before
  // the printer page's test deletes the printer with the jam).
  const openNow = async () => (expectJson(await agent.get('/api/alerts')) as any[]);
  const jam = await (async () => {
    for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
      const j = (await openNow()).find((a) => a.serial === TWO_YEARS && a.kind === 'jam');
      if (j) return j;
    }
    throw new Error('no jam alert for the seeded printer');
  })();
  assert.ok((await openNow()).some((a) => a.serial === MONO_COLOUR && a.kind === 'supply_low' && a.supply === 'cyan'));
  const unacked = (await openNow()).filter((a) => !a.acknowledged_at).length;
  await go(desktop, '#/alerts', '#alerts[data-loaded="true"]');
  await desktop.waitForFunction((n) => document.getElementById('alert-count')?.textContent === String(n), unacked);
  assert.equal(await desktop.isVisible('#alert-count'), true);
  assert.equal(await desktop.locator('#alerts tbody tr').count(), (await openNow()).length);
  // In plain words: the printer by model, location and address; the jam said once.
  assert.equal(await desktop.textContent(`#alerts tr[data-alert="${jam.id}"] td[data-label="Printer"]`), 'Kyocera TASKalfa 2554ciFloor 3, 127.0.1.60');
  assert.equal(await desktop.textContent(`#alerts tr[data-alert="${jam.id}"] td[data-label="Alert"]`), 'Paper jam in tray 2');
  assert.match((await desktop.textContent(`#alerts tr[data-alert="${jam.id}"]`)) ?? '', /Paper jam in tray 2critical/);
  await accessible(desktop, 'alerts');
  await shot(desktop, 'alerts-desktop');
  // Acknowledge through the button: the row says so, the button goes, the count drops, the API agrees.
  await desktop.click(`#alerts tr[data-alert="${jam.id}"] button.ack`);
  await desktop.waitForFunction((id) => /acknowledged/.test(document.querySelector(`#alerts tr[data-alert="${id}"]`)?.textContent ?? ''), jam.id);
  assert.equal(await desktop.locator(`#alerts tr[data-alert="${jam.id}"] button.ack`).count(), 0);
  await desktop.waitForFunction((n) => document.getElementById('alert-count')?.textContent === String(n), unacked - 1);
  assert.ok((await openNow()).find((a) => a.id === jam.id).acknowledged_at);
  // One acknowledged elsewhere (the API, another tab): its `alert` event brings the count down here,
  // with the stream live (no refresh round).
  assert.equal(await desktop.getAttribute('#conn', 'data-state'), 'live');
  const other = (await openNow()).find((a) => !a.acknowledged_at);
  expectJson(await agent.post('/api/alerts/acknowledge', { id: other.id }));
  await desktop.waitForFunction((n) => document.getElementById('alert-count')?.textContent === String(n), unacked - 2);
  await desktop.waitForSelector(`#alerts tr[data-alert="${other.id}"]:has-text("acknowledged")`);
  // History: the checkbox asks for cleared ones too (none yet: the same rows).
  await desktop.check('#alerts-history');
  await desktop.waitForFunction((n) => document.querySelectorAll('#alerts tbody tr').length === n, (await openNow()).length);
  // The rules: a bad value is refused under its field; a good one is saved.
  await go(desktop, '#/settings/polling', '#settings-alerts');
  await desktop.fill('#s-alerts-supply_below_percent', '150');
  await desktop.click('#settings-alerts button[type="submit"]');
  await desktop.waitForFunction(() => /from 0 to 100/.test(document.getElementById('s-alerts-supply_below_percent-err')?.textContent ?? ''));
  assert.equal(((expectJson(await agent.get('/settings')) as any).alerts.supply_below_percent), 15);
  await desktop.fill('#s-alerts-supply_below_percent', '20');
  await desktop.click('#settings-alerts button[type="submit"]');
  await desktop.waitForFunction(() => document.getElementById('settings-alerts-msg')?.textContent === 'Saved.');
  assert.equal(((expectJson(await agent.get('/settings')) as any).alerts.supply_below_percent), 20);
  expectJson(await agent.post('/settings', { alerts: { supply_below_percent: 15 } }));
  await go(phone, '#/alerts', '#alerts[data-loaded="true"]');
  await fitsWidth(phone, 'alerts (phone)');
  await accessible(phone, 'alerts (phone)');
  assert.deepEqual(cspViolations, [], 'no CSP violation or script error');
});

test('notifications: a settings part with rules, write-only secrets, "Send a test" and the outbox\'s failures', { skip: skip || (lanUnavailable() ?? false) }, async () => {
  // A box never sends a webhook to loopback or to itself: this part is shown by an agent of its own
  // in a test LAN's box namespace (kit/lan.ts), with a printer in a paper jam, reached by the
  // browser through a relay to the box's loopback (kit/ns-relay.ts); the receiver, here in the
  // test, is reached by that box at a laptop's address (198.18.7.2) through another relay.
  const lan = createLan();
  const lanAgent = await startAgentInLan(lan, { seed: ndjson([device('UI-JAM-1', { ip: '198.18.7.60', is_saved: true, manufacturer: 'Kyocera', model: 'TASKalfa 2554ci', status_messages: ['Paper jam in tray 2'] })]) });
  const [mainAgent, mainBase] = [agent, base];
  [agent, base] = [lanAgent, `https://127.0.0.1:${lanAgent.httpsPort}`];
  // A webhook receiver: /ok answers 204, /down 500 (a failing delivery to show).
  const calls: string[] = [];
  const receiver = http.createServer((req, res) => {
    calls.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      res.writeHead(req.url === '/ok' ? 204 : 500);
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverPort = (receiver.address() as { port: number }).port;
  const relay = await relayInto(lan.laptopNs, '198.18.7.2', 8080, receiverPort);
  const url = (p: string) => `http://198.18.7.2:8080${p}`;
  try {
    await go(desktop, '#/settings/notifications', '#settings-notifications');
    assert.equal(await desktop.getAttribute('#s-notifications-webhook_secret', 'placeholder'), 'not set');
    // A rule with a bad address: refused under its field, nothing saved.
    await desktop.click('#notify-add-rule');
    await desktop.fill('#s-notifications-recipients-0--emails', 'not-an-address');
    await desktop.click('#settings-notifications button[type="submit"]');
    await desktop.waitForFunction(() => /e-mail address/.test(document.getElementById('s-notifications-recipients-0--emails-err')?.textContent ?? ''));
    assert.deepEqual((expectJson(await agent.get('/settings')) as any).notifications.recipients, []);
    // The receiver where it really listens, the test's loopback: refused under its field.
    await desktop.fill('#s-notifications-recipients-0--emails', '');
    await desktop.fill('#s-notifications-recipients-0--webhooks', `http://127.0.0.1:${receiverPort}/ok`);
    await desktop.fill('#s-notifications-webhook_secret', 'ui-secret-0123456789');
    await desktop.click('#settings-notifications button[type="submit"]');
    await desktop.waitForFunction(() => /must not name a loopback address/.test(document.getElementById('s-notifications-recipients-0--webhooks-err')?.textContent ?? ''));
    assert.deepEqual((expectJson(await agent.get('/settings')) as any).notifications.recipients, []);
    // A webhook rule with a secret, each alert at once.
    await desktop.fill('#s-notifications-recipients-0--webhooks', `${url('/ok')}\n${url('/down')}`);
    await desktop.fill('#s-notifications-webhook_secret', 'ui-secret-0123456789');
    await desktop.fill('#s-notifications-digest_minutes', '0');
    await desktop.click('#settings-notifications button[type="submit"]');
    await desktop.waitForFunction(() => document.getElementById('settings-notifications-msg')?.textContent === 'Saved.');
    assert.equal(await desktop.inputValue('#s-notifications-webhook_secret'), '', 'the secret is not kept in the page');
    assert.equal(await desktop.getAttribute('#s-notifications-webhook_secret', 'placeholder'), 'set (unchanged)');
    const n = (expectJson(await agent.get('/settings')) as any).notifications;
    assert.deepEqual(n.recipients, [{ kinds: [], severities: [], emails: [], webhooks: [url('/ok'), url('/down')] }]);
    assert.equal(n.webhook_secret_set, true);
    // Send a test: one delivered, one not, each said.
    await desktop.click('#notify-test');
    await desktop.waitForFunction(() => document.querySelectorAll('#notify-test-result li').length === 2);
    const result = (await desktop.textContent('#notify-test-result')) ?? '';
    assert.match(result, /Delivered to http:\/\/198\.18\.7\.2:8080\/ok/);
    assert.match(result, /Not delivered to http:\/\/198\.18\.7\.2:8080\/down: HTTP 500/);
    // An alert opened (the jam rule turned off and on again): the failing delivery is listed with why.
    const jamOpen = async () => (expectJson(await agent.get('/api/alerts')) as any[]).some((a) => a.kind === 'jam');
    expectJson(await agent.post('/settings', { alerts: { jam: false } }));
    for (const end = Date.now() + 60_000; (await jamOpen()) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 200));
    expectJson(await agent.post('/settings', { alerts: { jam: true } }));
    await desktop.waitForFunction(() => /HTTP 500/.test(document.getElementById('notify-outbox')?.textContent ?? ''), undefined, { timeout: 60_000 });
    assert.ok(calls.filter((c) => c === '/ok').length >= 2, 'the alert reached the working webhook');
    await desktop.locator('#notifications').screenshot({ path: join(shots, 'notifications-desktop.png') });
    await accessible(desktop, 'settings with notifications');
    assert.deepEqual(cspViolations, [], 'no CSP violation or script error');
  } finally {
    receiver.close();
    relay.stop();
    [agent, base] = [mainAgent, mainBase];
    await lanAgent.stop();
    lan.destroy();
  }
});

test('printer page: identity, edit with the lock rule, chart period switch and custom range, read now, delete', { skip }, async () => {
  await go(desktop, '#/printers', `#saved[data-loaded] tr[data-serial="${TWO_YEARS}"]`);
  await desktop.click(`#saved tr[data-serial="${TWO_YEARS}"] a`);
  await desktop.waitForSelector('#meter-chart[data-period="month"] canvas');
  assert.match((await desktop.textContent('#identity')) ?? '', /2XN_S000\.002\.301.*00:17:c8:aa:bb:cc/s);
  await desktop.waitForFunction(() => /Found by/.test(document.getElementById('identity')?.textContent ?? ''));
  assert.match((await desktop.textContent('#identity')) ?? '', /Found byIPP, SNMP scan \(subnet\)What answeredIPP: ipps port 443 answered Get-Printer-Attributes/);
  const web = desktop.locator('#identity a.web-ui');
  assert.equal(await web.getAttribute('href'), 'https://127.0.1.60/startwlm/Start_Wlm.htm');
  assert.equal(await web.getAttribute('target'), '_blank');
  assert.equal(await web.getAttribute('rel'), 'noopener noreferrer');
  assert.equal(await desktop.locator('#web-page a.web-page').getAttribute('href'), `./proxy/${TWO_YEARS}/`, 'the Web page button beside Read now');
  const monthPoints = Number(await desktop.getAttribute('#meter-chart', 'data-points'));
  assert.ok(monthPoints > 50, `month: ${monthPoints} points`);
  await desktop.click('button[data-period="year"]');
  await desktop.waitForSelector('#meter-chart[data-period="year"] canvas');
  const yearPoints = Number(await desktop.getAttribute('#meter-chart', 'data-points'));
  assert.ok(yearPoints > 300, `year: ${yearPoints} points`);
  assert.equal(await desktop.getAttribute('button[data-period="year"]', 'aria-pressed'), 'true');
  assert.equal(await desktop.locator('#supply-chart canvas').count(), 1, 'supplies over time');
  // Days to empty beside each supply bar: black ~10 days; cyan stays at 60 %, no forecast.
  await desktop.waitForSelector('#supply-bars .days[data-supply="black"]');
  assert.match((await desktop.textContent('#supply-bars .days[data-supply="black"]')) ?? '', /^~(9|10|11) d$/);
  assert.equal(await desktop.textContent('#supply-bars .days[data-supply="cyan"]'), '–');
  assert.match((await desktop.getAttribute('#supply-bars .days[data-supply="cyan"]', 'title')) ?? '', /^No forecast: (the level is not falling|not enough history)/);
  // A custom range from the bounds: the first year only.
  const min = await desktop.getAttribute('#since', 'min');
  assert.ok(min && Date.now() - Date.parse(min) > 700 * DAY, `bounds start ${min}`);
  await desktop.fill('#since', min!);
  await desktop.fill('#until', new Date(Date.parse(min!) + 200 * DAY).toISOString().slice(0, 10));
  await desktop.click('#custom-go');
  await desktop.waitForSelector('#meter-chart[data-period="custom"] canvas');
  assert.ok(Number(await desktop.getAttribute('#meter-chart', 'data-points')) >= 5);

  // Edit: the asset number is kept from then on (locked_fields).
  await desktop.fill('#f-asset_number', 'A-7731');
  await desktop.fill('#f-location', 'Floor 3, copy room');
  await desktop.click('#edit button[type=submit]');
  await desktop.waitForFunction(() => document.querySelector('#edit [role=status]')?.textContent === 'Saved.');
  const dev = (expectJson(await agent.get(`/api/devices/profile?serial=${TWO_YEARS}`)) as any).device;
  assert.equal(dev.asset_number, 'A-7731');
  assert.equal(dev.location, 'Floor 3, copy room');
  assert.deepEqual(dev.locked_fields.map((l: any) => l.field).sort(), ['asset_number', 'location']);
  assert.match((await desktop.textContent('#f-asset_number-lock')) ?? '', /Set by a person/);
  await accessible(desktop, 'printer page');
  await shot(desktop, 'printer-desktop');
  await go(phone, `#/printer/${TWO_YEARS}`, '#meter-chart canvas');
  await fitsWidth(phone, 'printer page (phone)');
  await accessible(phone, 'printer page (phone)');
  await shot(phone, 'printer-phone');

  // A web page that is not an http(s) URL is text on the printer's page too.
  await go(desktop, `#/printer/${WSD_ONLY}`, '#identity .web-ui');
  assert.equal(await desktop.locator('#identity a').count(), 0);
  assert.equal(await desktop.textContent('#identity .web-ui'), 'javascript:alert(document.cookie)');
  await desktop.waitForFunction(() => /Found by/.test(document.getElementById('identity')?.textContent ?? ''));
  assert.match((await desktop.textContent('#identity')) ?? '', /Found byport probe, WS-Discovery/);
  // No readings yet: the status box says so and nothing more (its missing supply bars were the text "null").
  assert.equal(await desktop.textContent('#printer-status'), 'OKNo readings yet: press Read now.');

  // Read now: the simulated printer answers.
  await go(desktop, `#/printer/${SIM_SERIAL}`, '#read-now');
  await desktop.click('#read-now');
  await desktop.waitForFunction(() => /^Read at /.test(document.querySelector('#read-now')?.closest('section')?.querySelector('[role=status]')?.textContent ?? ''));
  assert.equal(await desktop.textContent('#meter-total'), '7,432');
  // Its supply description "TK-1162" (prtMarkerSuppliesDescription.1.1) is the part number beside
  // the black toner; the waste box ("Waste Toner Box") has none. The P2040 reports no category counter.
  await desktop.waitForSelector('#supply-bars .part[data-supply="black"]');
  assert.equal(await desktop.textContent('#supply-bars .part[data-supply="black"]'), 'TK-1162');
  assert.equal(await desktop.locator('#supply-bars .part').count(), 1);
  assert.doesNotMatch((await desktop.textContent('#printer-status')) ?? '', /Printed|Copied|Duplex/);

  // Delete, with a confirmation that says the history goes too; Cancel first.
  await go(desktop, `#/printer/${TWO_YEARS}`, '#meter-chart canvas');
  await desktop.click('#delete');
  await desktop.waitForSelector('#confirm-delete[open]');
  assert.match((await desktop.textContent('#confirm-delete')) ?? '', /all its history/);
  await accessible(desktop, 'delete confirmation');
  await desktop.click('#confirm-delete button:text("Cancel")');
  await desktop.waitForSelector('#confirm-delete', { state: 'detached' });
  assert.equal(await desktop.evaluate('document.activeElement.id'), 'delete', 'focus back on Delete');
  await desktop.click('#delete');
  await desktop.keyboard.press('Escape');
  await desktop.waitForSelector('#confirm-delete', { state: 'detached' });
  assert.equal((await agent.get(`/api/devices/profile?serial=${TWO_YEARS}`)).status, 200, 'cancel keeps it');
  await desktop.click('#delete');
  await desktop.click('#confirm-delete-yes');
  await desktop.waitForSelector('#saved');
  assert.equal(new URL(desktop.url()).hash, '#/printers');
  assert.equal((await agent.get(`/api/devices/profile?serial=${TWO_YEARS}`)).status, 404);
  assert.equal((await agent.get(`/api/devices/metrics/bounds?serial=${TWO_YEARS}`)).status, 404, 'history gone');
});

test('pages per period: bars and a table of days, weeks and months in the box\'s time zone, with totals; 1280 and 390 px', { skip }, async () => {
  // The box's zone (display.time_zone), not the browser's: the browser is somewhere else.
  const zone = 'Europe/Berlin';
  expectJson(await agent.post('/settings', { display: { time_zone: zone } }));
  const digits = (t: string | null) => Number((t ?? '').replace(/[^0-9]/g, ''));
  for (const viewport of [DESKTOP, { width: 390, height: 844 }]) {
    const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport, timezoneId: 'America/Chicago', isMobile: viewport.width < 640, hasTouch: viewport.width < 640 });
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(`${base}/#/printer/${PAGES}`);
      await page.waitForSelector('#pages-chart[data-kind="day"] canvas');
      // The same numbers as the API's for the browser's zone: 31 days, the totals of each counter.
      const api = expectJson(await agent.get(`/api/devices/page-counts?serial=${PAGES}&period=day&tz=${encodeURIComponent(zone)}`)) as any;
      assert.equal(api.periods.length, 31);
      assert.equal(Number(await page.getAttribute('#pages-chart', 'data-periods')), 31);
      const totals = (await page.textContent('#period-totals')) ?? '';
      const m = /^Total: ([\d,.\s]+) pages in 31 days, ([\d,.\s]+) mono, ([\d,.\s]+) colour\.$/.exec(totals);
      assert.ok(m, totals);
      const [pages, mono, colour] = m.slice(1).map(digits);
      assert.deepEqual([pages, mono, colour], [api.totals.pages, api.totals.mono_pages, api.totals.color_pages]);
      assert.ok(api.totals.pages > 25 * 90, `about 96 pages a day: ${api.totals.pages}`);
      // The table: newest first, today "so far"; each row's pages as the API's.
      await page.click('.pages-details summary');
      const rows = page.locator('#pages-table tbody tr');
      assert.equal(await rows.count(), 31);
      assert.match((await rows.first().textContent()) ?? '', /so far/);
      assert.equal(digits(await rows.nth(1).locator('td').first().textContent()), api.periods[29].pages);
      assert.deepEqual(await page.locator('#pages-table thead th').allTextContents(), ['Period', 'Pages', 'Mono', 'Colour', 'Note']);
      assert.match((await page.getAttribute('#pages-chart', 'aria-label')) ?? '', /^Pages per day, bars; the table below lists the same numbers\. Total: /);
      const csv = new URL((await page.getAttribute('#pages-csv', 'href'))!, base);
      assert.equal(csv.searchParams.get('tz'), zone);
      assert.match((await page.textContent('#pages-zone')) ?? '', /Europe\/Berlin/);
      assert.equal(csv.searchParams.get('format'), 'csv');
      await fitsWidth(page, `pages per period, days (${viewport.width} px)`);
      await accessible(page, `pages per period, days (${viewport.width} px)`);
      // Weeks, then months: the bars and the table follow.
      await page.click('#pages-per-period button[data-kind="week"]');
      await page.waitForSelector('#pages-chart[data-kind="week"] canvas');
      assert.equal(await page.getAttribute('#pages-per-period button[data-kind="week"]', 'aria-pressed'), 'true');
      assert.match((await rows.nth(1).locator('th').textContent()) ?? '', /^Week \d+ \(from Mon/);
      await page.click('#pages-per-period button[data-kind="month"]');
      await page.waitForSelector('#pages-chart[data-kind="month"] canvas');
      assert.equal(Number(await page.getAttribute('#pages-chart', 'data-periods')), 12);
      await fitsWidth(page, `pages per period, months (${viewport.width} px)`);
      await accessible(page, `pages per period, months (${viewport.width} px)`);
      await page.locator('#pages-per-period').screenshot({ path: join(shots, `pages-per-period-${viewport.width < 640 ? 'phone' : 'desktop'}.png`) });
      assert.deepEqual(errors, []);
    } finally {
      await ctx.close();
    }
  }
});

test('logs: level filter, download link', { skip }, async () => {
  await go(desktop, '#/logs', '#log-lines');
  await desktop.selectOption('#log-level', 'debug');
  await desktop.waitForFunction(() => (document.getElementById('log-lines')?.children.length ?? 0) > 0);
  await desktop.selectOption('#log-level', 'error');
  await desktop.waitForFunction(() => /No records at this level|ERROR/.test(document.getElementById('log-lines')?.textContent ?? ''));
  // The link is relative to the page (docs/ui.md, the UI through the central server).
  assert.equal(await desktop.getAttribute('a[href="./logfile"]', 'download'), 'printbox-agent.log');
  assert.equal(await desktop.evaluate(`document.querySelector('a[href="./logfile"]').href`), `${base}/logfile`);
  await desktop.check('#log-follow');
  await accessible(desktop, 'logs');
  await desktop.selectOption('#log-level', 'info');
  await shot(desktop, 'logs-desktop');
  await go(phone, '#/logs', '#log-lines');
  await fitsWidth(phone, 'logs (phone)');
  assert.deepEqual(cspViolations, [], 'no CSP violation or script error');
});

test('backup: the download is a complete backup; a damaged file is refused with the agent\'s reason and changes nothing; the real file restores', { skip }, async () => {
  await go(desktop, '#/settings/backup', '#backup');
  const [download] = await Promise.all([desktop.waitForEvent('download'), desktop.click('#backup-download')]);
  const file = await download.path();
  const text = readFileSync(file, 'utf8');
  assert.match(download.suggestedFilename(), /^printbox-backup-.*\.ndjson$/);
  assert.equal(JSON.parse(text.trim().split('\n').at(-1)!).kind, 'trailer', 'the download ends with its trailer');
  const before = (await agent.get('/devices/list')).body;
  const cut = text.split('\n').slice(0, 2).join('\n') + '\n';
  const trailer = JSON.parse(text.trim().split('\n').at(-1)!) as { records: { device: number; metrics: Record<string, number> } };
  const rows = Object.values(trailer.records.metrics).reduce((a, b) => a + b, 0);
  // Restore asks first, with what the file holds and what it replaces; Cancel sends nothing.
  let posted = 0;
  const countPosts = (r: import('playwright-core').Request) => { if (r.method() === 'POST' && r.url().endsWith('/restore')) posted++; };
  desktop.on('request', countPosts);
  await desktop.setInputFiles('#restore input[type=file]', { name: 'backup.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(text) });
  await desktop.click('#restore button[type=submit]');
  await desktop.waitForSelector('#restore-confirm:not([hidden])');
  const asked = (await desktop.textContent('#restore-confirm')) ?? '';
  assert.match(asked, new RegExp(`Restore backup\\.ndjson\\? It holds ${trailer.records.device.toLocaleString('en-US')} printers and ${rows.toLocaleString('en-US')} meter rows\\.`));
  assert.match(asked, /Printers with the same serial on this box are replaced/);
  await accessible(desktop, 'settings, restore asking first');
  await desktop.click('#restore-confirm button:has-text("Cancel")');
  await desktop.waitForSelector('#restore p:has-text("Nothing was restored.")');
  assert.equal(posted, 0, 'Cancel sends nothing');
  // A damaged file: confirmed, refused with the agent's reason, nothing changed.
  await desktop.setInputFiles('#restore input[type=file]', { name: 'cut.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(cut) });
  await desktop.click('#restore button[type=submit]');
  await desktop.click('#restore-confirm button:has-text("Restore now")');
  await desktop.waitForSelector('#restore p.error:has-text("nothing was restored")');
  assert.equal((await agent.get('/devices/list')).body, before, 'nothing changed');
  await desktop.setInputFiles('#restore input[type=file]', { name: 'backup.ndjson', mimeType: 'application/x-ndjson', buffer: Buffer.from(text) });
  await desktop.click('#restore button[type=submit]');
  await desktop.click('#restore-confirm button:has-text("Restore now")');
  await desktop.waitForSelector('#restore p.okmsg:has-text("Restored")');
  desktop.off('request', countPosts);
  assert.equal(posted, 2, 'each confirmed restore sent once');
  await accessible(desktop, 'settings with the backup form');
});

test('connection state: the header says when the event stream is lost and when it is back', { skip }, async () => {
  await go(desktop, '#/printers', '#saved[data-loaded]');
  await desktop.waitForSelector('#conn[data-state="live"]');
  const restarted = agent.restart();
  await desktop.waitForSelector('#conn[data-state="connecting"]', { timeout: 15_000 });
  assert.equal(await desktop.textContent('#conn'), 'Reconnecting…');
  await restarted;
  await desktop.waitForSelector('#conn[data-state="live"]', { timeout: 20_000 });
});

test('live updates: a stream that says nothing (a proxy that holds it) turns into a periodic refresh, shown; back to live when the stream works', { skip }, async () => {
  // The page's own clock, set by the test (Playwright's clock, in a context of its own so that no
  // other test's page runs on it): the page's few seconds for the stream are counted in the page's
  // time, so a slow machine cannot make them look longer or shorter. Time stands still until moved.
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: DESKTOP });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
  page.on('pageerror', (e) => cspViolations.push(`page error: ${e.message}`));
  try {
    await page.clock.install();
    await page.clock.pauseAt(Date.now() + 60_000);
    // The stream's request is held unanswered, as a proxy that does not stream would hold it.
    await page.route('**/events', () => {});
    await page.goto(`${base}/#/printers`);
    await page.waitForSelector('#saved[data-loaded]');
    await page.waitForSelector('#conn[data-state="connecting"]');
    // The page gives the stream its few seconds (app.js LIVE_WAIT_MS, 5 s) of the page's time, however
    // long they take here: 4.9 s on, it still waits; at 5 s it gives up and says so.
    await page.clock.runFor(4_900);
    assert.equal(await page.isHidden('#live-note'), true, 'not given up before its 5 s');
    assert.equal(await page.getAttribute('#conn', 'data-state'), 'connecting');
    await page.clock.runFor(100);
    await page.waitForSelector('#live-note:not([hidden])');
    assert.equal(await page.getAttribute('#live-note', 'data-why'), 'silent');
    assert.match((await page.textContent('#live-note')) ?? '', /^Live updates unavailable: refreshing every \d+ s\.$/);
    assert.equal(await page.getAttribute('#conn', 'data-state'), 'polling');
    // axe-core runs on the page's timers: time flows again for it.
    await page.clock.resume();
    await accessible(page, 'printers, refreshing');
    // The page tries the stream again (every 30 s) and goes back to live events: 30 s on in the page.
    await page.unroute('**/events');
    await page.clock.runFor(30_000);
    await page.waitForSelector('#conn[data-state="live"]', { timeout: 60_000 });
    assert.equal(await page.isHidden('#live-note'), true);
  } finally {
    await ctx.close();
  }
});

test('account: in password mode, a wrong current password is shown under its field; the right one changes it', { skip }, async () => {
  const pw = await startAgent({ authMode: 'password', allowLocalAdmin: false });
  try {
    const made = await runCli(['passwd', 'tech'], { configPath: pw.configPath, input: 'first password\n' });
    assert.equal(made.code, 0, made.stderr);
    const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: PHONE, isMobile: true, hasTouch: true });
    const page = await ctx.newPage();
    const pwBase = `https://127.0.0.1:${pw.httpsPort}`;
    await page.goto(`${pwBase}/#/settings`);
    await page.fill('input[name=username]', 'tech');
    await page.fill('input[name=password]', 'first password');
    await Promise.all([page.waitForURL(`${pwBase}/`), page.click('button')]);
    await page.evaluate(`location.hash = '#/settings/accounts'`);
    await page.waitForSelector('#s-current_password');
    await page.fill('#s-current_password', 'not it');
    await page.fill('#s-new_password', 'second password');
    await page.click('#settings-account button[type=submit]');
    await page.waitForFunction(() => (document.getElementById('s-current_password-err')?.textContent ?? '') !== '');
    assert.equal(await page.textContent('#s-current_password-err'), 'current_password is wrong');
    await page.fill('#s-current_password', 'first password');
    await page.click('#settings-account button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#settings-account [role=status]')?.textContent === 'Password changed.');
    const login = (password: string) => pw.request('/api/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'tech', password }) });
    assert.equal((await login('second password')).status, 200);
    await ctx.close();
  } finally {
    await pw.stop();
  }
});

test('settings: moving the mail server asks for the account password; a wrong one is said and nothing changes, the right one saves', { skip }, async () => {
  const pw = await startAgent({ authMode: 'password', allowLocalAdmin: false });
  try {
    const made = await runCli(['passwd', 'tech'], { configPath: pw.configPath, input: 'mail password\n' });
    assert.equal(made.code, 0, made.stderr);
    const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: DESKTOP });
    const page = await ctx.newPage();
    const pwBase = `https://127.0.0.1:${pw.httpsPort}`;
    await page.goto(`${pwBase}/#/settings`);
    await page.fill('input[name=username]', 'tech');
    await page.fill('input[name=password]', 'mail password');
    await Promise.all([page.waitForURL(`${pwBase}/`), page.click('button')]);
    type Smtp = { status: number; n?: { smtp_host: string; smtp_password_set: boolean } };
    const ask = (body?: unknown) => page.evaluate(async (b): Promise<Smtp> => {
      const r = await fetch('./settings', b === undefined ? { headers: { Accept: 'application/json' } } : { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(b) });
      return { status: r.status, n: r.ok ? (await r.json()).notifications : undefined };
    }, body);
    // A mail server with a stored password (given with it: allowed without proof).
    const set = await ask({ notifications: { smtp_host: '127.0.0.1', smtp_port: 2525, smtp_security: 'starttls', smtp_user: 'box', smtp_password: 'mail-secret', smtp_from: 'box@example.test' } });
    assert.equal(set.status, 200);
    await page.evaluate(`location.hash = '#/settings/notifications'`);
    await page.waitForSelector('#s-notifications-smtp_host');
    await page.fill('#s-notifications-smtp_host', '127.0.0.2');
    await page.click('#settings-notifications button[type=submit]');
    const prompt = '#settings-notifications .confirm-password';
    await page.waitForSelector(prompt);
    assert.match((await page.textContent(prompt)) ?? '', /notifications\.smtp_host .*notifications\.smtp_password/);
    await page.fill(`${prompt} input[type=password]`, 'not it');
    await page.click(`${prompt} button.primary`);
    await page.waitForFunction((sel) => (document.querySelector(`${sel} [role=alert]`)?.textContent ?? '') !== '', prompt);
    assert.equal(await page.textContent(`${prompt} [role=alert]`), 'current_password is wrong. Nothing was changed');
    assert.equal((await ask()).n?.smtp_host, '127.0.0.1', 'nothing changed');
    await page.fill(`${prompt} input[type=password]`, 'mail password');
    await page.click(`${prompt} button.primary`);
    await page.waitForFunction(() => document.querySelector('#settings-notifications [role=status]')?.textContent === 'Saved.');
    assert.equal(await page.locator(prompt).count(), 0, 'the prompt is gone');
    const after = (await ask()).n;
    assert.equal(after?.smtp_host, '127.0.0.2');
    assert.equal(after?.smtp_password_set, true, 'the stored password now goes to the new host');
    await accessible(page, 'settings, saved with the password');
    await ctx.close();
  } finally {
    await pw.stop();
  }
});

test('settings: leaving with unsaved edits asks; staying keeps them, leaving goes; saved edits ask nothing. Mail encryption sets its port and says what it means', { skip }, async () => {
  await go(desktop, '#/settings/notifications', '#s-notifications-smtp_security');
  // The encryption choice moves a usual port to the new choice's, and its hint says what it means.
  await desktop.fill('#s-notifications-smtp_port', '587');
  await desktop.selectOption('#s-notifications-smtp_security', 'starttls');
  await desktop.selectOption('#s-notifications-smtp_security', 'tls');
  assert.equal(await desktop.inputValue('#s-notifications-smtp_port'), '465');
  await desktop.selectOption('#s-notifications-smtp_security', 'none');
  assert.equal(await desktop.inputValue('#s-notifications-smtp_port'), '25');
  assert.match((await desktop.textContent('#s-notifications-smtp_security-hint')) ?? '', /^Plain text: /);
  await desktop.fill('#s-notifications-smtp_port', '2525');
  await desktop.selectOption('#s-notifications-smtp_security', 'starttls');
  assert.equal(await desktop.inputValue('#s-notifications-smtp_port'), '2525', 'a port a person typed stays');
  assert.match((await desktop.textContent('#s-notifications-smtp_security-hint')) ?? '', /certificate is verified/);

  leaveAnswer.add(desktop);
  try {
    const asked: string[] = [];
    let stay = true;
    const answer = (d: import('playwright-core').Dialog) => { asked.push(d.message()); void (stay ? d.dismiss() : d.accept()); };
    desktop.on('dialog', answer);
    await desktop.evaluate(`location.hash = '#/printers'`);
    await desktop.waitForFunction(() => location.hash === '#/settings/notifications');
    assert.equal(asked.length, 1);
    assert.match(asked[0], /^The Notifications section has changes that are not saved\. Leave this page without saving\?$/);
    assert.equal(await desktop.inputValue('#s-notifications-smtp_port'), '2525', 'staying keeps the edits');
    stay = false;
    await desktop.evaluate(`location.hash = '#/printers'`);
    await desktop.waitForSelector('#saved[data-loaded]');
    assert.equal(asked.length, 2);
    // Saved edits: nothing to ask.
    await go(desktop, '#/settings/polling', '#settings-polling');
    const polling = desktop.locator('#settings-polling input[type=number]').first();
    await polling.fill(await polling.inputValue());
    await desktop.click('#settings-polling button[type=submit]');
    await desktop.waitForFunction(() => document.querySelector('#settings-polling [role=status]')?.textContent === 'Saved.');
    await go(desktop, '#/printers', '#saved[data-loaded]');
    assert.equal(asked.length, 2, 'no question after saving');
    desktop.off('dialog', answer);
  } finally {
    leaveAnswer.delete(desktop);
  }
});

test('a large site: 2,000 more saved printers; the page asks at most 7 things (who is signed in and the Discovered count among them), draws only the rows in view, and search reaches the last', { skip }, async () => {
  const now = Date.now();
  const N = 2000;
  const bulk = (i: number) => `BULK-${String(i).padStart(5, '0')}`;
  const lines: object[] = [];
  for (let i = 0; i < N; i++) {
    lines.push(device(bulk(i), { ip: `127.2.${i >> 8}.${i & 255}`, is_saved: true, manufacturer: 'Brother', model: 'MFC-L8900CDW', location: `Ward ${i}` }));
    lines.push(metrics(bulk(i), 'raw', now - HOUR, { page_count: 10_000 + i, toner_levels: { black: 70, cyan: 60, magenta: 50, yellow: 40 } }));
  }
  const imported = await importNdjson(agent.configPath, ndjson(lines));
  assert.equal(imported.code, 0, imported.stderr);
  const saved = (expectJson(await agent.get('/api/printers?filter=all&limit=1')) as { total: number }).total;
  assert.ok(saved >= N, `${saved} saved printers`);

  // A fresh context: nothing cached, every request the page makes is seen.
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: DESKTOP });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
  const requests: { url: string; type: string }[] = [];
  const failed: string[] = [];
  page.on('request', (r) => requests.push({ url: new URL(r.url()).pathname + new URL(r.url()).search, type: r.resourceType() }));
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  try {
    const opened = Date.now();
    await page.goto(`${base}/#/printers`);
    await page.waitForSelector(`#saved[data-loaded] tr[data-serial="${bulk(0)}"]`);
    const firstRows = Date.now() - opened;
    // The stream is one of them; let it say it is connected, so that the count is complete.
    await page.waitForSelector('#conn[data-state="live"]');
    const data = requests.filter((r) => !['document', 'script', 'stylesheet', 'image', 'other'].includes(r.type) || r.url.startsWith('/events'));
    console.log(`# 2,000 printers: first rows after ${firstRows} ms; requests: ${requests.map((r) => `${r.type} ${r.url}`).join(', ')}`);
    // The stream, the list, the alert count, the navigation's count of discovered printers awaiting
    // saving, settings, version, and who is signed in (the role decides the controls).
    assert.ok(data.length <= 7, `at most 7 requests for data, not ${data.length}: ${JSON.stringify(data)}`);
    assert.equal(data.filter((r) => r.url.startsWith('/api/printers')).length, 1, 'the list is one request');
    assert.ok(!requests.some((r) => r.url.startsWith('/api/devices/profile') || r.url.startsWith('/api/devices/forecast')), 'no request per printer');
    // (Headless Chromium asks no icon; test/agent/api/ui.test.ts asks it.)
    assert.deepEqual(failed, [], 'no failed request');
    // A windowed list: the rows in view and a margin exist, not 2,000 (test/agent/ui/printers-large.test.ts scrolls it).
    const drawn = await page.locator('#saved tbody tr').count();
    assert.ok(drawn > 0 && drawn <= 60, `${drawn} rows drawn`);
    assert.equal(await page.textContent('#printer-count'), `${saved.toLocaleString('en-US')} printers`);

    // Search, asked of the box once the typing pauses.
    const before = requests.length;
    const searched = Date.now();
    await page.fill('#printer-search', `ward ${N - 1}`);
    await page.waitForSelector(`#saved tr[data-serial="${bulk(N - 1)}"]`);
    const found = Date.now() - searched;
    await page.waitForFunction(() => document.querySelectorAll('#saved tbody tr').length === 1);
    console.log(`# search to the last printer: ${found} ms`);
    const asked = requests.slice(before).filter((r) => r.url.startsWith('/api/printers'));
    assert.equal(asked.length, 1, `one request for the whole search text: ${JSON.stringify(asked)}`);
    assert.match(asked[0].url, /search=ward%20\d+&filter=shown&offset=0&limit=50&forecast=true$/);
    assert.match((await page.locator(`#saved tr[data-serial="${bulk(N - 1)}"]`).textContent()) ?? '', /11,999/);
  } finally {
    await ctx.close();
  }
});
