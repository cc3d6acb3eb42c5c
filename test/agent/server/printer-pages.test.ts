// A printer's web page with a sign-in, through PrintMaster's own central server
// (../shared/tools/printmaster-server) as its "open web UI" button asks for it:
// /api/v1/proxy/device/{serial}/... , relayed over the box's WebSocket channel to the box's
// /proxy/{serial}/. The printer is a small web server of the test's own on
// 127.0.0.1 that gives a session cookie at sign-in and wants it afterwards; it also has a Kyocera
// Command Center's sign-in form and a page behind Basic authentication. The box runs in the box
// namespace of a test LAN (kit/lan.ts) and finds the printer at a laptop's address through a
// relay (kit/ns-relay.ts), as test/agent/api/printer-proxy.test.ts places its printers: a box never
// fetches a printer's page from loopback. Nothing leaves 127.0.0.0/8 or the test's namespaces.
//   - a person signs in on the printer's own page: the printer's cookie reaches the browser as the
//     box's jar cookie under the server's prefix and goes back to the printer; no cookie of the
//     server's reaches the printer and none of the box's reaches the browser;
//   - credentials stored on the server (its device-credentials) sign the box in, as PrintMaster's
//     agent does: a Kyocera form once (its hidden fields posted back), Basic on every request;
//     the box's own /proxy never uses them;
//   - the box's UI through the server's proxy has no Sign out.
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLan, lanUnavailable, type Lan } from '../../kit/lan.js';
import { relayInto, startAgentInLan, type LanAgent, type Relay } from '../../kit/ns-relay.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { connectedAgentId } from '../../kit/pm-agent.js';
import { device, ndjson } from '../../kit/seed.js';
import { until } from '../../kit/pm-checks.js';

const why = lanUnavailable() ?? printmasterUnavailable();
if (why) console.log(`# printer pages through PrintMaster's server skipped: ${why}`);

/** Where the box finds the printer: a laptop on the site network (relayed to the test's server). */
const PRINTER_HOST = '198.18.7.2';
const KYOCERA = { username: 'Admin', password: 'kyo-pass-1' };
const BASIC = { username: 'admin', password: 'basic-pass-1' };
const PERSON = { user: 'tech', pass: 'tech-pass-1' };

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const page = (body: string) => `<html><head><title>Printer</title></head><body>${body}</body></html>`;
const signInForm = page('<form action="/login.html" method="post"><input name="user"><input type="password" name="pass"></form>');
const cookieOf = (req: http.IncomingMessage, name: string) =>
  (req.headers.cookie ?? '').split(';').map((c) => c.trim()).find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1);

/** The printer: sessions by cookie, a Kyocera sign-in form, a Basic page; every request noted. */
async function startPrinter(): Promise<{ port: number; seen: Seen[]; stop(): void }> {
  const seen: Seen[] = [];
  const sessions = new Map<string, string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = (req.url ?? '').split('?')[0];
      const form = new URLSearchParams(body);
      const html = (status: number, text: string, headers: http.OutgoingHttpHeaders = {}) => {
        res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', ...headers });
        res.end(text);
      };
      const signedIn = () => sessions.get(cookieOf(req, 'sid') ?? '') ?? sessions.get(cookieOf(req, 'rtl') ?? '');
      if (path === '/login.html' && req.method === 'GET') return html(200, signInForm);
      if (path === '/login.html' && req.method === 'POST') {
        if (form.get('user') !== PERSON.user || form.get('pass') !== PERSON.pass) return html(200, signInForm);
        const sid = randomUUID();
        sessions.set(sid, PERSON.user);
        return html(302, '', { Location: '/status.html', 'Set-Cookie': `sid=${sid}; Path=/; HttpOnly` });
      }
      if (path === '/status.html') {
        const who = signedIn();
        return who ? html(200, page(`Printer status: ready (session of ${who})`)) : html(302, '', { Location: '/login.html' });
      }
      // Kyocera Command Center RX: its start page's form, with a hidden field it wants back.
      if (path === '/startwlm/Start_Wlm.htm' && req.method === 'GET') {
        return html(200, page('<form method="post"><input type="hidden" name="okhtmfile" value="/startwlm/Main.htm"><input name="arg01_UserName"><input type="password" name="arg02_Password"></form>'));
      }
      if (path === '/startwlm/Start_Wlm.htm' && req.method === 'POST') {
        if (form.get('arg01_UserName') !== KYOCERA.username || form.get('arg02_Password') !== KYOCERA.password || form.get('okhtmfile') !== '/startwlm/Main.htm') {
          return html(200, page('Login failed'));
        }
        const rtl = randomUUID();
        sessions.set(rtl, KYOCERA.username);
        return html(200, page('Login OK'), { 'Set-Cookie': `rtl=${rtl}; Path=/` });
      }
      if (path === '/basic.html') {
        const want = 'Basic ' + Buffer.from(`${BASIC.username}:${BASIC.password}`).toString('base64');
        if (req.headers.authorization !== want) return html(401, page('Authentication required'), { 'WWW-Authenticate': 'Basic realm="printer"' });
        return html(200, page('Network settings (Basic)'));
      }
      html(404, page('not found'));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { port: (server.address() as AddressInfo).port, seen, stop: () => server.close() };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

describe('printer pages with a sign-in through PrintMaster\'s server', { skip: why ?? false }, () => {
  let lan: Lan;
  let pm: PmServer;
  let printer: Awaited<ReturnType<typeof startPrinter>>;
  let relay: Relay;
  let agent: LanAgent;
  let agentId: string;

  /** A browser signed in to the server: its session cookie, and more cookies it holds for the page. */
  function browse(method: string, path: string, opts: { cookies?: string; form?: string } = {}): Promise<Answer> {
    return new Promise((ok, fail) => {
      const body = opts.form === undefined ? undefined : Buffer.from(opts.form);
      const req = https.request(`${pm.url}${path}`, {
        method,
        ca: readFileSync(pm.caFile),
        checkServerIdentity: () => undefined,
        headers: {
          cookie: [pm.cookie, opts.cookies].filter(Boolean).join('; '),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length } : {}),
        },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      });
      req.on('error', fail);
      req.end(body);
    });
  }
  const requestsFor = (path: string) => printer.seen.filter((s) => s.url.split('?')[0] === path);

  before(async () => {
    lan = createLan();
    [printer, pm] = await Promise.all([startPrinter(), startPrintmaster()]);
    relay = await relayInto(lan.laptopNs, PRINTER_HOST, 80, printer.port);
    const at = { ip: PRINTER_HOST, is_saved: true, web_ui_url: `http://${PRINTER_HOST}/` };
    agent = await startAgentInLan(lan, {
      serverUrl: pm.url,
      server: { enrollment_token: pm.token, ca_file: pm.caFile, upload_interval_ms: 0 },
      expose: [Number(new URL(pm.url).port)],
      seed: ndjson([
        device('WEB-1', { ...at, manufacturer: 'Acme', model: 'LaserWriter 9000' }),
        device('KYO-1', { ...at, manufacturer: 'Kyocera', model: 'ECOSYS P2040dn' }),
        device('BASIC-1', { ...at, manufacturer: 'Acme', model: 'LaserWriter 8000' }),
      ]),
    });
    agentId = await connectedAgentId(pm);
    // The server proxies a device to the agent it has on record for it: the box's own upload.
    await until('the box\'s printers on the server', () => {
      const rows = pm.query<{ serial: string; agent_id: string }>('SELECT serial, agent_id FROM devices');
      return ['WEB-1', 'KYO-1', 'BASIC-1'].every((s) => rows.some((r) => r.serial === s && r.agent_id === agentId));
    }, 90_000);
  });
  after(async () => {
    await agent?.stop();
    relay?.stop();
    printer?.stop();
    await pm?.kill();
    lan?.destroy();
  });

  test('a person signs in on the printer\'s page: its cookie comes back as the box\'s jar under the server\'s prefix and goes to the printer', async () => {
    const prefix = '/api/v1/proxy/device/WEB-1';
    // Not signed in: the printer sends the person to its sign-in page (kept under the server's prefix).
    const before = await browse('GET', `${prefix}/status.html`);
    assert.equal(before.status, 302, before.text.slice(0, 300));
    assert.equal(before.headers.location, `${prefix}/login.html`);

    const login = await browse('POST', `${prefix}/login.html`, { form: `user=${PERSON.user}&pass=${PERSON.pass}` });
    assert.equal(login.status, 302, login.text.slice(0, 300));
    assert.equal(login.headers.location, `${prefix}/status.html`);
    const setCookies = login.headers['set-cookie'] ?? [];
    assert.equal(setCookies.length, 1, `one cookie, the box's jar for this printer: ${JSON.stringify(setCookies)}`);
    assert.match(setCookies[0], /^pbx_printer_jar=[A-Za-z0-9_-]+; /);
    assert.match(setCookies[0], new RegExp(`; Path=${prefix}/(;|$)`), 'under the server\'s prefix for this printer');
    assert.match(setCookies[0], /; HttpOnly/);
    assert.match(setCookies[0], /; Secure/, 'the server is HTTPS');
    assert.doesNotMatch(setCookies[0], /sid=|pm_agent_/);

    const jar = setCookies[0].split(';')[0];
    const status = await browse('GET', `${prefix}/status.html`, { cookies: jar });
    assert.equal(status.status, 200, status.text.slice(0, 300));
    assert.match(status.text, /Printer status: ready \(session of tech\)/);
    // The printer got its own cookie and nothing else: not the server's session, not the jar itself.
    const sid = requestsFor('/login.html').at(-1)!;
    assert.equal(sid.method, 'POST');
    assert.equal(sid.headers.cookie, undefined, 'nothing of the server\'s reaches the printer');
    const last = requestsFor('/status.html').at(-1)!;
    assert.match(String(last.headers.cookie), /^sid=[0-9a-f-]{36}$/, `the printer's session only: ${last.headers.cookie}`);
    assert.equal(last.headers.authorization, undefined, 'no credentials are stored on the server for this printer');
  });

  test('the server\'s stored Kyocera credentials sign the box in with the vendor\'s form, once; the session stays on the box', async () => {
    const saved = await pm.api('POST', '/device/webui-credentials', { serial: 'KYO-1', username: KYOCERA.username, password: KYOCERA.password, auth_type: 'form', auto_login: true });
    assert.equal(saved.status, 200, saved.text);
    assert.equal(saved.json?.success, true, saved.text);
    const from = printer.seen.length;
    const r = await browse('GET', '/api/v1/proxy/device/KYO-1/status.html');
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.match(r.text, /session of Admin/);
    assert.equal(r.headers['set-cookie'], undefined, 'the printer\'s session is not handed to the browser');
    const signIns = printer.seen.slice(from).filter((s) => s.method === 'POST' && s.url === '/startwlm/Start_Wlm.htm');
    assert.equal(signIns.length, 1);
    const posted = new URLSearchParams(signIns[0].body);
    assert.equal(posted.get('arg01_UserName'), KYOCERA.username);
    assert.equal(posted.get('okhtmfile'), '/startwlm/Main.htm', 'the form\'s hidden field is posted back');
    // A second page uses the same session: no second sign-in.
    const again = await browse('GET', '/api/v1/proxy/device/KYO-1/status.html');
    assert.equal(again.status, 200);
    assert.equal(printer.seen.slice(from).filter((s) => s.method === 'POST').length, 1);
    // The box's own /proxy (its UI and API) does not use the server's credentials.
    const local = await agent.request('/proxy/KYO-1/status.html');
    assert.equal(local.status, 302, local.body.slice(0, 300));
  });

  test('the server\'s stored Basic credentials go with every request to the printer', async () => {
    // A printer without credentials on the server: the printer asks for them.
    const none = await browse('GET', '/api/v1/proxy/device/WEB-1/basic.html');
    assert.equal(none.status, 401, none.text.slice(0, 300));
    assert.equal(none.headers['www-authenticate'], 'Basic realm="printer"');
    const saved = await pm.api('POST', '/device/webui-credentials', { serial: 'BASIC-1', username: BASIC.username, password: BASIC.password, auth_type: 'basic', auto_login: true });
    assert.equal(saved.json?.success, true, saved.text);
    const from = printer.seen.length;
    for (const path of ['basic.html', 'status.html']) await browse('GET', `/api/v1/proxy/device/BASIC-1/${path}`);
    const want = 'Basic ' + Buffer.from(`${BASIC.username}:${BASIC.password}`).toString('base64');
    assert.deepEqual(printer.seen.slice(from).map((s) => [s.url, s.headers.authorization]), [['/basic.html', want], ['/status.html', want]]);
    const r = await browse('GET', '/api/v1/proxy/device/BASIC-1/basic.html');
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.match(r.text, /Network settings \(Basic\)/);
  });

  test('the box\'s UI through the server\'s proxy has no Sign out; on the box itself it has', async () => {
    const viaServer = await browse('GET', `/api/v1/proxy/agent/${agentId}/`);
    assert.equal(viaServer.status, 200, viaServer.text.slice(0, 300));
    assert.match(viaServer.text, /<header><h1>PrintBox<\/h1>/);
    assert.doesNotMatch(viaServer.text, /id="logout"|Sign out/);
    const direct = await agent.request('/');
    assert.equal(direct.status, 200);
    assert.match(direct.body, /<button id="logout" type="button">Sign out<\/button>/);
  });
});
