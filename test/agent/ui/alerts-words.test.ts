// The Alerts page in plain words, in a real browser (Debian's Chromium, playwright-core)
// against a real agent seeded through `import`: an inkjet whose cyan ink falls 2 % a day (5 % now:
// low, and forecast to run out within the week: two alerts) and a laser whose black toner is at
// 3 %. The page shows one row per supply with the worse state and both facts in words ("Cyan ink
// is low (5%), will run out around ..."), the printer by model, location and address; ink and
// toner as each supply's type says. At 1280 and 390 px: nothing wider than the window, axe finds
// nothing serious or critical.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startAgent, expectJson, type Agent } from '../../kit/agent.js';
import { device, hourStart, metrics, ndjson, HOUR, DAY } from '../../kit/seed.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { until } from '../../kit/until.js';
import { accessible } from '../../kit/page-checks.js';

const skip = chromiumMissing;
if (skip) console.log(`# alerts-words UI test skipped: ${skip}`);

const INKJET = 'AW-INK-0001';
const LASER = 'AW-LASER-0002';

let agent: Agent;
let browser: import('playwright-core').Browser;
let desktop: import('playwright-core').Page;
let phone: import('playwright-core').Page;
let base: string;
const pageErrors: string[] = [];


before(async () => {
  if (skip) return;
  const now = Date.now();
  const lines: object[] = [
    device(INKJET, { ip: '127.0.57.10', is_saved: true, manufacturer: 'EPSON', model: 'SC-T3200', location: 'Plan room', last_seen: now - 10 * 60_000,
      printer_info: { ip: '127.0.57.10', last_seen: new Date(now).toISOString(), learned_oids: {}, is_inkjet: true,
        supply_types: { black: 'inkCartridge', cyan: 'inkCartridge', magenta: 'inkCartridge', waste_ink: 'wasteInk' } } }),
    device(LASER, { ip: '127.0.57.11', is_saved: true, manufacturer: 'HP', model: 'Color LaserJet M553', location: '2nd floor copy room', last_seen: now - 10 * 60_000,
      printer_info: { ip: '127.0.57.11', last_seen: new Date(now).toISOString(), learned_oids: {}, supply_types: { black: 'tonerCartridge', cyan: 'tonerCartridge' } } }),
    metrics(LASER, 'raw', now - 20 * 60_000, { page_count: 1000, toner_levels: { black: 3, cyan: 70 } }),
  ];
  // Cyan 2 % a day down to 5 % now: low, and empty in about two and a half days. Ten days of
  // history (a forecast needs seven): hourly rows, then raw ones for the last six days.
  const reading = (t: number) => ({ page_count: 5000 + Math.round((t - (now - 10 * DAY)) / HOUR) * 10, toner_levels: { black: 80, cyan: Math.round((5 + (2 * (now - t)) / DAY) * 10) / 10, magenta: 60 } });
  for (let t = hourStart(now - 10 * DAY); t < now - 6 * DAY; t += HOUR) lines.push(metrics(INKJET, 'hourly', t, reading(t + 59 * 60_000)));
  for (let t = now - 6 * DAY + HOUR; t <= now - 15 * 60_000; t += HOUR) lines.push(metrics(INKJET, 'raw', t, reading(t)));
  agent = await startAgent({ seed: ndjson(lines) });
  expectJson(await agent.post('/settings', { display: { time_zone: 'Europe/Berlin' } }));
  browser = await launchChromium();
  base = `https://127.0.0.1:${agent.httpsPort}`;
  const context = (viewport: { width: number; height: number }, mobile: boolean) => browser.newContext({
    ignoreHTTPSErrors: true, viewport, ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  desktop = await (await context({ width: 1280, height: 860 }, false)).newPage();
  phone = await (await context({ width: 390, height: 844 }, true)).newPage();
  for (const p of [desktop, phone]) p.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
});

after(async () => {
  await browser?.close();
  await agent?.stop();
});

test('alerts: one row per supply with the worse state and both facts in words; ink or toner; model, location, address; 1280 and 390 px', { skip }, async () => {
  // The rules judge the seeded printers at start: cyan low and empty soon, the laser's black low.
  const open = await until('three alerts', async () => {
    const list = expectJson(await agent.get('/api/alerts')) as any[];
    return list.length >= 3 ? list : undefined;
  });
  const of = (serial: string, kind: string) => open.find((a) => a.serial === serial && a.kind === kind);
  const low = of(INKJET, 'supply_low');
  const soon = of(INKJET, 'supply_empty_soon');
  assert.ok(low && soon, JSON.stringify(open));
  assert.equal(low.text, 'Cyan ink is low (5%)');
  assert.match(soon.text, /^Cyan ink will run out (today|around \d{1,2} [A-Z][a-z]{2})$/);
  assert.equal(of(LASER, 'supply_low').text, 'Black toner is low (3%)');
  assert.equal(open.length, 3, JSON.stringify(open.map((a) => [a.serial, a.kind, a.supply])));

  for (const [page, what] of [[desktop, 'desktop'], [phone, 'phone']] as const) {
    await page.goto(`${base}/#/alerts`);
    await page.waitForSelector('#alerts[data-loaded="true"]');
    assert.equal(await page.locator('#alerts tbody tr').count(), 2, `${what}: one row per supply`);
    const cyan = page.locator(`#alerts tr[data-supply="cyan"]`);
    assert.equal(await cyan.count(), 1);
    const alertCell = (await cyan.locator('td[data-label="Alert"]').innerText()).replace(/^Alert\s*/, '');
    assert.equal(alertCell, `Cyan ink is low (5%), ${soon.text.slice('Cyan ink '.length)}`);
    assert.equal(await cyan.locator('td[data-label="Printer"] a').textContent(), 'EPSON SC-T3200');
    assert.equal(await cyan.locator('td[data-label="Printer"] .where').textContent(), 'Plan room, 127.0.57.10');
    const laser = page.locator(`#alerts tr[data-alert="${of(LASER, 'supply_low').id}"]`);
    assert.match(await laser.innerText(), /Black toner is low \(3%\)/);
    assert.match(await laser.innerText(), /HP Color LaserJet M553[\s\S]*2nd floor copy room, 127\.0\.57\.11/);
    assert.doesNotMatch(await page.locator('#alerts').innerText(), /ink[^\n]*toner|supply_low|\d{4}-\d{2}-\d{2}T/i, `${what}: no machine words`);
    const [doc, win] = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as [number, number];
    assert.ok(doc <= win, `${what}: the page is ${doc} px wide in a ${win} px window`);
    await accessible(page, `alerts (${what})`);
  }

  // Acknowledge on the one row takes both of the supply's alerts.
  await desktop.click('#alerts tr[data-supply="cyan"] button.ack');
  await desktop.waitForFunction(() => /acknowledged/.test(document.querySelector('#alerts tr[data-supply="cyan"]')?.textContent ?? ''));
  const after = expectJson(await agent.get('/api/alerts')) as any[];
  for (const id of [low.id, soon.id]) assert.ok(after.find((a) => a.id === id)?.acknowledged_at, `alert ${id} acknowledged`);
  assert.equal(after.find((a) => a.serial === LASER).acknowledged_at, null);
  assert.deepEqual(pageErrors, []);
});

test('settings: the time zone of alert messages is in the Alerts section; a bad name is said next to the field', { skip }, async () => {
  await desktop.goto(`${base}/#/settings/polling`);
  await desktop.waitForSelector('#s-display-time_zone');
  assert.equal(await desktop.inputValue('#s-display-time_zone'), 'Europe/Berlin');
  await desktop.fill('#s-display-time_zone', 'Moon/Base');
  await desktop.click('#settings-alerts button[type="submit"]');
  await desktop.waitForFunction(() => /IANA time zone/.test(document.getElementById('s-display-time_zone-err')?.textContent ?? ''));
  assert.equal((expectJson(await agent.get('/settings')) as any).display.time_zone, 'Europe/Berlin', 'nothing changed');
  await desktop.fill('#s-display-time_zone', 'America/New_York');
  await desktop.click('#settings-alerts button[type="submit"]');
  await desktop.waitForFunction(() => document.getElementById('settings-alerts-msg')?.textContent === 'Saved.');
  assert.equal((expectJson(await agent.get('/settings')) as any).display.time_zone, 'America/New_York');
  assert.deepEqual(pageErrors, []);
});
