// The web UI's weight and speed, against a real agent in real Chromium:
//   npm run build && node dist/scripts/bench/ui.js [--runs N] [--devices N] [--cpu-throttle X]
// 1. Page weight: GET / and the UI's modules (ui/*.js, every one the page preloads) as served (gzip
//    when asked: what a browser receives), uPlot's module alone, and the bytes a second visit costs
//    (304 for each).
// 2. Time to first render: navigation start to the Printers page's list drawn (from /devices/list,
//    meters pending), and to the page complete (--devices saved printers, each with a latest
//    reading: the page asks for each one's profile, which carries it).
// 3. A year chart of a device with two years of history in every tier: the click on "Year" to the
//    chart drawn (uPlot's canvas for data-period=year), and the history request alone (Resource
//    Timing of that one fetch, request start to the last byte), so the difference is the page's own
//    work (JSON parse, sort, uPlot).
// --cpu-throttle X slows Chromium's main thread X times (DevTools emulation: 4 is a mid phone).
// Chromium is launched with the test's flags: nothing leaves the machine.
import https from 'node:https';
import { startAgent } from '../../test/kit/agent.js';
import { DAY, HOUR, MINUTE, bucketStart, device, metrics, ndjson, type MetricsLine } from '../../test/kit/seed.js';
import { chromiumMissing, launchChromium } from '../../test/kit/chromium.js';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const RUNS = opt('runs', 7);
const DEVICES = opt('devices', 25);
const THROTTLE = opt('cpu-throttle', 1);
const SERIAL = 'BENCH-2Y';

function history(now: number): MetricsLine[] {
  const rows: MetricsLine[] = [];
  const pages = (t: number) => Math.round(500_000 - ((now - t) / HOUR) * 6);
  const add = (tier: 'raw' | 'hourly' | 'daily' | 'monthly', t: number) => {
    const p = pages(t);
    rows.push(metrics(SERIAL, tier, tier === 'raw' ? t : bucketStart(tier, t), { page_count: p, mono_pages: Math.round(p * 0.6), color_pages: p - Math.round(p * 0.6), toner_levels: { black: 5 + Math.round(((now - t) / DAY) % 95), cyan: 50, magenta: 40, yellow: 30 } }));
  };
  for (let t = now - 7 * DAY + 15 * MINUTE; t < now; t += 15 * MINUTE) add('raw', t); // the box polls every 15 min
  for (let t = now - 30 * DAY; t < now - 7 * DAY; t += HOUR) add('hourly', t);
  for (let t = now - 365 * DAY; t < now - 30 * DAY; t += DAY) add('daily', t);
  for (let t = now - 730 * DAY; t < now - 365 * DAY; t += 30 * DAY) add('monthly', t);
  return rows;
}

function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path, headers, rejectUnauthorized: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, headers: res.headers }));
    });
    req.on('error', reject);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, ${xs.length} runs)`;
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

async function main(): Promise<void> {
  if (chromiumMissing) throw new Error(chromiumMissing);
  const now = Date.now();
  const rows = history(now);
  const lines: object[] = [device(SERIAL, { ip: '127.0.1.90', is_saved: true, manufacturer: 'Kyocera', model: 'TASKalfa 2554ci' }), ...rows];
  for (let i = 0; i < DEVICES - 1; i++) {
    const s = `BENCH-${String(i).padStart(3, '0')}`;
    lines.push(device(s, { ip: `127.0.2.${i + 1}`, is_saved: true, manufacturer: 'HP', model: 'LaserJet M507' }), metrics(s, 'raw', now - HOUR, { page_count: 10_000 + i, toner_levels: { black: 50 } }));
  }
  const agent = await startAgent({ seed: ndjson(lines) });
  try {
    const port = agent.httpsPort;
    // 1. Weight.
    const page = await get(port, '/', { 'Accept-Encoding': 'gzip' });
    const pagePlain = await get(port, '/', {});
    const { PAGE_HTML } = await import('../../src/ui/page.js');
    const modules = [...PAGE_HTML.matchAll(/<link rel="modulepreload" href="(ui\/[\w.-]+\.js)">/g)].map((m) => `/${m[1]}`);
    const js = { bytes: 0 };
    const jsPlain = { bytes: 0 };
    const again = { status: 0, bytes: 0 };
    let uplot = { plain: 0, gzip: 0 };
    for (const m of modules) {
      const zipped = await get(port, m, { 'Accept-Encoding': 'gzip' });
      const plain = await get(port, m, {});
      const second = await get(port, m, { 'If-None-Match': String(zipped.headers.etag) });
      js.bytes += zipped.bytes;
      jsPlain.bytes += plain.bytes;
      again.status = Math.max(again.status, second.status);
      again.bytes += second.bytes;
      if (m === '/ui/uplot.js') uplot = { plain: plain.bytes, gzip: zipped.bytes };
    }
    console.log(`history of ${SERIAL}: ${rows.length} rows (raw ${rows.filter((r) => r.tier === 'raw').length}, hourly ${rows.filter((r) => r.tier === 'hourly').length}, daily ${rows.filter((r) => r.tier === 'daily').length}, monthly ${rows.filter((r) => r.tier === 'monthly').length}); ${DEVICES} saved printers`);
    console.log(`weight: page (HTML + CSS) ${kib(pagePlain.bytes)}, gzip ${kib(page.bytes)}; ${modules.length} modules ${kib(jsPlain.bytes)}, gzip ${kib(js.bytes)} (uPlot ${kib(uplot.plain)}, gzip ${kib(uplot.gzip)}); total gzip ${kib(page.bytes + js.bytes)}; a second visit: ${again.status} for each module, ${again.bytes} bytes`);

    // 2 and 3 in Chromium.
    const browser = await launchChromium();
    const firstRender: number[] = [];
    const scriptReady: number[] = [];
    const fullRender: number[] = [];
    const chartDrawn: number[] = [];
    const fetchOnly: number[] = [];
    const points: number[] = [];
    try {
      for (let run = 0; run < RUNS; run++) {
        const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
        const p = await ctx.newPage();
        if (THROTTLE > 1) await (await ctx.newCDPSession(p)).send('Emulation.setCPUThrottlingRate', { rate: THROTTLE });
        // Marks taken inside the page (an init script runs through DevTools, not the page's CSP).
        await p.addInitScript(`
          window.__marks = {};
          new MutationObserver(() => {
            if (!window.__marks.rows && document.querySelector('#saved tbody tr[data-serial]')) window.__marks.rows = performance.now();
            if (!window.__marks.full && document.querySelector('#saved[data-loaded] tbody tr[data-serial]')) window.__marks.full = performance.now();
            if (!window.__marks.year && document.querySelector('#meter-chart[data-period="year"] canvas')) window.__marks.year = performance.now();
          }).observe(document, { subtree: true, childList: true, attributes: true });`);
        await p.goto(`https://127.0.0.1:${port}/#/printers`);
        await p.waitForSelector('#saved[data-loaded] tbody tr[data-serial]');
        firstRender.push((await p.evaluate('window.__marks.rows')) as number);
        fullRender.push((await p.evaluate('window.__marks.full')) as number);
        scriptReady.push((await p.evaluate(`performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd`)) as number);
        await p.evaluate(`location.hash = '#/printer/${SERIAL}'`);
        await p.waitForSelector('#meter-chart[data-period="month"] canvas');
        const clickAt = (await p.evaluate(`(() => { const t = performance.now(); document.querySelector('button[data-period="year"]').click(); return t; })()`)) as number;
        await p.waitForSelector('#meter-chart[data-period="year"] canvas');
        chartDrawn.push(((await p.evaluate('window.__marks.year')) as number) - clickAt);
        const entry = (await p.evaluate(`performance.getEntriesByType('resource').filter((e) => e.name.includes('period=year')).map((e) => e.responseEnd - e.startTime).pop()`)) as number;
        fetchOnly.push(entry);
        points.push(Number(await p.getAttribute('#meter-chart', 'data-points')));
        await ctx.close();
      }
    } finally {
      await browser.close();
    }
    console.log(`cpu throttle: ${THROTTLE}x`);
    console.log(`page and script loaded and run (DOMContentLoaded end): ${fmt(scriptReady)}`);
    console.log(`first render (navigation to the printer list drawn, ${DEVICES} printers, meters pending): ${fmt(firstRender)}`);
    console.log(`printers page complete (meters and supplies of all ${DEVICES}: 1 + ${DEVICES} API requests): ${fmt(fullRender)}`);
    console.log(`year chart (click to drawn, ${points[0]} points): ${fmt(chartDrawn)}`);
    console.log(`  of which the history fetch alone: ${fmt(fetchOnly)}`);
  } finally {
    await agent.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
