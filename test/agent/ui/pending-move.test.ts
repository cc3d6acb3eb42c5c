// The printer page shows a pending move and a page counter that went down (what a
// spoofed printer looks like) in a real browser (Debian's Chromium, playwright-core) against a real agent: what SNMP
// v1/v2c cannot prove is said, and a person's Confirm moves the record / accepts the counter.
// The record is seeded as discovery leaves it (discovery itself: test/agent/lan/spoofed-printer.test.ts).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startAgent, expectJson, type Agent } from '../../kit/agent.js';
import { HOUR, device, metrics, ndjson } from '../../kit/seed.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { accessible } from '../../kit/page-checks.js';

const skip = chromiumMissing;
if (skip) console.log(`# pending-move UI test skipped: ${skip}`);

const SERIAL = 'SPOOF-UI-0001';
const SAVED_IP = '127.0.33.1';
const OTHER_IP = '127.0.33.2';

let agent: Agent;
let browser: import('playwright-core').Browser;
let page: import('playwright-core').Page;
const pageErrors: string[] = [];

before(async () => {
  if (skip) return;
  const now = Date.now();
  const seenAt = new Date(now - 10 * 60_000).toISOString();
  agent = await startAgent({
    seed: ndjson([
      device(SERIAL, {
        ip: SAVED_IP, is_saved: true, manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', mac_address: '00:17:c8:b9:02:de',
        status_messages: [`address move pending: ${OTHER_IP} answers with this serial; the record stays at ${SAVED_IP} until a person confirms the move`, 'page counter went down: 7532 read at 127.0.33.1, 120000 stored; not stored until a person accepts it'],
        raw_data: {
          pending_move: {
            ip: OTHER_IP, reported_mac: '00:17:c8:b9:02:de', snmp: 'v2c', model: 'ECOSYS P2040dw', manufacturer: 'Kyocera',
            first_seen_at: seenAt, seen_at: seenAt, sightings: 2, saved_address_answers: false,
            checks: { neighbour_mac: 'unknown', reported_mac: 'match', engine_id: 'unknown', identity: 'match' },
            reason: `a reply with this serial came from ${OTHER_IP}, not the saved address ${SAVED_IP}; SNMP v2c does not prove who sent the reply; no MAC or engine ID the box could check`,
          },
          counter_flag: { ip: SAVED_IP, seen_at: seenAt, page_count: 7532, stored_page_count: 120000, reading: { page_count: 7532, mono_pages: 7532 } },
        },
      }),
      metrics(SERIAL, 'raw', now - HOUR, { page_count: 120000, mono_pages: 120000 }),
    ]),
  });
  browser = await launchChromium();
  page = await browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) pageErrors.push(m.text()); });
  page.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
});

after(async () => {
  await browser?.close();
  await agent?.stop();
});

test('printer page: the pending move and the lower counter are shown with what SNMP cannot prove; Confirm moves it, Accept stores the counter', { skip }, async () => {
  await page.goto(`https://127.0.0.1:${agent.httpsPort}/#/printer/${SERIAL}`);
  await page.waitForSelector('#pending-move');
  const move = (await page.textContent('#pending-move')) ?? '';
  assert.match(move, new RegExp(`came from ${OTHER_IP.replaceAll('.', '\\.')}`));
  assert.match(move, new RegExp(`The record stays at ${SAVED_IP.replaceAll('.', '\\.')}`));
  assert.match(move, /SNMP v1 and v2c cannot prove who answered/);
  assert.match(move, /SNMPv3 with authentication and privacy \(authPriv\)/);
  const counter = (await page.textContent('#counter-flag')) ?? '';
  assert.match(counter, /7,?532 pages read at 127\.0\.33\.1/);
  assert.match(counter, /120,?000 stored before/);
  await page.screenshot({ path: join(mkdtempSync(join(tmpdir(), 'printbox-spoof-ui-')), 'pending-move.png'), fullPage: true, scale: 'css' });

  await accessible(page, 'the notices', '#printer-trust');

  await page.click('#confirm-move');
  await page.waitForSelector('#pending-move', { state: 'detached' });
  assert.match((await page.textContent('#identity')) ?? '', new RegExp(OTHER_IP.replaceAll('.', '\\.')));
  assert.equal((expectJson(await agent.get(`/api/devices/profile?serial=${SERIAL}`)) as any).device.ip, OTHER_IP);

  await page.click('#confirm-counter');
  await page.waitForSelector('#counter-flag', { state: 'detached' });
  await page.waitForFunction(() => /7,?532/.test(document.querySelector('#meter-total')?.textContent ?? ''));
  assert.equal((expectJson(await agent.get(`/api/devices/metrics/latest?serial=${SERIAL}`)) as any).page_count, 7532);
  assert.deepEqual(pageErrors, []);
});
