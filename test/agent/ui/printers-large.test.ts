// The Printers page at a large site, in Debian's Chromium (playwright-core) against a real
// agent holding 2,000 saved printers, each with two readings and four supplies, and 300 discovered
// ones (test/kit/printer-fleet.ts). Behaviour only, no timings (the figures are
// scripts/bench/printers-page.ts's, in docs/performance.md): how many requests the page makes to show the list, the first rows drawn,
// the last printer found by its serial, location and model, reached by scrolling the windowed list
// (only the rows in view exist, a refresh keeps the view where it is, Tab walks on), and a burst of
// real events (POST /devices/save/all, a run of POST /devices/update) answered by a bounded number
// of list requests while the page keeps answering a search. Every response the browser and the
// test receive must be one docs/openapi.yaml describes.
import assert from 'node:assert/strict';
import type { ClientRequest } from 'node:http';
import { after, before, test } from 'node:test';
import { startAgent, expectJson, type Agent } from '../../kit/agent.js';
import { openEventStream } from '../../kit/events.js';
import { eventProblem, responseProblem } from '../../kit/openapi.js';
import { LAST_MODEL, foundSerial, largeSerial, largeSite, lastLocation, pageCountOf } from '../../kit/printer-fleet.js';
import { until } from '../../kit/until.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';

const skip = chromiumMissing;
if (skip) console.log(`# large Printers page tests skipped: ${skip}`);

const SAVED = 2000;
const DISCOVERED = 300;
// The windowed list draws the rows in view and 10 each side: at 860 px high, well under this.
const MOST_ROWS = 60;
const IN_VIEW = 5; // the first printers, in view at the top of the list
const serialOf = largeSerial;
const found = foundSerial;
const LAST = serialOf(SAVED - 1);
const LAST_LOCATION = lastLocation(SAVED);
// Asset requests (the page, its script, an icon) are counted apart from the data requests.
const ASSET_TYPES = new Set(['document', 'script', 'stylesheet', 'image', 'font']);

let agent: Agent;
let browser: import('playwright-core').Browser;
let base: string;
const problems: string[] = []; // responses or events docs/openapi.yaml does not describe, page errors

before(async () => {
  if (skip) return;
  agent = await startAgent({ seed: largeSite(Date.now(), SAVED, DISCOVERED) });
  base = `https://127.0.0.1:${agent.httpsPort}`;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await agent?.stop();
});

interface Seen { path: string; type: string }
/** A fresh context (nothing cached), every request it makes recorded and every response checked against the document. */
async function openPage() {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
  const page = await ctx.newPage();
  const requests: Seen[] = [];
  page.on('request', (r) => { const u = new URL(r.url()); requests.push({ path: u.pathname + u.search, type: r.resourceType() }); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) problems.push(m.text()); });
  page.on('response', async (r) => {
    const u = new URL(r.url());
    const headers = await r.allHeaders();
    // The event stream never ends: its status and media type are checked, not its body.
    const stream = String(headers['content-type'] ?? '').startsWith('text/event-stream');
    const body = stream ? '' : await r.text().catch(() => '');
    const problem = responseProblem(r.request().method(), u.pathname, { status: r.status(), headers, body, truncated: stream });
    if (problem) problems.push(problem);
  });
  return { ctx, page, requests };
}
const listRequests = (rs: Seen[]) => rs.filter((r) => r.path.startsWith('/api/printers'));
const countText = (page: import('playwright-core').Page) => page.textContent('#printer-count');
const rowsInDom = (page: import('playwright-core').Page) => page.locator('#saved tbody tr').count();
/** Whether `serial`'s row is drawn inside the viewport. */
const inView = (page: import('playwright-core').Page, serial: string) => page.evaluate((s) => {
  const r = document.querySelector(`#saved tr[data-serial="${s}"]`)?.getBoundingClientRect();
  return !!r && r.bottom > 0 && r.top < innerHeight;
}, serial);
/** The printer whose row is at the top of the viewport. */
const topInView = (page: import('playwright-core').Page) => page.evaluate(() => [...document.querySelectorAll<HTMLElement>('#saved tbody tr[data-serial]')]
  .find((tr) => tr.getBoundingClientRect().bottom > 0)?.dataset.serial);

test('the page shows the first of 2,000 printers with at most 7 data requests (who is signed in and the Discovered count among them), the list in one, only the rows in view drawn', { skip }, async () => {
  const { ctx, page, requests } = await openPage();
  try {
    await page.goto(`${base}/#/printers`);
    await page.waitForSelector(`#saved[data-loaded] tr[data-serial="${serialOf(0)}"]`);
    // The stream is one of the requests; once it says it is connected, and the header's version
    // is filled (the last answer start() awaits), the page has asked all it asks on opening.
    await page.waitForSelector('#conn[data-state="live"]');
    await page.waitForFunction(() => (document.getElementById('version')?.textContent ?? '') !== '');
    await until('the alert count request answered', () => requests.some((r) => r.path.startsWith('/api/alerts')));
    await until('the Discovered count request answered', () => requests.some((r) => r.path.startsWith('/discover/status')));
    const assets = requests.filter((r) => ASSET_TYPES.has(r.type) && !r.path.startsWith('/events'));
    const data = requests.filter((r) => !assets.includes(r));
    console.log(`# opening: ${data.length} data requests (${data.map((r) => r.path.split('?')[0]).join(', ')}) and ${assets.length} assets (${assets.map((r) => r.path).join(', ')})`);
    // The stream, the list, the alert count, the navigation's count of discovered printers awaiting
    // saving, settings, version, and who is signed in (the role decides the controls).
    // Counted by path: the alert count asked again for an `alert` event the agent sends while the
    // page opens (its rules evaluated over 2,000 printers) is an answer to that event, not the opening's.
    const paths = new Set(data.map((r) => r.path.split('?')[0]));
    assert.ok(paths.size <= 7, `at most 7 data requests, not ${paths.size}: ${JSON.stringify(data)}`);
    assert.ok(data.filter((r) => !r.path.startsWith('/api/alerts')).length <= 6, `each other request once: ${JSON.stringify(data)}`);
    assert.equal(listRequests(data).length, 1, `the list is one request: ${JSON.stringify(data)}`);
    assert.match(listRequests(data)[0].path, /[?&]limit=50\b/);
    assert.ok(!requests.some((r) => /\/api\/devices\/(profile|forecast)|\/devices\/(list|metrics)/.test(r.path)), 'no request per printer, no whole list');
    // The page and its script's modules (preloaded at once; the CSS is in the page), nothing else.
    const assetPaths = assets.map((r) => r.path);
    assert.ok(assetPaths.includes('/') && assetPaths.includes('/ui/main.js'), assetPaths.join(', '));
    assert.deepEqual(assetPaths.filter((p) => p !== '/' && !/^\/ui\/[a-z-]+\.js$/.test(p)), [], 'only the page and its modules');
    // A window: the rows in view and a margin, all of them answered by the one request.
    const drawn = await rowsInDom(page);
    assert.ok(drawn >= 10 && drawn <= MOST_ROWS, `${drawn} rows drawn`);
    assert.equal(await page.locator('#saved tbody tr[data-serial]').count(), drawn, 'no row waits for its printer');
    assert.equal(await countText(page), '2,000 printers');
    // Screen readers: the table says it has 2,001 rows (the header's among them) and where each drawn one stands.
    assert.equal(await page.getAttribute('#saved', 'aria-rowcount'), '2001');
    assert.equal(await page.getAttribute('#saved thead tr', 'aria-rowindex'), '1');
    assert.equal(await page.getAttribute(`#saved tr[data-serial="${serialOf(0)}"]`, 'aria-rowindex'), '2');
    // The first rows are whole: meters and supplies came with the list.
    const first = page.locator(`#saved tr[data-serial="${serialOf(0)}"]`);
    assert.equal(await first.locator('.meter-total').textContent(), pageCountOf(0).toLocaleString('en-US'));
    assert.equal(await first.locator('.supply').count(), 4);
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});

test('search: the last printer by its serial, its location and its model, each one request', { skip }, async () => {
  const { ctx, page, requests } = await openPage();
  try {
    await page.goto(`${base}/#/printers`);
    await page.waitForSelector(`#saved[data-loaded] tr[data-serial="${serialOf(0)}"]`);
    for (const text of [LAST, LAST_LOCATION.toUpperCase(), LAST_MODEL]) {
      // From the first page each time, so that the answer drawn is this search's.
      if (await page.inputValue('#printer-search')) {
        await page.fill('#printer-search', '');
        await page.waitForSelector(`#saved tr[data-serial="${serialOf(0)}"]`);
      }
      const before = listRequests(requests).length;
      await page.fill('#printer-search', text);
      await page.waitForSelector(`#saved tr[data-serial="${LAST}"]`);
      await page.waitForFunction(() => document.querySelectorAll('#saved tbody tr').length === 1);
      assert.equal(await countText(page), '1 printer', `search ${text}`);
      const asked = listRequests(requests).slice(before);
      assert.equal(asked.length, 1, `one request for the whole text ${text}: ${JSON.stringify(asked)}`);
      assert.ok(asked[0].path.includes('search=' + encodeURIComponent(text)), asked[0].path);
      const row = page.locator(`#saved tr[data-serial="${LAST}"]`);
      assert.match((await row.textContent()) ?? '', new RegExp(`${LAST_MODEL}.*${LAST}.*${LAST_LOCATION}`));
      assert.equal(await row.locator('.meter-total').textContent(), pageCountOf(SAVED - 1).toLocaleString('en-US'));
    }
    // Cleared: the first page again.
    await page.fill('#printer-search', '');
    await page.waitForSelector(`#saved tr[data-serial="${serialOf(0)}"]`);
    assert.equal(await countText(page), '2,000 printers');
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});

/** Scrolls the window to `fraction` of the page's height (1: the end). */
const scrollTo = (page: import('playwright-core').Page, fraction: number) =>
  page.evaluate((f) => window.scrollTo(0, f * (document.documentElement.scrollHeight - innerHeight)), fraction);

test('scrolling reaches the middle and the last printer, a page a request, only the rows in view drawn; an event keeps the view', { skip }, async () => {
  const { ctx, page, requests } = await openPage();
  try {
    await page.goto(`${base}/#/printers`);
    await page.waitForSelector(`#saved[data-loaded] tr[data-serial="${serialOf(0)}"]`);
    await page.waitForSelector('#conn[data-state="live"]');
    // The middle: rows about the 1,000th printer, answered by their own page.
    let asked = listRequests(requests).length;
    await scrollTo(page, 0.5);
    // Drawn: a printer's row in the viewport, and no place in the window still waiting for its printer.
    await page.waitForFunction(() => !document.querySelector('#saved tbody tr.waiting') && [...document.querySelectorAll('#saved tbody tr[data-serial]')]
      .some((tr) => { const r = tr.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }));
    const middle = await page.evaluate(() => [...document.querySelectorAll<HTMLElement>('#saved tbody tr[data-serial]')]
      .filter((tr) => { const r = tr.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }).map((tr) => tr.dataset.serial!));
    const places = middle.map((s) => Array.from({ length: SAVED }, (_, i) => serialOf(i)).indexOf(s));
    assert.ok(places.length > 0 && places.every((i) => i > 800 && i < 1200), `the printers in view at half the height: ${places.join(', ')}`);
    assert.ok(listRequests(requests).length - asked <= 2, 'one page asked (two where the window spans two)');
    assert.ok((await rowsInDom(page)) <= MOST_ROWS);
    // The end: the last printer drawn, in view, where a screen reader is told it stands.
    asked = listRequests(requests).length;
    await scrollTo(page, 1);
    await page.waitForSelector(`#saved tr[data-serial="${LAST}"]`);
    assert.equal(await inView(page, LAST), true, 'the last printer is in view');
    assert.equal(await page.getAttribute(`#saved tr[data-serial="${LAST}"]`, 'aria-rowindex'), String(SAVED + 1));
    const toEnd = listRequests(requests).slice(asked);
    assert.ok(toEnd.length >= 1 && toEnd.length <= 2, `the end is one or two pages: ${JSON.stringify(toEnd)}`);
    assert.ok(toEnd.every((r) => /[?&]limit=50\b/.test(r.path)), JSON.stringify(toEnd));
    const drawn = await rowsInDom(page);
    assert.ok(drawn <= MOST_ROWS, `${drawn} rows in the DOM at the end`);
    assert.equal(await countText(page), '2,000 printers');
    // A change to the last printer: the refresh it causes asks only the rows in view, draws the
    // change, and leaves the view where it was.
    const top = await topInView(page);
    asked = listRequests(requests).length;
    expectJson(await agent.request('/devices/update', { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ serial: LAST, location: 'Checked room' }) }));
    const last = page.locator(`#saved tr[data-serial="${LAST}"]`);
    await until('the change drawn', async () => ((await last.textContent()) ?? '').includes('Checked room'));
    const refreshes = listRequests(requests).slice(asked);
    assert.ok(refreshes.length >= 1, 'the event caused a refresh');
    for (const r of refreshes) {
      const limit = Number(new URL(r.path, base).searchParams.get('limit'));
      assert.ok(limit <= MOST_ROWS, `a refresh asks the rows in view, not the list: ${r.path}`);
    }
    // (The changed row may be a line shorter: at the very end the browser then scrolls by that much.)
    assert.equal(await topInView(page), top, 'the view stays where it was');
    assert.equal(await inView(page, LAST), true, 'the last printer still in view');
    assert.ok((await rowsInDom(page)) <= MOST_ROWS);
    // Keyboard: from the last row drawn above the end, Tab walks on to the next printer's row.
    await scrollTo(page, 0);
    await page.waitForSelector(`#saved tr[data-serial="${serialOf(0)}"]`);
    const lastDrawn = await page.evaluate(() => {
      const rows = document.querySelectorAll<HTMLElement>('#saved tbody tr[data-serial]');
      return rows[rows.length - 1].dataset.serial!;
    });
    const k = Array.from({ length: SAVED }, (_, i) => serialOf(i)).indexOf(lastDrawn);
    await page.focus(`#saved tr[data-serial="${lastDrawn}"] button[data-hide]`);
    // Focus scrolled it into view, and the window follows it: the next rows are drawn before the next Tab.
    await page.waitForSelector(`#saved tr[data-serial="${serialOf(k + 1)}"]`);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.closest('tr')?.dataset.serial), serialOf(k + 1), 'Tab reaches the next printer');
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});

test('a burst of events: a bounded number of list requests, the page answers a search meanwhile, and shows the outcome', { skip }, async () => {
  const { ctx, page, requests } = await openPage();
  const events: { name: string; serial?: string }[] = [];
  let stream: ClientRequest | undefined;
  try {
    stream = openEventStream(agent.httpsPort, (name, data) => {
      const problem = eventProblem(name, data);
      if (problem) problems.push(problem);
      events.push({ name, serial: data?.serial });
    });
    await until('our own stream connected', () => events.some((e) => e.name === 'connected'));
    await page.goto(`${base}/#/printers`);
    await page.waitForSelector(`#saved[data-loaded] tr[data-serial="${serialOf(0)}"]`);
    await page.waitForSelector('#conn[data-state="live"]');

    // 1. Save all 300 discovered printers: 300 device_change events in one go.
    let asked = listRequests(requests).length;
    const saved = expectJson(await agent.request('/devices/save/all', { method: 'POST', headers: { Accept: 'application/json' } })) as { saved: number };
    assert.equal(saved.saved, DISCOVERED);
    await until('300 saved events on the stream', () => events.filter((e) => e.name === 'device_change').length >= DISCOVERED);
    await until('the page shows the new total', async () => (await countText(page)) === '2,300 printers');
    const afterSave = listRequests(requests).length - asked;
    console.log(`# ${DISCOVERED} events at once: ${afterSave} list request(s)`);
    // One refresh for the burst; a loaded browser may still be handing the last events over when
    // the first refresh starts (600 ms after the first), so one or two more, never one an event.
    assert.ok(afterSave >= 1 && afterSave <= 3, `${DISCOVERED} events cause 1 to 3 list requests, not ${afterSave}`);

    assert.equal(await page.locator(`#saved tbody tr[data-serial="${found(0)}"]`).count(), 1, 'the saved ones come first (by serial)');

    // 2. A run of single changes to printers in view, one request each, while the page is asked for a search.
    const RUN = 120;
    asked = listRequests(requests).length;
    const changesBefore = events.filter((e) => e.name === 'device_change').length;
    const started = Date.now();
    const run = (async () => {
      for (let i = 0; i < RUN; i++) {
        const r = await agent.request('/devices/update', { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ serial: found(i % IN_VIEW), location: `Moved ${i}` }) });
        expectJson(r);
      }
    })();
    // The page answers while the events arrive: a search for the last printer is drawn.
    await until('events arriving', () => events.filter((e) => e.name === 'device_change').length > changesBefore + 5);
    await page.fill('#printer-search', LAST);
    await page.waitForSelector(`#saved tr[data-serial="${LAST}"]`);
    await page.fill('#printer-search', '');
    const searchedDuringRun = events.filter((e) => e.name === 'device_change').length - changesBefore < RUN;
    await run;
    const elapsed = Date.now() - started;
    await until(`all ${RUN} change events on the stream`, () => events.filter((e) => e.name === 'device_change').length >= changesBefore + RUN);
    // The outcome is drawn: the last change to the first printers is on the page.
    const lastMoved = `Moved ${RUN - 1}`;
    await until('the last change drawn', async () => ((await page.locator(`#saved tr[data-serial="${found((RUN - 1) % IN_VIEW)}"]`).textContent()) ?? '').includes(lastMoved));
    // Counted once the outcome is drawn: a refresh still to come would be one more, at most.
    const listed = listRequests(requests).length;
    const duringRun = listed - asked - 2; // the search and its clearing are two of them
    console.log(`# ${RUN} events over ${elapsed} ms (search answered ${searchedDuringRun ? 'during' : 'after'} the run): ${duringRun} list refreshes`);
    // At most one refresh per 600 ms of events, plus the one after the last: never one per event.
    assert.ok(duringRun <= 2 + Math.ceil(elapsed / 600), `${duringRun} list refreshes for ${RUN} events over ${elapsed} ms`);
    assert.ok(duringRun < RUN / 4, `${duringRun} list refreshes for ${RUN} events`);
    assert.deepEqual(problems, []);
  } finally {
    stream?.destroy();
    await ctx.close();
  }
});
