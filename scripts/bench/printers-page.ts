// The Printers page at 50, 500 and 2,000 saved printers, in the system's Chromium against
// a real agent (the unit's Node flags), the site of test/kit/printer-fleet.ts:
//   npm run build && node dist/scripts/bench/printers-page.js [--printers 2000] [--runs 3] [--events 120] [--cpu-throttle X]
// Without --printers: 50, 500 and 2,000 in turn. For each size, --runs fresh browser contexts
// (nothing cached) measure, inside the page (performance.now(), from navigation start):
// 1. requests to show the page: data requests (fetch, EventSource) and assets (page, script modules) apart;
// 2. first rows: navigation start to the first printer row in the DOM;
// 3. search for the last printer (its serial): the input event to that one row drawn (next frame),
//    the page's 250 ms typing pause included;
// 4. scrolling to the last printer (the windowed list): the window scrolled to the end in the page,
//    until its row is drawn (next frame); the list requests' own time from Resource Timing, so the
//    rest is the page's work; long tasks meanwhile; the rows in the DOM then.
// Then, on one more fresh page, a burst of real events: POST /devices/save/all (300 discovered
// printers saved: 300 device_change at once) and --events POST /devices/update one after another,
// while a trusted click lands on the page (its margin, so the view stays) every 100 ms: list requests the burst caused, long tasks
// (PerformanceObserver 'longtask') and input latency (Event Timing of each click: its input to the
// next paint; the browser reports only those over 16 ms). The same burst of updates again with
// the view at the end of the list (its last printers changed, so each refresh has rows to draw).
import { loadavg } from 'node:os';
import { startAgent, type Agent } from '../../test/kit/agent.js';
import { foundSerial, largeSerial, largeSite } from '../../test/kit/printer-fleet.js';
import { chromiumMissing, launchChromium } from '../../test/kit/chromium.js';
import { unitEnvironment, unitNodeFlags } from './process.js';

const args = process.argv.slice(2);
const opt = (name: string): number | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : undefined;
};
const SIZES = opt('printers') ? [opt('printers')!] : [50, 500, 2000];
const RUNS = opt('runs') ?? 3;
const EVENTS = opt('events') ?? 120;
const THROTTLE = opt('cpu-throttle') ?? 1;
const DISCOVERED = 300;
const ASSET_TYPES = new Set(['document', 'script', 'stylesheet', 'image', 'font']);

type Page = import('playwright-core').Page;
type Browser = import('playwright-core').Browser;

// Marks taken inside the page (an init script runs through DevTools, not under the page's CSP).
const MARKS = `
  window.__m = { longtasks: [], inputs: [] };
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__m.longtasks.push([e.startTime, e.duration]); }).observe({ type: 'longtask', buffered: true });
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__m.inputs.push([e.name, e.startTime, e.duration]); }).observe({ type: 'event', buffered: true, durationThreshold: 16 });
  new MutationObserver(() => { if (!window.__m.rows && document.querySelector('#saved tbody tr[data-serial]')) window.__m.rows = performance.now(); })
    .observe(document, { subtree: true, childList: true });`;

/** In the page: the search text typed (one input event), until only `serial`'s row is drawn. */
const SEARCH = `([text, serial]) => new Promise((resolve) => {
  const t0 = performance.now();
  const done = () => { const rows = document.querySelectorAll('#saved tbody tr'); return rows.length === 1 && rows[0].dataset.serial === serial; };
  const mo = new MutationObserver(() => { if (done()) { mo.disconnect(); requestAnimationFrame(() => resolve(performance.now() - t0)); } });
  mo.observe(document.getElementById('view'), { subtree: true, childList: true });
  const input = document.getElementById('printer-search');
  input.value = text;
  input.dispatchEvent(new Event('input', { bubbles: true }));
})`;

/** In the page: the window scrolled to the end, until `serial`'s row is drawn; the list requests meanwhile. */
const SCROLL_END = `async (serial) => {
  const t0 = performance.now();
  const drawn = () => document.querySelector('#saved tr[data-serial="' + serial + '"]');
  window.scrollTo(0, document.documentElement.scrollHeight);
  if (!drawn()) await new Promise((r) => { const mo = new MutationObserver(() => { if (drawn()) { mo.disconnect(); r(); } }); mo.observe(document.getElementById('view'), { subtree: true, childList: true }); });
  await new Promise((r) => requestAnimationFrame(r));
  const fetches = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/printers') && e.startTime >= t0).map((e) => e.responseEnd - e.startTime);
  return { ms: performance.now() - t0, fetches, rows: document.querySelectorAll('#saved tbody tr').length };
}`;

/** A function written as text, called in the page with `arg` (a string given to evaluate is an expression). */
const call = (page: Page, fn: string, arg: unknown): Promise<unknown> => page.evaluate(`(${fn})(${JSON.stringify(arg)})`);

const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const ms = (x: number) => (Number.isFinite(x) ? `${Math.round(x)} ms` : '–');
const range = (xs: number[]) => `${ms(median(xs))} (${ms(Math.min(...xs))}-${ms(Math.max(...xs))})`;
const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

interface Seen { path: string; type: string; at: number }
async function open(browser: Browser, base: string): Promise<{ page: Page; requests: Seen[]; close: () => Promise<void> }> {
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
  const page = await ctx.newPage();
  if (THROTTLE > 1) await (await ctx.newCDPSession(page)).send('Emulation.setCPUThrottlingRate', { rate: THROTTLE });
  await page.addInitScript(MARKS);
  const requests: Seen[] = [];
  page.on('request', (r) => { const u = new URL(r.url()); requests.push({ path: u.pathname + u.search, type: r.resourceType(), at: Date.now() }); });
  await page.goto(`${base}/#/printers`);
  await page.waitForSelector('#saved[data-loaded] tbody tr[data-serial]');
  await page.waitForSelector('#conn[data-state="live"]');
  await page.waitForFunction(() => (document.getElementById('version')?.textContent ?? '') !== '');
  return { page, requests, close: () => ctx.close() };
}
const lists = (rs: Seen[]) => rs.filter((r) => r.path.startsWith('/api/printers')).length;
const post = (agent: Agent, path: string, body?: unknown) =>
  agent.request(path, { method: 'POST', headers: { Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });

/** The page's long tasks and slow inputs since `since` (page time). */
async function strain(page: Page, since: number): Promise<{ tasks: number; taskMs: number; longest: number; inputs: number; worstInput: number }> {
  const m = (await page.evaluate('window.__m')) as { longtasks: [number, number][]; inputs: [string, number, number][] };
  const tasks = m.longtasks.filter(([t]) => t >= since).map(([, d]) => d);
  const inputs = m.inputs.filter(([name, t]) => name === 'click' && t >= since).map(([, , d]) => d);
  return { tasks: tasks.length, taskMs: sum(tasks), longest: Math.max(0, ...tasks), inputs: inputs.length, worstInput: Math.max(0, ...inputs) };
}

/** Updates one after another (each a device_change), a trusted click on the page every 100 ms meanwhile. */
async function burst(agent: Agent, page: Page, withSaveAll: boolean, size: number): Promise<string> {
  const since = (await page.evaluate('performance.now()')) as number;
  const t0 = Date.now();
  const token = `burst${t0}`;
  let clicking = true;
  let clicks = 0;
  const clicker = (async () => {
    while (clicking) {
      // In the page's margin, beside the list: a click on an element would scroll it into view.
      await page.mouse.click(10, 400).catch(() => {});
      clicks++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  if (withSaveAll) {
    const r = await post(agent, '/devices/save/all');
    if (r.status !== 200) throw new Error(`save/all: ${r.status} ${r.body}`);
  }
  for (let i = 0; i < EVENTS; i++) {
    // Printers in view: the first ones, or the last ones with the view at the end.
    const serial = withSaveAll ? foundSerial(i % 5) : largeSerial(size - 1 - (i % 5));
    const r = await post(agent, '/devices/update', { serial, location: `${token}-${i}` });
    if (r.status !== 200) throw new Error(`update: ${r.status} ${r.body}`);
  }
  const took = Date.now() - t0;
  // The last refresh the burst asked for (600 ms after it) is counted: wait for it to be drawn.
  await page.waitForFunction((n) => (document.querySelector('#saved tbody')?.textContent ?? '').includes(n), `${token}-${EVENTS - 1}`);
  clicking = false;
  await clicker;
  const s = await strain(page, since);
  return `${withSaveAll ? DISCOVERED + ' + ' : ''}${EVENTS} events over ${ms(took)}: long tasks ${s.tasks} (${ms(s.taskMs)} in all, longest ${ms(s.longest)}); ${clicks} clicks, ${s.inputs} of them over 16 ms to the next paint (worst ${ms(s.worstInput)})`;
}

async function measure(browser: Browser, size: number): Promise<void> {
  const agent = await startAgent({ seed: largeSite(Date.now(), size, DISCOVERED), nodeFlags: unitNodeFlags(), env: unitEnvironment() });
  const base = `https://127.0.0.1:${agent.httpsPort}`;
  const last = largeSerial(size - 1);
  try {
    const first: number[] = [];
    const search: number[] = [];
    const scrolling: number[] = [];
    const scrollFetch: number[] = [];
    const scrollLong: number[] = [];
    let scrollRows = 0;
    let scrollAsks = 0;
    let requestsLine = '';
    for (let run = 0; run < RUNS; run++) {
      const { page, requests, close } = await open(browser, base);
      try {
        const assets = requests.filter((r) => ASSET_TYPES.has(r.type) && !r.path.startsWith('/events'));
        const data = requests.filter((r) => !assets.includes(r));
        const modules = assets.filter((r) => r.type === 'script').length;
        requestsLine = `${data.length} data (${data.map((r) => r.path.split('?')[0]).join(', ')}) + ${assets.length} assets, ${modules} of them script modules (${assets.map((r) => r.path).join(', ')})`;
        first.push((await page.evaluate('window.__m.rows')) as number);
        search.push((await call(page, SEARCH, [last, last])) as number);
        await page.fill('#printer-search', '');
        await page.waitForSelector(`#saved tr[data-serial="${largeSerial(0)}"]`);
        const since = (await page.evaluate('performance.now()')) as number;
        const p = (await call(page, SCROLL_END, last)) as { ms: number; fetches: number[]; rows: number };
        scrolling.push(p.ms);
        scrollFetch.push(sum(p.fetches));
        scrollLong.push((await strain(page, since)).longest);
        scrollRows = p.rows;
        scrollAsks = p.fetches.length;
      } finally {
        await close();
      }
    }
    console.log(`\n## ${size.toLocaleString('en-US')} saved printers (load average ${load()})`);
    console.log(`requests to show the page: ${requestsLine}`);
    console.log(`first rows (navigation start to the first row): ${range(first)}`);
    console.log(`search for the last printer (input event to its row drawn, 250 ms typing pause included): ${range(search)}`);
    console.log(`scrolling to the last printer (to the end, to its row drawn): ${range(scrolling)}; of which the list requests ${range(scrollFetch)} (${scrollAsks} request(s)); longest task ${range(scrollLong)}; ${scrollRows} rows in the DOM`);
    // The burst: with the view at the top, then at the end.
    const { page, requests, close } = await open(browser, base);
    try {
      let before = lists(requests);
      const a = await burst(agent, page, true, size);
      console.log(`burst, view at the top: ${a}; list requests ${lists(requests) - before}`);
      await call(page, SCROLL_END, last);
      before = lists(requests);
      const b = await burst(agent, page, false, size);
      console.log(`burst, view at the end of ${(size + DISCOVERED).toLocaleString('en-US')}: ${b}; list requests ${lists(requests) - before}`);
    } finally {
      await close();
    }
  } finally {
    await agent.stop();
  }
}

async function main(): Promise<void> {
  if (chromiumMissing) throw new Error(chromiumMissing);
  const browser = await launchChromium();
  console.log(`node ${process.version}; Chromium ${browser.version()}; cpu throttle ${THROTTLE}x; ${RUNS} runs a size; load average at start ${load()}`);
  try {
    for (const size of SIZES) await measure(browser, size);
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
