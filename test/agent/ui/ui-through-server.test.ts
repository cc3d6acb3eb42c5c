// The box's web UI through PrintMaster's own central server (../shared/tools/printmaster-server),
// as an office opens it: the server serves the box's page under /api/v1/proxy/agent/<id>/ (it adds
// a <base href> and rewrites the page's root-absolute attributes) and relays each request over the
// box's WebSocket channel, where it carries the proxy principal (src/auth/gate.ts). The box runs
// in server auth mode without the loopback admin, so nothing but that principal lets the page in.
// Real Chromium (playwright-core) with the server admin's cookie: the page loads, every request it
// makes stays under the prefix, it offers no Sign out, the printers list shows the seeded printers, a button's POST goes
// through, the page says that live updates are unavailable (the server's generic proxy does not
// stream) and refreshes instead, and the console shows no error.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startAgent, stopAll, type Agent } from '../../kit/agent.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { HOUR, device, metrics, ndjson } from '../../kit/seed.js';
import { until } from '../../kit/pm-checks.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';

const skip = chromiumMissing || (printmasterUnavailable() ?? false);
if (skip) console.log(`# web UI through the central server skipped: ${skip}`);

const SAVED = 'PMUI-0001';
const TO_HIDE = 'PMUI-0002';

let pm: PmServer;
let agent: Agent;
let agentId: string;
let browser: import('playwright-core').Browser;

before(async () => {
  if (skip) return;
  const now = Date.now();
  pm = await startPrintmaster();
  agent = await startAgent({
    authMode: 'server',
    allowLocalAdmin: false,
    serverUrl: pm.url,
    server: { enrollment_token: pm.token, ca_file: pm.caFile },
    seed: ndjson([
      device(SAVED, { ip: '127.0.1.70', is_saved: true, manufacturer: 'Kyocera', model: 'ECOSYS P2040dn', location: 'Front office' }),
      metrics(SAVED, 'raw', now - HOUR, { page_count: 12_345, toner_levels: { black: 55 } }),
      device(TO_HIDE, { ip: '127.0.1.71', is_saved: true, manufacturer: 'Brother', model: 'HL-L5100DN', location: 'Stores' }),
    ]),
  });
  // The server proxies only to an agent whose WebSocket channel is up.
  agentId = await until('the box on the server with its WebSocket channel', async () => {
    const r = await pm.api('GET', '/api/v1/agents/list');
    const list: { agent_id: string; connection_type?: string }[] = Array.isArray(r.json) ? r.json : (r.json?.agents ?? []);
    return list.find((a) => a.connection_type === 'ws')?.agent_id;
  }, 60_000);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await stopAll();
  await pm?.kill();
});

test('the box UI through the central server: requests stay under its prefix, printers listed, a POST works, refresh instead of live events', { skip }, async () => {
  const prefix = `${pm.url}/api/v1/proxy/agent/${agentId}/`;
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
  await ctx.addCookies(pm.cookie.split(';').map((c) => c.trim()).filter(Boolean).map((c) => {
    const i = c.indexOf('=');
    return { name: c.slice(0, i), value: c.slice(i + 1), url: pm.url };
  }));
  const page = await ctx.newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  // What the page asked and got, with the time since it opened: printed if a step below fails.
  const timeline: string[] = [];
  const opened = Date.now();
  const at = () => `${((Date.now() - opened) / 1000).toFixed(1)}s`;
  page.on('request', (r) => { requests.push(r.url()); timeline.push(`${at()} ${r.method()} ${r.url().replace(prefix, '')}`); });
  page.on('requestfinished', (r) => timeline.push(`${at()} done ${r.url().replace(prefix, '')}`));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()} (${m.location().url})`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => { if (!/ERR_ABORTED/.test(r.failure()?.errorText ?? '')) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`); });
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });

  try {
    await page.goto(prefix);
    await page.waitForSelector(`#saved[data-loaded] tr[data-serial="${SAVED}"]`, { timeout: 60_000 });
    const row = page.locator(`#saved tr[data-serial="${SAVED}"]`);
    assert.match((await row.textContent()) ?? '', /ECOSYS P2040dn/);
    assert.equal(await row.locator('.meter-total').textContent(), '12,345', "the profile's meters came through too");
    assert.equal(await page.textContent('header h1'), 'PrintBox');
    // Signed in to the server, not to the box: no Sign out here (the box's own page has one: test/agent/server/printer-pages.test.ts).
    assert.equal(await page.locator('header #logout').count(), 0, 'no Sign out under the server\'s proxy');
    assert.equal(await page.locator('header button', { hasText: 'Sign out' }).count(), 0, 'no Sign out under the server\'s proxy');
    assert.deepEqual(await page.locator('header .right > *').evaluateAll((els) => els.map((e) => e.id)), ['conn']);

    // The server's proxy answers only when a response is complete: the box says at once that its
    // stream cannot pass, and the page refreshes instead, and says so.
    await page.waitForSelector('#live-note:not([hidden])', { timeout: 30_000 });
    const noted = Date.now() - opened;
    assert.match((await page.textContent('#live-note')) ?? '', /^Live updates unavailable: refreshing every \d+ s\.$/);
    assert.equal(await page.getAttribute('#live-note', 'data-why'), 'unavailable', 'the box answered the stream at once, not the 5 s wait');
    assert.equal(await page.getAttribute('#conn', 'data-state'), 'polling');

    // A button's POST through the server (the browser's Origin is the server's).
    await page.click(`#saved button[data-hide="${TO_HIDE}"]`);
    await page.waitForSelector(`#saved[data-loaded] tr[data-serial="${TO_HIDE}"]`, { state: 'detached', timeout: 30_000 });
    const hidden = await pm.api('GET', `/api/v1/proxy/agent/${agentId}/api/devices/profile?serial=${TO_HIDE}`);
    assert.equal(hidden.status, 200, hidden.text);
    assert.equal(hidden.json.device.visible, false, 'hidden on the box');

    // A change made elsewhere reaches the page by the periodic refresh.
    const moved = await pm.api('POST', `/api/v1/proxy/agent/${agentId}/devices/update`, { serial: SAVED, location: 'Moved by the office' });
    assert.equal(moved.status, 200, moved.text);
    const changedAt = Date.now();
    await page.waitForSelector(`#saved tr[data-serial="${SAVED}"]:has-text("Moved by the office")`, { timeout: 45_000 });
    const refreshedIn = Date.now() - changedAt;

    // Other pages' requests: one printer, the settings, the logs.
    await page.evaluate(`location.hash = '#/printer/${SAVED}'`);
    await page.waitForSelector('#printer-title:has-text("ECOSYS P2040dn")', { timeout: 30_000 });
    await page.evaluate(`location.hash = '#/settings/server'`);
    await page.waitForSelector('#settings-server', { timeout: 30_000 });
    await page.evaluate(`location.hash = '#/logs'`);
    await page.waitForSelector('#log-lines > *', { timeout: 30_000 });
    assert.equal(await page.getAttribute('a[download="printbox-agent.log"]', 'href'), './logfile');
    assert.ok(
      (await page.evaluate('document.querySelector("a[download=\'printbox-agent.log\']").href')) === `${prefix}logfile`,
      'a link resolves under the prefix',
    );

    // The box's sign-in page under the prefix (its own script too); nobody needs it there.
    await page.goto(`${prefix}login`);
    await page.waitForSelector('form#login[data-endpoint]');
    assert.ok(requests.includes(`${prefix}login.js`), 'the sign-in script came through the prefix');

    const outside = requests.filter((u) => !u.startsWith(prefix));
    assert.deepEqual(outside, [], 'every request the page made is under the prefix');
    // The build bundles the UI's modules into main.js (scripts/build.mjs); uPlot is the other.
    for (const m of ['main.js', 'uplot.js']) {
      assert.ok(requests.some((u) => u === `${prefix}ui/${m}`), `the module ${m} came through the prefix`);
    }
    assert.ok(requests.some((u) => u.startsWith(`${prefix}api/printers?`)), 'the script fetched through the prefix');
    assert.ok(requests.some((u) => u === `${prefix}events`), 'the event stream was tried through the prefix');
    assert.deepEqual(problems, [], 'no console error, failed request or error status');
    console.log(`# through the server: ${requests.length} requests, refresh note after ${noted} ms, a change shown after ${refreshedIn} ms`);
  } catch (err) {
    console.log(`# the page's requests until the failure (s since it opened):\n${timeline.slice(-40).map((l) => `#   ${l}`).join('\n')}\n# problems: ${problems.join('; ') || 'none'}`);
    throw err;
  } finally {
    await ctx.close();
  }
});
