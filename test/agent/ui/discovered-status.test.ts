// The Discovered page says where each entry stands and what discovery heard besides printers, in a
// real browser (Debian's Chromium, playwright-core, a fixed time zone and language) against a real
// agent. Records are seeded as discovery and polling leave them (the lines and raw_data of
// src/discovery/merge.ts and announced.ts): an answering printer, one that said goodbye on mDNS, and
// a saved printer that stopped answering and whose identity answered from another address.
// - Times are the browser's local time: the page's text equals what Intl makes of the instant in
//   the context's time zone (Asia/Kolkata, +05:30 all year), never the agent's UTC text.
// - The saved printer is marked Saved (no Save or Hide); Confirm move moves it (the API says so).
// - "Other hosts that answered" comes from a real scan of a real Linux SNMP recording (snmpsim on
//   127.0.35.1): collapsed, with the scan's count and why the host is not a printer.
// - axe-core: no serious or critical violation at 1280 and 390 px; nothing wider than the phone.
// Not covered here: the print-queue section (GET /discover/status fills print_queues only from a
// real print server's announcements: test/agent/lan/site-lan.test.ts asserts the API; the UI's
// reading of it is type-checked against docs/openapi.yaml by the build) and the mDNS interface
// warning (an agent in the root namespace runs without mDNS, so `mdns` is null).
// Screenshots go to a temporary directory; PRINTBOX_UI_DOCS=1 copies them to docs/ui/.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot, startAgent, expectJson, type Agent } from '../../kit/agent.js';
import { device, ndjson, rfc3339 } from '../../kit/seed.js';
import { fixturePath, startSnmpSim, ensureSnmpsim, type SnmpSim } from '../../kit/snmpsim.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { accessible } from '../../kit/page-checks.js';

const skip = chromiumMissing || (ensureSnmpsim() ?? false);
if (skip) console.log(`# discovered-status UI test skipped: ${skip}`);

const TZ = 'Asia/Kolkata';
const LOCALE = 'en-US';
const ANSWERING = 'DS-ANSWER-0001';
const GOODBYE = 'DS-BYE-0002';
const MOVED = 'DS-MOVE-0003';
const SAVED_IP = '127.0.34.1';
const NEW_IP = '127.0.34.2';
const LINUX_HOST = '127.0.35.1';
const LAST_SEEN = Date.UTC(2026, 2, 1, 9, 15); // 14:45 in Kolkata
const SINCE = Date.UTC(2026, 2, 1, 10, 0); // 15:30 in Kolkata
const MOVE_SEEN = Date.UTC(2026, 2, 1, 10, 20);
const shots = mkdtempSync(join(tmpdir(), 'printbox-discovered-status-'));

/** What the page must show for an instant: the browser's format in the context's zone. */
const local = (ms: number) => new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeStyle: 'short', timeZone: TZ }).format(ms);

let agent: Agent;
let sim: SnmpSim;
let browser: import('playwright-core').Browser;
let desktop: import('playwright-core').Page;
let phone: import('playwright-core').Page;
let base: string;
const pageErrors: string[] = [];


before(async () => {
  if (skip) return;
  const reason = `a reply with this serial came from ${NEW_IP}, not the saved address ${SAVED_IP}; SNMP v2c does not prove who sent the reply`;
  sim = await startSnmpSim({ endpoints: [{ address: LINUX_HOST, recording: fixturePath('linux-netsnmp.snmprec') }] });
  agent = await startAgent({
    seed: ndjson([
      device(ANSWERING, { ip: '127.0.34.10', manufacturer: 'Brother', model: 'HL-L5100DN', last_seen: LAST_SEEN,
        printer_info: { discovery_methods: ['ipp', 'mdns'], detection_reasons: ['mdns: _ipp._tcp', 'ipp: ipp port 631 answered Get-Printer-Attributes with a long printer-make-and-model that must wrap, not be cut off'] } }),
      device(GOODBYE, { ip: '127.0.34.11', manufacturer: 'HP', model: 'LaserJet M404', last_seen: LAST_SEEN,
        status_messages: ['offline: said goodbye on mDNS'], printer_info: { discovery_methods: ['mdns'], detection_reasons: ['mdns: _ipp._tcp'] } }),
      device(MOVED, {
        ip: SAVED_IP, is_saved: true, manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', mac_address: '00:17:c8:b9:02:de',
        printer_info: { discovery_methods: ['subnet_scan'] },
        status_messages: [`not answering since ${rfc3339(SINCE)}: no SNMP answer`, `address move pending: ${NEW_IP} answers with this serial; the record stays at ${SAVED_IP} until a person confirms the move`],
        raw_data: {
          not_answering_since: rfc3339(SINCE), last_poll_failed_at: rfc3339(SINCE),
          pending_move: {
            ip: NEW_IP, reported_mac: '00:17:c8:b9:02:de', snmp: 'v2c', model: 'ECOSYS P2040dw', manufacturer: 'Kyocera',
            first_seen_at: rfc3339(MOVE_SEEN), seen_at: rfc3339(MOVE_SEEN), sightings: 1, saved_address_answers: false,
            checks: { neighbour_mac: 'unknown', reported_mac: 'match', engine_id: 'unknown', identity: 'match' }, reason,
          },
        },
      }),
    ]),
  });
  // One manual range, the Linux host alone; nothing of the machine's own subnets.
  expectJson(await agent.post('/settings', {
    discovery: { allowed_ranges: ['127.0.0.0/8'], subnet_scan: false, manual_ranges: true, ranges_text: LINUX_HOST, snmp_timeout_ms: 800 },
    snmp: { port: sim.port, communities: ['public'] },
  }));
  browser = await launchChromium();
  base = `https://127.0.0.1:${agent.httpsPort}`;
  const context = (viewport: { width: number; height: number }, mobile: boolean) => browser.newContext({
    ignoreHTTPSErrors: true, timezoneId: TZ, locale: LOCALE, viewport, ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  desktop = await (await context({ width: 1280, height: 860 }, false)).newPage();
  phone = await (await context({ width: 390, height: 844 }, true)).newPage();
  for (const p of [desktop, phone]) {
    p.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) pageErrors.push(m.text()); });
    p.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
  }
});

after(async () => {
  await browser?.close();
  await agent?.stop();
  await sim?.stop();
  if (!skip) {
    console.log(`# screenshots: ${shots}`);
    if (process.env.PRINTBOX_UI_DOCS) {
      for (const n of ['discovered-status', 'discovered-status-phone']) copyFileSync(join(shots, `${n}.png`), join(repoRoot, 'docs/ui', `${n}.png`));
    }
  }
});

const row = (page: import('playwright-core').Page, serial: string) => page.locator(`#discovered tr[data-serial="${serial}"]`);

test('discovered: each entry says whether it answers in local time; a saved printer with a pending move is marked Saved with the move and its reason', { skip }, async () => {
  await desktop.goto(`${base}/#/discovered`);
  await desktop.waitForSelector(`#discovered tr[data-serial="${MOVED}"]`);
  // The context's zone is what the browser formats with (ICU may name it by its alias Asia/Calcutta).
  assert.equal(await desktop.evaluate(`new Date(${SINCE}).getTimezoneOffset()`), -330);

  const answering = row(desktop, ANSWERING);
  assert.equal(await answering.locator('.state').textContent(), 'Answering');
  assert.equal(await answering.locator('.state').getAttribute('class'), 'state', 'the normal state is neutral');
  assert.equal(await answering.locator('td.status .muted').textContent(), `last seen ${local(LAST_SEEN)}`);
  assert.match(local(LAST_SEEN), /^Mar 1, 2026, 2:45\sPM$/, '09:15 UTC is 14:45 in Kolkata');
  assert.equal(await answering.locator('.found-by').textContent(), 'IPP, mDNS');
  // How it was found is all there: the cell wraps, nothing is clipped.
  const how = answering.locator('td.how');
  assert.match((await how.textContent()) ?? '', /must wrap, not be cut off$/);
  assert.ok(await how.evaluate((el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth <= el.clientWidth), 'the "How it was found" cell is not cut off');

  const bye = row(desktop, GOODBYE);
  assert.equal(await bye.locator('.state').textContent(), 'Said goodbye');
  assert.equal(await bye.locator('td.status .muted').textContent(), `on mDNS, last seen ${local(LAST_SEEN)}`);

  const moved = row(desktop, MOVED);
  const since = await moved.locator('.state').first().textContent();
  assert.equal(since, `Not answering since ${local(SINCE)}`);
  assert.match(since ?? '', /^Not answering since Mar 1, 2026, 3:30\sPM$/, '10:00 UTC is 15:30 in Kolkata');
  assert.doesNotMatch((await moved.textContent()) ?? '', /2026-03-01T/, 'no raw UTC text');
  assert.equal(await moved.locator('td.status > .muted').first().textContent(), 'no SNMP answer');
  assert.equal(await moved.locator('.move .state').textContent(), `Move pending: seen at ${NEW_IP}`);
  assert.match((await moved.locator('.move .muted').textContent()) ?? '', new RegExp(`came from ${NEW_IP.replaceAll('.', '\\.')}, not the saved address .*\\(seen ${local(MOVE_SEEN)}\\)$`));
  assert.equal(await moved.locator('[data-saved]').textContent(), 'Saved');
  assert.equal(await moved.locator('button[data-save], button[data-hide]').count(), 0, 'a saved printer has no Save or Hide here');
  assert.equal(await moved.locator('button[data-confirm-move]').getAttribute('aria-label'), `Confirm move of ECOSYS P2040dw to ${NEW_IP}`);
  assert.equal(await row(desktop, ANSWERING).locator('button[data-save]').count(), 1, 'an unsaved one has Save');
  assert.equal(await desktop.isHidden('#queues-section'), true, 'no print queue: no section');
  assert.deepEqual(pageErrors, []);
});

test('discovered: a scan of a Linux SNMP host lists it under "Other hosts that answered", collapsed, with the count and why; axe at 1280 and 390 px', { skip }, async () => {
  assert.equal(await desktop.isHidden('#others-section'), true, 'nothing heard yet: no section');
  await desktop.click('#scan');
  await desktop.waitForFunction(() => /Scan done/.test(document.getElementById('scan-state')?.textContent ?? ''), undefined, { timeout: 60_000 });
  await desktop.waitForSelector('#others-section:not([hidden])');
  const o = expectJson(await agent.get('/discover/status')) as { scan: { not_printers: number }; not_printer_hosts: { ip: string; why: string }[] };
  const host = o.not_printer_hosts.find((x) => x.ip === LINUX_HOST);
  assert.ok(host, JSON.stringify(o));
  assert.match((await desktop.textContent('#scan-state')) ?? '', new RegExp(`Scan done: 0 found in 1 addresses .*; ${o.scan.not_printers} other hosts? answered`));
  assert.equal(await desktop.textContent('#other-hosts-count'), `${o.scan.not_printers} host${o.scan.not_printers === 1 ? ' answered and is not a printer' : 's answered and are not printers'}`);
  assert.equal(await desktop.locator('#others-section details').getAttribute('open'), null, 'collapsed by default');
  assert.equal(await desktop.isVisible(`#other-hosts tr[data-host="${LINUX_HOST}"]`), false);
  await desktop.click('#other-hosts-count');
  const hostRow = desktop.locator(`#other-hosts tr[data-host="${LINUX_HOST}"]`);
  await hostRow.waitFor();
  assert.equal(await hostRow.locator('td').nth(1).textContent(), host.why);
  assert.match(host.why, /no Printer-MIB/);
  await accessible(desktop, 'discovered (desktop)');
  await desktop.screenshot({ path: join(shots, 'discovered-status.png'), fullPage: true, scale: 'css' });

  await phone.goto(`${base}/#/discovered`);
  await phone.waitForSelector(`#discovered tr[data-serial="${MOVED}"]`);
  await phone.waitForSelector('#others-section:not([hidden])');
  await phone.click('#other-hosts-count');
  const [doc, win] = (await phone.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as [number, number];
  assert.ok(doc <= win, `the page is ${doc} px wide in a ${win} px window`);
  assert.equal(await phone.locator(`#discovered tr[data-serial="${MOVED}"] .state`).first().textContent(), `Not answering since ${local(SINCE)}`);
  await accessible(phone, 'discovered (phone)');
  await phone.screenshot({ path: join(shots, 'discovered-status-phone.png'), fullPage: true, scale: 'css' });
  assert.deepEqual(pageErrors, []);
});

test('discovered: Confirm move moves the saved printer to the address it answered from', { skip }, async () => {
  await desktop.click(`button[data-confirm-move="${MOVED}"]`);
  await desktop.waitForSelector(`#discovered tr[data-serial="${MOVED}"]`, { state: 'detached' });
  const d = (expectJson(await agent.get(`/api/devices/profile?serial=${MOVED}`)) as { device: { ip: string; is_saved: boolean; raw_data?: { pending_move?: unknown } } }).device;
  assert.equal(d.ip, NEW_IP);
  assert.equal(d.is_saved, true);
  assert.equal(d.raw_data?.pending_move, undefined);
  assert.equal(await desktop.textContent('.error[role="alert"]'), '');
  assert.deepEqual(pageErrors, []);
});
