// Every page of the UI on a phone (390 px) and a laptop (1280 px): Chromium on a laptop of
// a namespace LAN (test/kit/lan.ts), not the box's loopback; the agent in password mode with no
// account yet, so the first page is the setup form, filled in at phone width. The pages are the
// navigation's links (read from the page, so a page added to the navigation is covered without
// touching this file) and a printer's page. Each is visited with content: saved printers with
// supplies and meters (and one without any, whose card must not show empty rows), a discovered
// printer, open alerts, a failed webhook delivery in the outbox, the agent's logs. On each:
// - nothing wider than the window (document.documentElement.scrollWidth <= innerWidth);
// - at 390 px every visible control (link, button, field, summary) is at least 44 x 44 px. A
//   checkbox or radio counts with its label (the label is the target a finger presses), and a link
//   inside a sentence is exempt (WCAG 2.2 SC 2.5.8's "inline" exception: text around it sets its
//   height), i.e. an inline link whose parent element has text of its own beside it;
// - axe-core: no serious or critical violation, at both widths (and with the menu open);
// - a table's cells at 390 px are cards, and no card shows an empty row.
// The navigation at 390 px is a menu: a button with aria-expanded that the keyboard opens, walks
// and closes (Escape gives the focus back to the button). PRINTBOX_UI_DOCS=1 copies the phone
// screenshots to docs/ui/.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot, writeConfig } from '../../kit/agent.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { createLan, lanUnavailable, startAgentInBox, type BoxAgent, type Lan } from '../../kit/lan.js';
import { HOUR, device, metrics, ndjson } from '../../kit/seed.js';
import { until } from '../../kit/until.js';
import { accessible } from '../../kit/page-checks.js';

const skip = chromiumMissing || lanUnavailable();
if (skip) console.log(`# phone UI tests skipped: ${skip}`);

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };
const TARGET = 44;
const JAMMED = 'PHONE-UI-1';
const BARE = 'PHONE-UI-2'; // saved, never read: no meters, no supplies
const FOUND = 'PHONE-UI-3';
const PASSWORD = 'phone staple battery';
const shots = process.env.PRINTBOX_UI_SHOTS || mkdtempSync(join(tmpdir(), 'printbox-phone-shots-'));
mkdirSync(shots, { recursive: true });
// The screenshots docs/ui.md shows (the sign-in pages there are scripts/docs/screenshots.mjs's).
const DOCS = new Set(['phone-printers', 'phone-printer', 'phone-discovered', 'phone-alerts', 'phone-outbox', 'phone-logs', 'phone-menu']);

type Page = import('playwright-core').Page;

/** What is wrong with the page's layout at its width: elements beyond the window, small targets, empty card rows. */
function layoutProblems(args: { target: number; phone: boolean }): string[] {
  const out: string[] = [];
  const name = (el: Element) => {
    const id = el.id ? '#' + el.id : '';
    const text = (el.textContent || (el as HTMLInputElement).value || el.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return `${el.tagName.toLowerCase()}${id}${el.getAttribute('type') ? `[type=${el.getAttribute('type')}]` : ''} "${text}"`;
  };
  const rendered = (el: Element) => {
    const r = el.getBoundingClientRect();
    return (r.width > 0 || r.height > 0) && getComputedStyle(el).visibility !== 'hidden';
  };
  const doc = document.documentElement;
  if (doc.scrollWidth > innerWidth) {
    out.push(`the page is ${doc.scrollWidth} px wide in a ${innerWidth} px window`);
    const wide = [...document.querySelectorAll('body *')].filter((el) => rendered(el) && el.getBoundingClientRect().right > innerWidth + 0.5);
    // The outermost ones: their children are beyond the edge because they are.
    for (const el of wide.filter((el) => !wide.includes(el.parentElement as Element)).slice(0, 8)) {
      out.push(`  beyond the edge: ${name(el)} (right ${Math.round(el.getBoundingClientRect().right)} px)`);
    }
  }
  if (!args.phone) return out;
  const controls = document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])');
  for (const el of controls) {
    if (!rendered(el) || el.closest('dialog:not([open])')) continue;
    let r = el.getBoundingClientRect();
    if (r.right <= 0) continue; // the skip link waits off screen until it is focused
    if (r.width <= 1 && r.height <= 1) continue; // visually hidden (sr-only)
    const input = el as HTMLInputElement;
    if (el.tagName === 'INPUT' && (input.type === 'checkbox' || input.type === 'radio') && input.labels?.length) {
      const l = input.labels[0].getBoundingClientRect();
      const left = Math.min(r.left, l.left);
      const top = Math.min(r.top, l.top);
      r = new DOMRect(left, top, Math.max(r.right, l.right) - left, Math.max(r.bottom, l.bottom) - top);
    }
    const inSentence = el.tagName === 'A' && getComputedStyle(el).display === 'inline'
      && [...(el.parentElement?.childNodes ?? [])].some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').trim() !== '');
    if (inSentence) continue;
    if (r.width < args.target - 0.5 || r.height < args.target - 0.5) out.push(`small target ${name(el)}: ${Math.round(r.width)} x ${Math.round(r.height)} px`);
  }
  // Tables are lists of cards on a phone: no row of a card is empty.
  for (const td of document.querySelectorAll('#view td')) {
    // uPlot's legend, and a table a view keeps as a table (it fits), are not lists.
    if (!rendered(td) || td.closest('.u-legend, .keep-table')) continue;
    if (getComputedStyle(td).display === 'table-cell') out.push(`a table is still a table: ${name(td.closest('table') as Element)}`);
    else if (!(td.textContent ?? '').trim() && !td.querySelector('button, input, select, a, canvas, svg, img')) out.push(`an empty row in a card: ${td.getAttribute('data-label') ?? name(td)}`);
  }
  return [...new Set(out)];
}

/** A view has drawn: no "Loading…" left in it and nothing changed in it for half a second. */
async function settled(page: Page): Promise<void> {
  let last = '';
  let since = Date.now();
  await until('the view to settle', async () => {
    const now = (await page.evaluate(() => {
      const v = document.getElementById('view');
      const busy = !v || v.childElementCount === 0 || /Loading…/.test(v.textContent ?? '') || document.querySelector('#view [aria-busy="true"]');
      return busy ? '' : v!.innerHTML.length + ':' + v!.textContent;
    })) as string;
    if (!now || now !== last) {
      last = now;
      since = Date.now();
      return false;
    }
    return Date.now() - since >= 500;
  });
}

describe('every page at 390 px and 1280 px', { skip: skip || false }, () => {
  let lan: Lan;
  let box: BoxAgent;
  let browser: import('playwright-core').Browser;
  let base: string;
  let phone: Page;
  let desktop: Page;
  const problems: string[] = []; // page errors and CSP violations, from every page
  const taken: string[] = [];

  before(async () => {
    lan = createLan();
    const now = Date.now();
    // No account: the first visit is the setup form. The box's own loopback is the admin that
    // sets up what the pages show (the outbox's failed delivery).
    const config = await writeConfig({ authMode: 'password', allowLocalAdmin: true, listenAddress: '0.0.0.0' });
    box = await startAgentInBox(lan, {
      config,
      seed: ndjson([
        device(JAMMED, { ip: '198.18.7.60', is_saved: true, manufacturer: 'Kyocera', model: 'TASKalfa 2554ci', location: 'Floor 3, by the kitchen',
          status_messages: ['Paper jam in tray 2'], web_ui_url: 'http://198.18.7.60/', asset_number: 'A-1042' }),
        metrics(JAMMED, 'raw', now - 2 * HOUR, { page_count: 120_400, mono_pages: 80_000, color_pages: 40_400, toner_levels: { black: 40, cyan: 9, magenta: 55, yellow: 70 } }),
        metrics(JAMMED, 'raw', now - HOUR, { page_count: 120_480, mono_pages: 80_050, color_pages: 40_430, toner_levels: { black: 39, cyan: 8, magenta: 54, yellow: 70 } }),
        device(BARE, { ip: '198.18.7.61', is_saved: true, manufacturer: 'HP', model: 'LaserJet M404dn' }),
        device(FOUND, { ip: '198.18.7.62', manufacturer: 'Brother', model: 'HL-L5100DN', web_ui_url: 'http://198.18.7.62/general/status.html',
          printer_info: { discovery_methods: ['ipp', 'mdns'], detection_reasons: ['mdns: _ipp._tcp', 'ipp: ipp port 631 answered Get-Printer-Attributes'] } }),
        metrics(FOUND, 'raw', now - HOUR, { page_count: 4321, toner_levels: { black: 66 } }),
      ]),
    });
    // Alerts go at once to a webhook on the laptop where nothing listens: a failed delivery in the
    // outbox. The jam alert opened at start, before the rule: the jam rule off and on opens it again.
    const post = (path: string, body: unknown) => box.request({ method: 'POST', path, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const set = await post('/settings', { notifications: { digest_minutes: 0, webhook_secret: 'phone-secret-0123456789', recipients: [{ kinds: [], severities: [], emails: [], webhooks: ['http://198.18.7.2:9/hook'] }] } });
    assert.equal(set.status, 200, set.body);
    const jamOpen = async () => JSON.parse((await box.request('/api/alerts')).body).some((a: { kind: string }) => a.kind === 'jam');
    await until('the jam alert', jamOpen);
    assert.equal((await post('/settings', { alerts: { jam: false } })).status, 200);
    await until('the jam alert to close', async () => !(await jamOpen()));
    assert.equal((await post('/settings', { alerts: { jam: true } })).status, 200);
    await until('the jam alert again', jamOpen);
    browser = await launchChromium({ netns: lan.laptopNs });
    base = `https://${lan.boxAddress}:${box.config.httpsPort}`;
    const watch = (p: Page) => {
      p.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) problems.push(m.text()); });
      p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      p.on('dialog', (d) => void d.accept());
      return p;
    };
    phone = watch(await browser.newPage({ ignoreHTTPSErrors: true, viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }));
    desktop = watch(await browser.newPage({ ignoreHTTPSErrors: true, viewport: DESKTOP }));
  });
  after(async () => {
    await browser?.close();
    await box?.stop();
    lan?.destroy();
    console.log(`# screenshots: ${shots}`);
    if (process.env.PRINTBOX_UI_DOCS) {
      mkdirSync(join(repoRoot, 'docs/ui'), { recursive: true });
      for (const n of taken.filter((t) => DOCS.has(t))) copyFileSync(join(shots, `${n}.png`), join(repoRoot, 'docs/ui', `${n}.png`));
    }
  });
  const shot = async (page: Page, name: string) => {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true, scale: 'css' });
    taken.push(name);
  };
  const check = async (page: Page, what: string) => {
    const found = await page.evaluate(layoutProblems, { target: TARGET, phone: page === phone });
    assert.deepEqual(found, [], `${what}:\n${found.join('\n')}`);
    await accessible(page, what);
  };

  test('setup and sign-in fit a phone: the account made at 390 px, its password typed twice and shown on demand', async () => {
    await desktop.goto(`${base}/`);
    await desktop.waitForSelector('input[name=setup_code]');
    await check(desktop, 'setup (1280 px)');
    await phone.goto(`${base}/`);
    await phone.waitForSelector('input[name=setup_code]');
    await check(phone, 'setup (390 px)');
    await shot(phone, 'phone-setup');
    const code = readFileSync(join(box.config.dataDir, 'setup-code'), 'utf8').trim();
    await phone.fill('input[name=setup_code]', code);
    await phone.fill('input[name=username]', 'tech');
    await phone.fill('input[name=password]', PASSWORD);
    await phone.fill('input[data-confirms]', PASSWORD + '!');
    await phone.check('input[data-show-password]');
    assert.deepEqual(await phone.$$eval('input[name=password], input[data-confirms]', (els) => els.map((e) => (e as HTMLInputElement).type)), ['text', 'text'], 'both passwords shown');
    await phone.click('button');
    await phone.waitForFunction(() => /differ/.test(document.getElementById('error')?.textContent ?? ''));
    const me = await box.request('/api/v1/accounts');
    assert.deepEqual(JSON.parse(me.body).accounts, [], 'nothing sent while the passwords differ');
    await phone.fill('input[data-confirms]', PASSWORD);
    await Promise.all([phone.waitForURL(`${base}/`), phone.click('button')]);
    await phone.waitForSelector('#saved[data-loaded]');
    // The sign-in form, at both widths.
    for (const page of [desktop, phone]) {
      await page.goto(`${base}/login`);
      await page.waitForSelector('input[name=username]');
      await check(page, `sign-in (${page === phone ? 390 : 1280} px)`);
    }
    await phone.check('input[data-show-password]');
    assert.equal(await phone.getAttribute('input[name=password]', 'type'), 'text');
    await phone.uncheck('input[data-show-password]');
    await shot(phone, 'phone-signin');
    await phone.fill('input[name=username]', 'tech');
    await phone.fill('input[name=password]', PASSWORD);
    await Promise.all([phone.waitForURL(`${base}/#/printers`).catch(() => phone.waitForURL(`${base}/`)), phone.press('input[name=password]', 'Enter')]);
    await desktop.fill('input[name=username]', 'tech');
    await desktop.fill('input[name=password]', PASSWORD);
    await Promise.all([desktop.waitForURL(/#?\/?$|#\/printers$/), desktop.press('input[name=password]', 'Enter')]);
    await desktop.waitForSelector('#saved[data-loaded]');
  });

  test('the navigation is a menu at 390 px: a button the keyboard opens, walks and closes; a row of links at 1280 px', async () => {
    await phone.goto(`${base}/#/printers`);
    await phone.waitForSelector('#saved[data-loaded]');
    const button = phone.locator('#menu-button');
    assert.equal(await button.isVisible(), true);
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    const nav = await button.getAttribute('aria-controls');
    assert.ok(nav, 'the button names what it opens');
    assert.equal(await phone.locator(`#${nav} a`).first().isVisible(), false, 'closed: no link shown');
    // The open alerts' count, hidden with the links, is on the button too.
    await phone.waitForFunction(() => /^\d+$/.test(document.getElementById('alert-count')?.textContent ?? ''));
    const count = await phone.textContent('#alert-count');
    assert.match(await button.locator('.badge').textContent() ?? '', new RegExp(`^${count} open alerts?$`));
    // From the top of the page, Tab reaches the button (the skip link comes first).
    await phone.focus('#skip');
    const walked: string[] = [];
    for (let i = 0; i < 5 && !(await phone.evaluate(() => document.activeElement?.id === 'menu-button')); i++) {
      walked.push(await phone.evaluate(() => `${document.activeElement?.tagName}#${document.activeElement?.id}`));
      await phone.keyboard.press('Tab');
    }
    assert.equal(await phone.evaluate(() => document.activeElement?.id), 'menu-button', `Tab went ${walked}`);
    await phone.keyboard.press('Enter');
    assert.equal(await button.getAttribute('aria-expanded'), 'true');
    const links = phone.locator(`#${nav} a`);
    assert.ok(await links.count() >= 5);
    for (const box of await links.evaluateAll((as) => as.map((a) => a.getBoundingClientRect().toJSON()))) {
      assert.ok(box.height >= TARGET && box.width >= TARGET, `a menu link is ${box.width} x ${box.height} px`);
    }
    await check(phone, 'the menu open (390 px)');
    await shot(phone, 'phone-menu');
    // Tab walks into the links; Escape closes and gives the focus back to the button.
    await phone.keyboard.press('Tab');
    assert.equal(await phone.evaluate((id) => document.activeElement?.closest(`#${id}`) !== null, nav), true, 'Tab goes into the menu');
    await phone.keyboard.press('Escape');
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await phone.evaluate(() => document.activeElement?.id), 'menu-button');
    assert.equal(await links.first().isVisible(), false);
    // Space opens it too; a link chosen with the keyboard goes there and closes the menu.
    await phone.keyboard.press(' ');
    assert.equal(await button.getAttribute('aria-expanded'), 'true');
    await phone.keyboard.press('Tab');
    await phone.keyboard.press('Tab');
    const target = await phone.evaluate(() => document.activeElement?.getAttribute('href'));
    await phone.keyboard.press('Enter');
    await phone.waitForFunction((h) => location.hash === h, target);
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await links.first().isVisible(), false);

    await desktop.goto(`${base}/#/printers`);
    await desktop.waitForSelector('#saved[data-loaded]');
    assert.equal(await desktop.locator('#menu-button').isVisible(), false, 'no menu button on a laptop');
    const tops = await desktop.locator(`#${nav} a`).evaluateAll((as) => as.map((a) => a.getBoundingClientRect().top));
    assert.ok(tops.every((t) => t === tops[0]), `the links in one row: ${tops}`);
  });

  test('every page fits 390 px and 1280 px: no sideways scroll, 44 px targets on the phone, tables as cards, axe clean', async () => {
    await phone.goto(`${base}/#/printers`);
    await phone.waitForSelector('#saved[data-loaded]');
    const routes = await phone.$$eval('header nav a[href^="#/"]', (as) => as.map((a) => a.getAttribute('href') as string));
    const printer = await phone.getAttribute(`#saved tr[data-serial="${JAMMED}"] a[href^="#/printer/"]`, 'href');
    assert.ok(printer);
    routes.push(printer);
    // Settings is shown one part at a time (#/settings/<part>): every part is a page of its own.
    await phone.evaluate(() => { location.hash = '#/settings'; });
    await phone.waitForSelector('.settings-parts a[href^="#/settings/"]');
    routes.push(...(await phone.$$eval('.settings-parts a[href^="#/settings/"]', (as) => as.map((a) => a.getAttribute('href') as string))));
    // The seeded content each known page must show (a page added later only has to draw).
    const content: Record<string, string> = {
      '#/printers': `#saved tr[data-serial="${BARE}"]`,
      '#/discovered': `#discovered tr[data-serial="${FOUND}"]`,
      '#/alerts': '#alerts tbody tr',
      '#/settings/notifications': '#notify-outbox tbody tr',
      '#/logs': '#log-lines',
    };
    content[printer] = '#meter-chart';
    for (const route of routes) {
      for (const page of [phone, desktop]) {
        const what = `${route} (${page === phone ? 390 : 1280} px)`;
        await page.evaluate((h) => { location.hash = h; }, route);
        if (content[route]) await page.waitForSelector(content[route], { state: 'attached' });
        await settled(page);
        assert.equal(await page.locator('#view h2').first().textContent().then((t) => t !== 'Something went wrong' && t !== 'Not found'), true, `${what} drew`);
        await check(page, what);
        if (page === phone) await shot(phone, `phone-${route.replace(/^#\//, '').replace(/^printer\/.*/, 'printer').replace(/\//g, '-')}`);
        if (page === phone && route === '#/settings/notifications') {
          await phone.locator('#notify-outbox').screenshot({ path: join(shots, 'phone-outbox.png'), scale: 'css' });
          taken.push('phone-outbox');
        }
      }
    }
    // The printer cards: compact, the never-read printer's card without Total, Mono, Colour rows.
    await phone.evaluate(() => { location.hash = '#/printers'; });
    await phone.waitForSelector(`#saved tr[data-serial="${BARE}"]`);
    const heights = await phone.$$eval('#saved tbody tr[data-serial]', (trs) => Object.fromEntries(trs.map((tr) => [(tr as HTMLElement).dataset.serial, Math.round(tr.getBoundingClientRect().height)])));
    console.log(`# printer cards at 390 px: ${JSON.stringify(heights)}`);
    const bareRows = await phone.$$eval(`#saved tr[data-serial="${BARE}"] td`, (tds) => tds.filter((td) => getComputedStyle(td).display !== 'none').map((td) => td.getAttribute('data-label') ?? ''));
    for (const label of ['Total', 'Mono', 'Colour']) assert.ok(!bareRows.includes(label), `no empty ${label} row: ${bareRows}`);
    assert.ok(heights[BARE] < heights[JAMMED], 'the card without meters and supplies is the shorter');
    assert.deepEqual(problems, [], 'no CSP violation or script error');
  });
});
