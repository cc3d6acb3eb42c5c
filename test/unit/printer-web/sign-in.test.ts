// What crosses the central server's channel of a printer's page (the jar cookie, both ways, and
// nothing else of the box's or the server's), the server's stored credentials as the box reads and
// uses them (printer-web/auto-login.ts) against a small Kyocera- and Epson-like printer on 127.0.0.1 with a
// fake clock for the session's and the retries' times, and the fields PrintMaster's server reads
// of a device's health and supplies (server/pm-fields.ts). The whole path through the real server:
// test/agent/server/printer-pages.test.ts and device-health.test.ts.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { jarCookieOnly, mergeJars, setsJar } from '../../../src/printer-web/cookie-jar.js';
import { AUTO_LOGIN_LIMITS, AutoLogin, asksForPassword, basicAuthorization, hiddenFields, parseCredentials, vendorSignIn, type PrinterCredentials } from '../../../src/printer-web/auto-login.js';
import type { PrinterWebTarget } from '../../../src/printer-web/target.js';
import { responseHeaders } from '../../../src/server/proxy.js';
import { metricsUpload, SOME_REMAINING_PERCENT, statusFields } from '../../../src/server/pm-fields.js';

test('the channel lets in the jar cookie only, and lets out only the jar\'s Set-Cookie', () => {
  assert.equal(jarCookieOnly('pm_session=SERVER; pbx_printer_jar=abc; pm_agent_session=X'), 'pbx_printer_jar=abc');
  assert.equal(jarCookieOnly('pm_session=SERVER; other=1'), undefined);
  assert.equal(jarCookieOnly(undefined), undefined);
  assert.equal(jarCookieOnly('xpbx_printer_jar=1; pbx_printer_jar_2=2'), undefined, 'the name exactly');
  assert.equal(setsJar('pbx_printer_jar=abc; Path=/proxy/P1/; HttpOnly'), true);
  assert.equal(setsJar('pm_agent_session=s; Path=/'), false);
  const out = responseHeaders({
    'content-type': 'text/html',
    'set-cookie': ['pm_agent_session=SESSION; Path=/; HttpOnly', 'pm_agent_device=DEV; Path=/api/v1/auth', 'pbx_printer_jar=J; Path=/proxy/P1/; HttpOnly'],
  });
  assert.deepEqual(out, { 'content-type': 'text/html', 'set-cookie': 'pbx_printer_jar=J; Path=/proxy/P1/; HttpOnly' });
  assert.deepEqual(responseHeaders({ 'set-cookie': ['pm_agent_session=SESSION; Path=/'] }), {}, 'the box\'s session never leaves');
  assert.deepEqual(mergeJars([['sid', 'browser', null], ['lang', 'en', null]], [['sid', 'box', 5]]), [['lang', 'en', null], ['sid', 'box', 5]]);
});

test('the server\'s credentials as the reference answers them; Basic only with auto_login', () => {
  const c = parseCredentials({ exists: true, username: 'admin', password: 'p:w', auth_type: 'Basic', auto_login: true });
  assert.deepEqual(c, { username: 'admin', password: 'p:w', authType: 'basic', autoLogin: true });
  assert.equal(basicAuthorization(c), 'Basic ' + Buffer.from('admin:p:w').toString('base64'));
  assert.equal(basicAuthorization({ ...c!, autoLogin: false }), undefined);
  assert.equal(basicAuthorization({ ...c!, password: '' }), undefined);
  assert.equal(basicAuthorization({ ...c!, authType: 'form' }), undefined);
  assert.equal(parseCredentials({ exists: false }), undefined);
  assert.equal(parseCredentials({ exists: false, error: 'device not owned by this agent' }), undefined);
  assert.equal(parseCredentials({ exists: true, username: 'a', password: 'b', auth_type: 'ntlm' }), undefined, 'a kind the reference does not have');
  assert.equal(parseCredentials({ exists: true, username: 1, password: 'b' }), undefined);
  assert.equal(parseCredentials({ exists: true, username: 'a', password: 'x'.repeat(5000) }), undefined);
  assert.deepEqual(parseCredentials({ exists: true, username: 'a', password: 'b', auth_type: '' }), { username: 'a', password: 'b', authType: 'basic', autoLogin: false }, 'the reference\'s default kind');
  assert.deepEqual(hiddenFields('<input type="hidden" name="tok" value="a1"><INPUT TYPE=hidden NAME=x VALUE=2><input name="user">'), [['tok', 'a1'], ['x', '2']]);
  assert.equal(asksForPassword('<form>Login <input type="password" name="p"></form>'), true);
  assert.equal(asksForPassword('<p>Toner: 40%</p>'), false);
  assert.ok(vendorSignIn('KYOCERA Document Solutions'));
  assert.ok(vendorSignIn('EPSON'));
  assert.equal(vendorSignIn('Brother'), undefined, 'the reference signs in to Epson and Kyocera only');
});

test('health fields: a jam is paper_jam; what stops the printer is error; warnings are neither', () => {
  assert.deepEqual(statusFields(undefined), { paper_jam: false, error: '' });
  assert.deepEqual(statusFields(['Low toner', 'Service requested', 'Output nearly full', 'Toner almost empty']), { paper_jam: false, error: '' });
  assert.deepEqual(statusFields(['Paper jam']), { paper_jam: true, error: '' });
  assert.deepEqual(statusFields(['Paper jam: Jam Tray 1', 'Door open']), { paper_jam: true, error: 'Door open' });
  assert.deepEqual(statusFields(['Cover open: Front Cover', 'No paper', 'Offline', 'No toner', 'Output full', 'Subunit motor failure']).error,
    'Cover open: Front Cover; No paper; Offline; No toner; Output full; Subunit motor failure');
  assert.equal(statusFields(['not answering since 2026-11-29T04:00:00Z: no SNMP answer']).error, 'not answering since 2026-11-29T04:00:00Z: no SNMP answer');
});

test('a reading for the server: "some remaining" is PrintMaster\'s 10 %, another negative is left out', () => {
  assert.equal(SOME_REMAINING_PERCENT, 10);
  const json = metricsUpload({ id: 1, serial: 'S', ts: Date.UTC(2026, 10, 29), page_count: 5, toner_levels: { black: 98, waste_toner: -3, cyan: -2, note: 'x' } });
  assert.deepEqual(json.toner_levels, { black: 98, waste_toner: 10, note: 'x' });
  assert.equal(json.page_count, 5);
});

// --- sign-in against a small Kyocera-like printer, with a fake clock -------------------------

const CREDS: PrinterCredentials = { username: 'Admin', password: 'kyo', authType: 'form', autoLogin: true };
let printer: http.Server;
let target: PrinterWebTarget;
const posts: string[] = [];
const epsonPosts: string[] = [];
let accept = true;

before(async () => {
  printer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      // The first start page the reference tries is missing: the second is this printer's.
      if (path === '/startwlm/Start_Wlm.htm' && req.method === 'GET') {
        res.setHeader('Set-Cookie', 'pre=1; Path=/');
        return res.end('<form method="post"><input type="hidden" name="okhtmfile" value="/main.htm"><input type="password" name="arg02_Password"></form>');
      }
      if (path === '/startwlm/Start_Wlm.htm' && req.method === 'POST') {
        posts.push(`${req.headers.cookie} ${Buffer.concat(chunks).toString()}`);
        if (!accept) return res.writeHead(403).end('no');
        res.writeHead(302, { Location: '/main.htm', 'Set-Cookie': `rtl=s${posts.length}; Path=/` });
        return res.end();
      }
      if (path === '/main.htm') return res.end('main');
      // Epson Web Config: the password page's form posts to SET under the page's path.
      if (path === '/PRESENTATION/ADVANCED/PASSWORD' && req.method === 'GET') return res.end('<form action="SET" method="post"><input type="password" name="INPUTT_PASSWORD"></form>');
      if (path === '/PRESENTATION/ADVANCED/PASSWORD/SET' && req.method === 'POST') {
        epsonPosts.push(Buffer.concat(chunks).toString());
        res.writeHead(200, { 'Set-Cookie': 'EPSON_COOKIE_SESSION=e1; Path=/; HttpOnly' });
        return res.end('ok');
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((ok) => printer.listen(0, '127.0.0.1', ok));
  const port = (printer.address() as AddressInfo).port;
  target = { scheme: 'http', host: '127.0.0.1', port, origin: `http://127.0.0.1:${port}` };
});
after(() => printer?.close());

test('a form sign-in once per 15 minutes, renewed cookies kept, a signed-out page starts anew, a failure waits a minute', async () => {
  let now = Date.UTC(2026, 10, 29, 4, 0);
  let asked = 0;
  const outcomes: string[] = [];
  const logins = new AutoLogin({
    credentials: async () => {
      asked++;
      return CREDS;
    },
    now: () => now,
    onSignIn: (_s, o) => outcomes.push(o.ok ? `ok ${o.cookies}` : `failed ${o.error}`),
  });
  const signal = new AbortController().signal;
  const ask = (path = '/status.html') => logins.forRequest('K1', 'Kyocera', target, path, signal);

  // Two pages at once: one sign-in.
  const [a, b] = await Promise.all([ask(), ask()]);
  assert.deepEqual(a.cookies.map(([n, v]) => `${n}=${v}`), ['pre=1', 'rtl=s1']);
  assert.deepEqual(b.cookies, a.cookies);
  assert.equal(posts.length, 1);
  assert.match(posts[0], /^pre=1 arg01_UserName=Admin&arg02_Password=kyo&Login=Login&okhtmfile=%2Fmain.htm$/);
  assert.deepEqual(outcomes, ['ok 2']);
  assert.equal(asked, 1);

  // The printer turns its session over: the box keeps the new value, and no other cookie of the page's.
  logins.renewed('K1', ['rtl=s1b; Path=/', 'tracking=x; Path=/']);
  assert.deepEqual((await ask()).cookies.map(([n, v]) => `${n}=${v}`), ['pre=1', 'rtl=s1b']);

  // Credentials are asked again after a minute; the session lasts 15.
  now += AUTO_LOGIN_LIMITS.credentialsMs + 1;
  await ask();
  assert.equal(asked, 2);
  assert.equal(posts.length, 1);
  now += AUTO_LOGIN_LIMITS.sessionMs;
  await ask();
  assert.equal(posts.length, 2, 'a new sign-in after 15 minutes');

  // A static file never signs in; the printer asking for the password again does.
  logins.signedOut('K1');
  assert.deepEqual((await ask('/img/logo.png')).cookies, []);
  assert.equal(posts.length, 2);
  assert.equal((await ask()).cookies.find(([n]) => n === 'rtl')?.[1], 's3');

  // A refused sign-in is not tried again for a minute (an account locks after a few).
  logins.signedOut('K1');
  accept = false;
  assert.deepEqual((await ask()).cookies, []);
  assert.deepEqual((await ask()).cookies, []);
  assert.equal(posts.length, 4);
  assert.match(outcomes.at(-1)!, /^failed the sign-in form answered 403$/);
  accept = true;
  now += AUTO_LOGIN_LIMITS.retryMs + 1;
  assert.ok((await ask()).cookies.length);
  assert.equal(posts.length, 5);
});

test('no credentials, a vendor without a sign-in, a server that fails: the page goes without', async () => {
  const signal = new AbortController().signal;
  const none = new AutoLogin({ credentials: async () => undefined, now: () => 0, onSignIn: () => assert.fail('no sign-in') });
  assert.deepEqual(await none.forRequest('K1', 'Kyocera', target, '/', signal), { cookies: [] });
  const brother = new AutoLogin({ credentials: async () => CREDS, now: () => 0, onSignIn: () => assert.fail('no sign-in') });
  assert.deepEqual(await brother.forRequest('B1', 'Brother', target, '/', signal), { cookies: [] });
  const failing = new AutoLogin({ credentials: async () => { throw new Error('server down'); }, now: () => 0, onSignIn: () => assert.fail('no sign-in') });
  assert.deepEqual(await failing.forRequest('K1', 'Kyocera', target, '/', signal), { cookies: [] });
  const basic = new AutoLogin({ credentials: async () => ({ ...CREDS, authType: 'basic' }), now: () => 0, onSignIn: () => assert.fail('no sign-in') });
  assert.deepEqual(await basic.forRequest('K1', 'Kyocera', target, '/', signal), { authorization: 'Basic ' + Buffer.from('Admin:kyo').toString('base64'), cookies: [] });
});

test('Epson: the password page\'s form, posted to its action under the page\'s path, as the reference does', async () => {
  const logins = new AutoLogin({ credentials: async () => ({ ...CREDS, username: 'epson' }), now: () => 0, onSignIn: () => {} });
  const auth = await logins.forRequest('E1', 'EPSON', target, '/PRESENTATION/HTML/TOP/PRTINFO.HTML', new AbortController().signal);
  assert.deepEqual(auth.cookies, [['EPSON_COOKIE_SESSION', 'e1', null]]);
  assert.deepEqual(epsonPosts, ['INPUTT_USERNAME=epson&INPUTT_PASSWORD=kyo&SEL_SESSIONTYPE=ADMIN&access=https']);
});
