// The box as a target of its own requests, and a hostile printer's page, tried from the site
// network (test/kit/lan.ts: the agent in namespace "box", a laptop and a hostile printer in
// namespace "laptop"): a printer page in Chromium that sends Clear-Site-Data and 100+ cookies per
// load must leave the technician signed in; a device record at 0.0.0.0, loopback, link-local or
// the box's own address is never proxied; webhooks never go to the box itself and their test
// result says only the status; a forged Host on the 8080 redirect never becomes its Location.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { cliPath, runCli, writeConfig } from '../../kit/agent.js';
import { createLan, lanUnavailable, startAgentInBox, type BoxAgent, type Lan } from '../../kit/lan.js';
import { chromiumMissing, launchChromium } from '../../kit/chromium.js';
import { device, ndjson } from '../../kit/seed.js';

const skip = lanUnavailable();
if (skip) console.log(`# hostile target tests skipped: ${skip}`);

const PASSWORD = 'correct horse battery';
const PRINTER_PORT = 8631;
const SECRET = 'a webhook secret of some length';

// The hostile printer: every load of /page.html sets 120 new cookies (and some named like the
// box's), with Clear-Site-Data; the page shows the Cookie header it got. /hook answers a webhook
// with a redirect to the box's loopback and a body that must not be shown.
const PRINTER = String.raw`
import http from 'node:http';
let load = 0;
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url === '/page.html') {
      load++;
      const cookies = Array.from({ length: 120 }, (_, i) => 'c' + load + '_' + i + '=' + 'v'.repeat(40) + '; Path=/; Max-Age=86400');
      cookies.push('pm_agent_session=planted; Path=/', 'pm_agent_device=planted; Path=/api/v1/auth', '__Host-evil=1; Path=/; Secure', 'wide=1; Domain=198.18.7.1; Path=/');
      res.writeHead(200, { 'Content-Type': 'text/html', 'Clear-Site-Data': '"cookies", "storage", "*"', 'Set-Cookie': cookies, 'Strict-Transport-Security': 'max-age=31536000', 'NEL': '{"report_to":"x","max_age":86400}' });
      return res.end('<html><head><title>printer ' + load + '</title></head><body><pre id="got">' + (req.headers.cookie ?? '') + '</pre></body></html>');
    }
    if (req.url === '/hook') {
      res.writeHead(302, { Location: 'https://127.0.0.1:8443/settings?leak=1', 'Content-Type': 'text/plain' });
      return res.end('BODY-OF-THE-RECEIVER');
    }
    res.writeHead(404);
    res.end();
  });
}).listen(${PRINTER_PORT}, '198.18.7.2', () => console.log('listening'));
`;

// A plain HTTP request from the laptop namespace (the 8080 listener speaks no TLS).
const PLAIN_GET = String.raw`
import http from 'node:http';
const [host, port, path, hostHeader] = process.argv.slice(1);
http.get({ host, port: Number(port), path, headers: { Host: hostHeader }, agent: false }, (res) => {
  res.resume();
  res.on('end', () => console.log(JSON.stringify({ status: res.statusCode, location: res.headers.location ?? null })));
}).on('error', (e) => console.log(JSON.stringify({ status: 0, error: e.message })));
`;

function runIn(ns: string, script: string, args: string[]): ChildProcess {
  return spawn('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function plainGet(lan: Lan, port: number, path: string, host: string): Promise<{ status: number; location: string | null; error?: string }> {
  return new Promise((resolve, reject) => {
    const p = runIn(lan.laptopNs, PLAIN_GET, [lan.boxAddress, String(port), path, host]);
    let out = '';
    p.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    p.on('error', reject);
    p.on('close', () => resolve(JSON.parse(out.trim().split('\n').pop() || '{"status":0,"location":null}')));
  });
}

describe('the box as its own target, from the site network', { skip: skip ?? false }, () => {
  let lan: Lan;
  let box: BoxAgent;
  let printer: ChildProcess;
  const json = (method: string, path: string, body: unknown) =>
    box.request({ method, path, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });

  before(async () => {
    lan = createLan();
    printer = runIn(lan.laptopNs, PRINTER, []);
    await new Promise<void>((resolve, reject) => {
      printer.stdout!.on('data', (b: Buffer) => b.toString().includes('listening') && resolve());
      printer.once('exit', (code) => reject(new Error(`hostile printer exited ${code}`)));
    });
    const config = await writeConfig({ authMode: 'password', allowLocalAdmin: true, listenAddress: '0.0.0.0' });
    const pw = await runCli(['passwd', 'tech'], { configPath: config.configPath, input: PASSWORD + '\n' });
    assert.equal(pw.code, 0, pw.stderr);
    box = await startAgentInBox(lan, {
      config,
      seed: ndjson([
        device('EVIL', { ip: '198.18.7.2', is_saved: true, web_ui_url: `http://198.18.7.2:${PRINTER_PORT}/` }),
        device('SELF0', { ip: '0.0.0.0', is_saved: true, web_ui_url: `https://0.0.0.0:${config.httpsPort}/` }),
        device('SELF-LAN', { ip: '198.18.7.1', is_saved: true, web_ui_url: `https://198.18.7.1:${config.httpsPort}/` }),
        device('LOOP', { ip: '127.0.0.1', is_saved: true, web_ui_url: `https://127.0.0.1:${config.httpsPort}/` }),
        device('LOOP-OTHER', { ip: '127.0.0.2', is_saved: true }),
        device('LINK-LOCAL', { ip: '169.254.1.1', is_saved: true }),
      ]),
    });
  });
  after(async () => {
    await box?.stop();
    printer?.kill();
    lan?.destroy();
  });

  test('a device record at 0.0.0.0, loopback, link-local or the box\'s own address is never proxied', async () => {
    const cases: [string, string][] = [
      ['SELF0', '0.0.0.0, an unspecified address (0.0.0.0/8), which reaches this box'],
      ['SELF-LAN', '198.18.7.1, an address of this box itself'],
      ['LOOP', '127.0.0.1, a loopback address (127.0.0.0/8)'],
      ['LOOP-OTHER', '127.0.0.2, a loopback address (127.0.0.0/8)'],
      ['LINK-LOCAL', '169.254.1.1, a link-local address (169.254.0.0/16)'],
    ];
    // As the local administrator on the box's loopback: the strongest standing a request could borrow.
    const answers = await box.requests(cases.map(([serial]) => ({ path: `/proxy/${serial}/settings`, headers: { Accept: 'application/json' } })));
    answers.forEach((r, i) => {
      const [serial, why] = cases[i];
      assert.equal(r.status, 403, `${serial}: ${r.status} ${r.body}`);
      assert.equal(r.body, `device "${serial}" is at ${why}: a printer's page is never fetched from this box itself\n`);
    });
  });

  test('webhooks to the box itself are refused, and a test result says only the status', async () => {
    for (const url of ['http://127.0.0.1:8443/x', 'http://127.5.0.1/x', 'http://169.254.169.254/latest', 'https://198.18.7.1:8443/settings', 'http://0.0.0.0:8443/', 'http://[::1]:8443/', 'http://localhost:8443/', 'http://[::ffff:127.0.0.1]/']) {
      const r = await json('POST', '/settings', { notifications: { webhook_secret: SECRET, recipients: [{ webhooks: [url] }] } });
      assert.equal(r.status, 400, `${url}: ${r.status} ${r.body}`);
      assert.match(r.body, /^notifications\.recipients\[0\]\.webhooks must not name .+: alerts go to another host\n$/, url);
    }
    const hook = `http://198.18.7.2:${PRINTER_PORT}/hook`;
    const set = await json('POST', '/settings', { notifications: { webhook_secret: SECRET, recipients: [{ webhooks: [hook] }] } });
    assert.equal(set.status, 200, set.body);
    const t = await json('POST', '/api/notifications/test', {});
    assert.equal(t.status, 200, t.body);
    assert.deepEqual(JSON.parse(t.body).results, [{ channel: 'webhook', target: hook, ok: false, error: 'HTTP 302 (redirects are not followed)' }]);
  });

  test('a forged Host on the 8080 redirect gives the box\'s own address, in the agent and in `printbox-agent redirect`', async () => {
    const httpsPort = box.config.httpsPort;
    const forged = await plainGet(lan, box.config.httpPort, '/x?y=1', 'evil.example');
    assert.deepEqual(forged, { status: 302, location: `https://198.18.7.1:${httpsPort}/x?y=1` });
    const withPort = await plainGet(lan, box.config.httpPort, '/x', 'evil.example:8080');
    assert.equal(withPort.location, `https://198.18.7.1:${httpsPort}/x`);
    const own = await plainGet(lan, box.config.httpPort, '/x', `198.18.7.1:${box.config.httpPort}`);
    assert.equal(own.location, `https://198.18.7.1:${httpsPort}/x`);
    const local = await plainGet(lan, box.config.httpPort, '/x', 'localhost');
    assert.equal(local.location, `https://localhost:${httpsPort}/x`, 'a name of the box itself is kept');

    // The socket-activated listener's process, on a port of its own (the handler is the same one).
    const port = box.config.httpPort + 1;
    const redirect = spawn('ip', ['netns', 'exec', lan.boxNs, process.execPath, cliPath, 'redirect', '--config', box.config.configPath, '--port', String(port), '--https-port', String(httpsPort)], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        redirect.stdout!.on('data', (b: Buffer) => b.toString().includes('redirecting') && resolve());
        redirect.once('exit', (code) => reject(new Error(`printbox-agent redirect exited ${code}`)));
      });
      const r = await plainGet(lan, port, '/x', 'evil.example');
      assert.deepEqual(r, { status: 302, location: `https://198.18.7.1:${httpsPort}/x` });
    } finally {
      redirect.kill();
    }
  });

  test('a hostile printer page in Chromium leaves the technician signed in', { skip: chromiumMissing, timeout: 180_000 }, async () => {
    const browser = await launchChromium({ netns: lan.laptopNs });
    try {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const page = await context.newPage();
      const base = `https://${lan.boxAddress}:${box.config.httpsPort}`;
      await page.goto(`${base}/login`);
      await page.fill('input[name=username]', 'tech');
      await page.fill('input[name=password]', PASSWORD);
      await Promise.all([page.waitForURL(`${base}/`, { timeout: 60_000 }), page.click('button')]);
      const box_ = (all: { name: string; value: string }[]) => all.filter((c) => c.name.startsWith('pm_agent_')).map((c) => `${c.name}=${c.value}`).sort();
      const signedIn = box_(await context.cookies());
      assert.equal(signedIn.length, 2, `the session and the device cookie: ${signedIn.join(', ')}`);

      for (let load = 1; load <= 3; load++) {
        const r = await page.goto(`${base}/proxy/EVIL/page.html`);
        assert.equal(r?.status(), 200, `load ${load}`);
        assert.equal(await page.title(), `printer ${load}`);
        assert.equal(r?.headers()['clear-site-data'], undefined);
        assert.equal(r?.headers()['strict-transport-security'], undefined);
        assert.equal(r?.headers().nel, undefined);
        const got = (await page.textContent('#got')) ?? '';
        assert.doesNotMatch(got, /SESSION|pm_agent_session=(?!planted)|pm_agent_device=(?!planted)/, 'the box\'s cookies never reach the printer');
        // Its first 20 fill the jar; the rest are refused, so it gets those back on every later load.
        if (load > 1) assert.match(got, /^c1_0=v+; c1_1=/, 'the printer gets its own cookies back');
        if (load > 1) assert.doesNotMatch(got, /c[23]_/, 'over the jar\'s limit: refused');
      }
      const all = await context.cookies();
      assert.deepEqual(box_(all), signedIn, 'the session and the device cookie are untouched');
      const others = all.filter((c) => !c.name.startsWith('pm_agent_'));
      assert.deepEqual(others.map((c) => [c.name, c.path]), [['pbx_printer_jar', '/proxy/EVIL/']], 'one cookie for the printer, whatever it set');

      // Signed in still: the box's API answers this browser.
      await page.goto(`${base}/`);
      const status = await page.evaluate(() => fetch('/settings', { headers: { Accept: 'application/json' } }).then((r) => r.status));
      assert.equal(status, 200);
      assert.equal(new URL(page.url()).pathname, '/');
    } finally {
      await browser.close();
    }
  });
});
