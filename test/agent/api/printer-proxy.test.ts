// /proxy/{serial}/: a saved printer's own web page through the box, against
// CUPS's ippeveprinter (a real printer web server, test/kit/ipp-printer.ts) and a small HTTPS
// "printer" of the test's own with a self-signed certificate that shows what reached it; then the
// same through PrintMaster's own central server, as its UI asks for it; and from a laptop on the
// site network without a credential. The agent runs in the box namespace of a test LAN
// (kit/lan.ts): it never fetches a printer's page from loopback or from itself, so the
// printers, served here by the test, are reached at laptop addresses (198.18.7.2: ippeveprinter,
// 198.18.7.3: the echo printer) through relays (kit/ns-relay.ts), and the test reaches the
// agent through a relay to the box's own 127.0.0.1 (as the local administrator, as before).
// Nothing leaves 127.0.0.0/8 or the test's own namespaces.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expectTextError, writeConfig, type Agent, type Res } from '../../kit/agent.js';
import { ippPrinterUnavailable, startIppPrinter, type IppPrinter } from '../../kit/ipp-printer.js';
import { createLan, lanRequests, lanUnavailable, startAgentInBox, type BoxAgent, type Lan } from '../../kit/lan.js';
import { relayInto, startAgentInLan, type Relay } from '../../kit/ns-relay.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { connectedAgentId, serverKnowsDevice } from '../../kit/pm-agent.js';
import { device, ndjson } from '../../kit/seed.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';

const skipLan = lanUnavailable();
const skipIpp = ippPrinterUnavailable() ?? skipLan;
if (skipIpp) console.log(`# printer proxy tests against ippeveprinter skipped: ${skipIpp}`);

/** Where the box finds the printers: laptops on the site network (relayed to the test's servers). */
const IPP_HOST = '198.18.7.2';
const IPP_PORT = 631;
const ECHO_HOST = '198.18.7.3';
const ECHO_PORT = 8443;
const ECHO_ORIGIN = `https://${ECHO_HOST}:${ECHO_PORT}`;
/** The jar cookie (src/printer-web/cookie-jar.ts) holding these printer cookies. */
const jarOf = (entries: [string, string, number | null][]) => Buffer.from(JSON.stringify(entries), 'utf8').toString('base64url');

function fetchDirect(port: number, path: string): Promise<{ status: number; type: string; bytes: Buffer }> {
  return new Promise((ok, fail) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => ok({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), bytes: Buffer.concat(chunks) }));
      })
      .on('error', fail);
  });
}

/** An HTTPS "printer" with a self-signed certificate: each path shows one thing the proxy must do. */
async function startEchoPrinter(): Promise<{ port: number; seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[]; stop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'pbx-echo-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=printer',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  let port = 0;
  const server = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = (req.url ?? '').split('?')[0];
      if (path === '/echo') {
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('X-Frame-Options', 'DENY');
        res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
        res.setHeader('Strict-Transport-Security', 'max-age=31536000');
        return res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
      }
      if (path === '/redirect') {
        res.writeHead(302, { Location: `${ECHO_ORIGIN}/after/x?y=1#top` });
        return res.end();
      }
      if (path === '/dir/redirect-relative') {
        res.writeHead(303, { Location: 'next.html' });
        return res.end();
      }
      if (path === '/redirect-away') {
        res.writeHead(302, { Location: 'http://printer-vendor.invalid/help' });
        return res.end();
      }
      if (path === '/cookie') {
        res.setHeader('Set-Cookie', ['sid=abc; Path=/; Domain=127.0.0.1; HttpOnly; Secure', 'pm_agent_session=planted; Path=/', 'lang=en; Path=/settings']);
        return res.end('ok');
      }
      if (path === '/dir/page.html') {
        res.setHeader('Content-Type', 'text/html; charset=utf-8');
        return res.end(
          `<html><head><title>Status</title><style>body{background:url(/img/bg.png)}</style></head><body>` +
            `<a href="/status">status</a><img src='/logo.png'><form action="/set" method="post"></form>` +
            `<a href="${ECHO_ORIGIN}/abs">abs</a><a href="rel.html">rel</a><a href="https://printer-vendor.invalid/">vendor</a></body></html>`,
        );
      }
      if (path === '/evil.html') {
        // A hostile printer: its script tries the box's API with the technician's credentials.
        res.setHeader('Content-Type', 'text/html');
        return res.end(
          `<html><head><title>pending</title><script>
            Promise.all([
              fetch('/settings', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"discovery":{"ranges_text":"127.0.0.66"}}' }).then((r) => 'post ' + r.status, (e) => 'post refused'),
              fetch('/settings').then((r) => r.text().then((t) => 'read ' + t.length), (e) => 'read refused'),
            ]).then((a) => { document.title = a.join(', ') + ', origin ' + self.origin; });
          </script></head><body>printer</body></html>`,
        );
      }
      if (path === '/slow') return; // never answers (the connection stays open)
      if (path === '/big.bin') {
        res.setHeader('Content-Type', 'application/octet-stream');
        return res.end(Buffer.alloc(9 * 1024 * 1024, 1));
      }
      if (path === '/big.html') {
        res.setHeader('Content-Type', 'text/html');
        return res.end(Buffer.alloc(9 * 1024 * 1024, 'a'));
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('printer: no such page');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  return {
    port,
    seen,
    stop() {
      server.close();
      server.closeAllConnections();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const get = (agent: Agent, path: string, headers: Record<string, string> = {}) => agent.request(path, { headers: { Accept: 'text/html', ...headers } });
const header = (r: Res, name: string) => r.headers[name.toLowerCase()];

describe('a saved printer\'s web page through the box', { skip: skipIpp ?? false }, () => {
  let ipp: IppPrinter;
  let echo: Awaited<ReturnType<typeof startEchoPrinter>>;
  let agent: Agent;
  let lan: Lan;
  const relays: Relay[] = [];

  before(async () => {
    lan = createLan();
    [ipp, echo] = await Promise.all([startIppPrinter({ queue: 'Front Desk', make: 'Acme', model: 'LaserWriter 9000' }), startEchoPrinter()]);
    relays.push(await relayInto(lan.laptopNs, IPP_HOST, IPP_PORT, ipp.port), await relayInto(lan.laptopNs, ECHO_HOST, ECHO_PORT, echo.port));
    const config = await writeConfig();
    agent = await startAgentInLan(lan, {
      config,
      seed: ndjson([
        device('IPP-1', { ip: IPP_HOST, is_saved: true, web_ui_url: `http://${IPP_HOST}:${IPP_PORT}/` }),
        device('IPP-NOT-SAVED', { ip: IPP_HOST, is_saved: false, web_ui_url: `http://${IPP_HOST}:${IPP_PORT}/` }),
        device('ECHO-1', { ip: ECHO_HOST, is_saved: true, web_ui_url: `${ECHO_ORIGIN}/` }),
        // A URL naming another host: its port is not used; port 80 on the record's address is.
        device('ELSEWHERE', { ip: ECHO_HOST, is_saved: true, web_ui_url: `http://${IPP_HOST}:${IPP_PORT}/` }),
        device('SELF', { ip: '127.0.0.1', is_saved: true, web_ui_url: `https://127.0.0.1:${config.httpsPort}/` }),
        // Where the printer really listens, the test's loopback: never a printer's address.
        device('IPP-LOOP', { ip: '127.0.0.1', is_saved: true, web_ui_url: `http://127.0.0.1:${ipp.port}/` }),
        device('USB-1', { ip: '', is_saved: true, is_usb: true, device_type: 'usb', source_type: 'usb' }),
        // No route to it from the box: the connect fails at once.
        device('FAR', { ip: '198.18.9.9', is_saved: true }),
      ]),
    });
  });
  after(async () => {
    await agent?.stop();
    for (const r of relays) r.stop();
    echo?.stop();
    await ipp?.stop();
    lan?.destroy();
  });

  test('the printer\'s own page arrives, its links kept under /proxy/{serial}/', async () => {
    const r = await get(agent, '/proxy/IPP-1/');
    assert.equal(r.status, 200, r.body.slice(0, 300));
    assert.match(String(header(r, 'content-type')), /^text\/html/);
    assert.match(r.body, /Front Desk/, 'the queue name ippeveprinter shows');
    assert.match(r.body, /<base href="\/proxy\/IPP-1\/">/);
    assert.match(r.body, /href="\/proxy\/IPP-1\/icon\.png"/, 'root-absolute links are rewritten');
    assert.doesNotMatch(r.body, /href="\/icon\.png"/);
    assert.equal(header(r, 'x-frame-options'), undefined, 'the printer\'s DENY is dropped (the server shows the page)');
    assert.match(String(header(r, 'content-security-policy')), /^sandbox /, 'the printer\'s scripts never run as the box');
    assert.equal(Number(header(r, 'content-length')), Buffer.byteLength(r.body));
  });

  test('other resources pass through unchanged', async () => {
    const direct = await fetchDirect(ipp.port, '/icon.png');
    assert.equal(direct.status, 200);
    const r = await get(agent, '/proxy/IPP-1/icon.png');
    assert.equal(r.status, 200);
    assert.equal(header(r, 'content-type'), direct.type);
    assert.ok(r.bytes.equals(direct.bytes), 'the same bytes as from the printer');
    // The printer's own 404 is the printer's answer.
    const missing = await get(agent, '/proxy/IPP-1/no-such-page');
    assert.equal(missing.status, 404);
  });

  test('/proxy/{serial} without the slash is sent to its directory form', async () => {
    const r = await get(agent, '/proxy/IPP-1?x=1');
    assert.equal(r.status, 301);
    assert.equal(header(r, 'location'), '/proxy/IPP-1/?x=1');
  });

  test('HTTPS with a self-signed certificate; hop-by-hop and the box\'s own headers stay here', async () => {
    const r = await agent.request('/proxy/ECHO-1/echo?a=1&b=2', {
      headers: {
        Accept: 'application/json',
        Cookie: `pm_agent_session=THE-TECHNICIANS-SESSION; pbx_printer_jar=${jarOf([['sid', 'abc', null]])}; other=box-cookie`,
        'X-Forwarded-For': '10.9.9.9',
        'X-Service-Proxy': 'server',
        Connection: 'keep-alive, X-Custom',
        Origin: `https://127.0.0.1:${agent.httpsPort}`,
        Referer: `https://127.0.0.1:${agent.httpsPort}/proxy/ECHO-1/dir/page.html?q=1`,
        'Accept-Language': 'de',
      },
    });
    assert.equal(r.status, 200, r.body);
    const seen = JSON.parse(r.body) as { method: string; url: string; headers: Record<string, string> };
    assert.equal(seen.url, '/echo?a=1&b=2', 'the path after the serial and the query, as they were');
    assert.equal(seen.headers.host, `${ECHO_HOST}:${ECHO_PORT}`);
    assert.equal(seen.headers.cookie, 'sid=abc', 'the printer gets its own cookies from its jar, never the box\'s');
    assert.equal(seen.headers['x-forwarded-for'], undefined);
    assert.equal(seen.headers['x-service-proxy'], undefined);
    assert.equal(seen.headers['accept-language'], 'de');
    assert.equal(seen.headers.origin, ECHO_ORIGIN, 'Origin is the printer\'s own (vendor CSRF checks)');
    assert.equal(seen.headers.referer, `${ECHO_ORIGIN}/dir/page.html?q=1`);
    assert.equal(seen.headers['accept-encoding'], 'identity');
    for (const h of ['x-frame-options', 'strict-transport-security']) assert.equal(header(r, h), undefined, h);
    assert.match(String(header(r, 'content-security-policy')), /^sandbox /);
  });

  test('a form is posted to the printer with its body', async () => {
    const r = await agent.request('/proxy/ECHO-1/echo', {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'tray=2&size=a4',
    });
    assert.equal(r.status, 200, r.body);
    const seen = JSON.parse(r.body) as { method: string; body: string };
    assert.equal(seen.method, 'POST');
    assert.equal(seen.body, 'tray=2&size=a4');
  });

  test('HTML is rewritten as the reference does: links, CSS url(), the printer\'s own absolute links, a <base>', async () => {
    const r = await get(agent, '/proxy/ECHO-1/dir/page.html');
    assert.equal(r.status, 200, r.body.slice(0, 300));
    assert.match(r.body, /<head><base href="\/proxy\/ECHO-1\/dir\/">/);
    assert.match(r.body, /href="\/proxy\/ECHO-1\/status"/);
    assert.match(r.body, /src='\/proxy\/ECHO-1\/logo\.png'/);
    assert.match(r.body, /action="\/proxy\/ECHO-1\/set"/);
    assert.match(r.body, /url\(\/proxy\/ECHO-1\/img\/bg\.png\)/);
    assert.match(r.body, /href="\/proxy\/ECHO-1\/abs"/, 'an absolute link to the printer itself');
    assert.match(r.body, /href="rel\.html"/, 'relative links resolve through the <base>');
    assert.match(r.body, /href="https:\/\/printer-vendor\.invalid\/"/, 'another site stays another site');
  });

  test('Location is kept under the prefix; the printer\'s Set-Cookie becomes its jar cookie under the prefix', async () => {
    const abs = await get(agent, '/proxy/ECHO-1/redirect');
    assert.equal(abs.status, 302);
    assert.equal(header(abs, 'location'), '/proxy/ECHO-1/after/x?y=1#top');
    const rel = await get(agent, '/proxy/ECHO-1/dir/redirect-relative');
    assert.equal(rel.status, 303);
    assert.equal(header(rel, 'location'), '/proxy/ECHO-1/dir/next.html');
    const away = await get(agent, '/proxy/ECHO-1/redirect-away');
    assert.equal(header(away, 'location'), 'http://printer-vendor.invalid/help', 'another host is not proxied: the browser goes there itself');
    const c = await get(agent, '/proxy/ECHO-1/cookie');
    assert.deepEqual(
      c.headers['set-cookie'],
      [`pbx_printer_jar=${jarOf([['sid', 'abc', null], ['pm_agent_session', 'planted', null], ['lang', 'en', null]])}; Path=/proxy/ECHO-1/; HttpOnly; SameSite=Lax; Secure`],
      'one cookie of the box\'s making under the printer\'s prefix: no Domain, no other path, no cookie named like the box\'s session',
    );
    // Given back, the jar is the printer's cookies again, and only to this printer.
    const back = await agent.request('/proxy/ECHO-1/echo', { headers: { Accept: 'application/json', Cookie: String(c.headers['set-cookie']![0]).split(';')[0] } });
    assert.equal(JSON.parse(back.body).headers.cookie, 'sid=abc; pm_agent_session=planted; lang=en');
  });

  test('in a browser, the printer\'s scripts cannot use the box\'s API (the page has an opaque origin)', { skip: chromiumMissing }, async () => {
    const browser = await launchChromium();
    try {
      const before = (await agent.get('/settings')).body;
      const page = await browser.newPage({ ignoreHTTPSErrors: true });
      // On loopback the browser is the local admin: the strongest credential there is.
      await page.goto(`https://127.0.0.1:${agent.httpsPort}/proxy/ECHO-1/evil.html`);
      await page.waitForFunction(() => document.title !== 'pending', undefined, { timeout: 30_000 });
      assert.equal(await page.title(), 'post refused, read refused, origin null');
      const after = JSON.parse((await agent.get('/settings')).body);
      assert.equal(after.discovery.ranges_text, JSON.parse(before).discovery.ranges_text, 'nothing changed');
    } finally {
      await browser.close();
    }
  });

  test('a page over 8 MiB is refused, not buffered without bound', async () => {
    const r = await get(agent, '/proxy/ECHO-1/big.html');
    expectTextError(r, 502, 'the printer\'s answer is over 8388608 bytes');
  });

  test('a larger file that passes through is cut off at 8 MiB', async () => {
    await assert.rejects(get(agent, '/proxy/ECHO-1/big.bin'), /aborted|ECONNRESET|socket hang up/);
  });

  test('a printer that does not answer is given up after 25 s', { timeout: 120_000 }, async () => {
    const started = performance.now(); // monotonic: a wall-clock step cannot shorten the wait
    // 90 s is only a give-up; the message says it was the agent's 25 s limit that answered.
    const r = await agent.request('/proxy/ECHO-1/slow', { headers: { Accept: 'text/html' }, timeoutMs: 90_000 });
    expectTextError(r, 502, `printer "ECHO-1" at ${ECHO_ORIGIN}: no answer within 25000 ms`);
    // Not before its time. Only time shows it (the agent is another process with no clock to set),
    // and as a LOWER bound measured from before the request it cannot fail on a loaded machine,
    // which only makes the answer later. No upper bound.
    const waited = performance.now() - started;
    assert.ok(waited >= 24_000, `given up after ${Math.round(waited)} ms, before its 25 s`);
  });

  test('refusals: unknown, not saved, USB, no web server, another host\'s port, the box itself, loopback', async () => {
    expectTextError(await get(agent, '/proxy/NOPE/'), 404, 'no device with serial "NOPE"');
    expectTextError(await get(agent, '/proxy/IPP-NOT-SAVED/'), 403, 'device "IPP-NOT-SAVED" is not saved: only a saved printer\'s web page is proxied');
    expectTextError(await get(agent, '/proxy/USB-1/'), 409, 'device "USB-1" is a USB printer: its web page is not proxied');
    const loopback = 'a loopback address (127.0.0.0/8): a printer\'s page is never fetched from this box itself';
    expectTextError(await get(agent, '/proxy/SELF/settings'), 403, `device "SELF" is at 127.0.0.1, ${loopback}`);
    expectTextError(await get(agent, '/proxy/IPP-LOOP/'), 403, `device "IPP-LOOP" is at 127.0.0.1, ${loopback}`);
    // web_ui_url names the other laptop: neither its host nor its port is used, only the record's address on port 80.
    const elsewhere = await get(agent, '/proxy/ELSEWHERE/');
    assert.equal(elsewhere.status, 502, elsewhere.body);
    assert.match(elsewhere.body, /^printer "ELSEWHERE" at http:\/\/198\.18\.7\.3: connect ECONNREFUSED/);
    const far = await get(agent, '/proxy/FAR/');
    assert.equal(far.status, 502);
    assert.match(far.body, /^printer "FAR" at http:\/\/198\.18\.9\.9: connect E(NETUNREACH|HOSTUNREACH)/);
  });

  test('nothing in the request changes where it goes: paths that try to leave the printer are refused', async () => {
    for (const path of ['/proxy/IPP-1/../settings', '/proxy/IPP-1//127.0.0.2/', '/proxy/IPP-1/%2e%2e/x', '/proxy/IPP-1/%2F%2F127.0.0.2/', '/proxy/IPP-1/http://127.0.0.2/']) {
      const r = await get(agent, path);
      assert.equal(r.status, 400, `${path}: ${r.status} ${r.body}`);
      assert.match(r.body, /^bad request path/);
    }
    // An absolute-form target names its own authority: it is ignored (the box is no open proxy),
    // the path is served as ever, from the saved printer.
    const before = echo.seen.length;
    const r = await get(agent, `http://127.0.0.2:${ipp.port}/proxy/ECHO-1/echo`);
    assert.equal(r.status, 200, r.body);
    assert.equal(echo.seen.length, before + 1, 'the saved printer was asked');
    assert.equal(echo.seen.at(-1)!.url, '/echo');
  });

  test('the printer\'s allowed range is the box\'s (discovery.allowed_ranges)', async () => {
    const set = await agent.request('/settings', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ discovery: { allowed_ranges: ['198.18.9.0/24'] } }),
    });
    assert.equal(set.status, 200, set.body);
    try {
      expectTextError(await get(agent, '/proxy/IPP-1/'), 403, `device "IPP-1" is at ${IPP_HOST}, outside discovery.allowed_ranges`);
    } finally {
      const back = await agent.request('/settings', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ discovery: { allowed_ranges: [] } }),
      });
      assert.equal(back.status, 200, back.body);
    }
  });
});

const skipPm = skipIpp ?? printmasterUnavailable();
describe('through PrintMaster\'s own central server, as its UI asks', { skip: skipPm ?? false }, () => {
  let ipp: IppPrinter;
  let pm: PmServer;
  let agent: Agent;
  let agentId: string;
  let lan: Lan;
  let relay: Relay;

  before(async () => {
    lan = createLan();
    [ipp, pm] = await Promise.all([startIppPrinter({ queue: 'Branch Office' }), startPrintmaster()]);
    relay = await relayInto(lan.laptopNs, IPP_HOST, IPP_PORT, ipp.port);
    agent = await startAgentInLan(lan, {
      serverUrl: pm.url,
      server: { enrollment_token: pm.token, ca_file: pm.caFile },
      // The server, on the test's 127.0.0.1, at the same address and port on the box's.
      expose: [Number(new URL(pm.url).port)],
      seed: ndjson([device('IPP-PM', { ip: IPP_HOST, is_saved: true, manufacturer: 'Acme', model: 'LaserWriter 9000', web_ui_url: `http://${IPP_HOST}:${IPP_PORT}/` })]),
    });
    agentId = await connectedAgentId(pm);
  });
  after(async () => {
    await agent?.stop();
    relay?.stop();
    await pm?.kill();
    await ipp?.stop();
    lan?.destroy();
  });

  test('the agent proxy reaches the printer\'s page through the box', async () => {
    const r = await pm.api('GET', `/api/v1/proxy/agent/${agentId}/proxy/IPP-PM/`);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.match(r.text, /Branch Office/);
    // The server swaps the agent's prefix /proxy/{serial} for its own device proxy's.
    assert.match(r.text, /\/api\/v1\/proxy\/device\/IPP-PM\/icon\.png/);
  });

  test('the server\'s device proxy (its "open web UI" button) shows the printer\'s page', async () => {
    // The server routes a device by the agent it has on record for it. The box's uploads may not
    // have reached this server yet: the record is given the way the box sends it.
    await serverKnowsDevice(pm, agent, agentId, { serial: 'IPP-PM', ip: IPP_HOST, manufacturer: 'Acme', model: 'LaserWriter 9000' });
    const r = await pm.api('GET', '/api/v1/proxy/device/IPP-PM/');
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.match(r.text, /Branch Office/);
    const icon = await pm.api('GET', '/api/v1/proxy/device/IPP-PM/icon.png');
    assert.equal(icon.status, 200);
    // An unknown serial on the box, asked for through the server's agent proxy: the box's 404.
    const none = await pm.api('GET', `/api/v1/proxy/agent/${agentId}/proxy/NOT-HERE/`);
    assert.equal(none.status, 404);
    assert.match(none.text, /no device with serial "NOT-HERE"/);
  });
});

describe('from a laptop on the site network', { skip: skipLan ?? false }, () => {
  let lan: Lan;
  let box: BoxAgent;
  before(async () => {
    lan = createLan();
    box = await startAgentInBox(lan, { authMode: 'password', seed: ndjson([device('LAN-PRN', { ip: '127.0.0.1', is_saved: true })]) });
  });
  after(async () => {
    await box?.stop();
    lan?.destroy();
  });

  test('without a credential the proxy and its siblings are refused', async () => {
    const [plain, browser, preview, report] = await lanRequests(lan, lan.laptop, box.config.httpsPort, [
      { path: '/proxy/LAN-PRN/', headers: { Accept: 'application/json' } },
      { path: '/proxy/LAN-PRN/', headers: { Accept: 'text/html' } },
      { method: 'POST', path: '/devices/preview', headers: { 'Content-Type': 'application/json' }, body: '{"serial":"LAN-PRN"}' },
      { method: 'POST', path: '/api/report', headers: { 'Content-Type': 'application/json' }, body: '{"issue_type":"other"}' },
    ]);
    assert.equal(plain.status, 401);
    assert.equal(plain.body, 'unauthorized\n');
    assert.equal(browser.status, 302);
    assert.equal(browser.headers.location, '../../login?return_to=%2Fproxy%2FLAN-PRN%2F', 'relative to the request: /login from /proxy/LAN-PRN/');
    assert.equal(preview.status, 401);
    assert.equal(report.status, 401);
  });
});
