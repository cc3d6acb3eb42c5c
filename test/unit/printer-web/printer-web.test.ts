// printer-web/: which web server a printer's page comes from, and how the page is kept under
// /proxy/{serial}/ (the cases the real printers in test/agent/api/printer-proxy.test.ts do not show).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { printerWebTarget } from '../../../src/printer-web/target.js';
import { rewriteBody, rewriteLocation } from '../../../src/printer-web/rewrite.js';
import { applySetCookies, JAR_COOKIE, JAR_LIMITS, jarSetCookie, printerCookieHeader, readJar } from '../../../src/printer-web/cookie-jar.js';
import { notAnotherHost } from '../../../src/net/own-targets.js';
import type { Device } from '../../../src/model/device.js';

const rules = { allowedRanges: [] as string[], ownAddresses: new Set(['127.0.0.1', '::1', '10.0.0.9']) };
const dev = (fields: Partial<Device>): Device => ({ serial: 'P1', ip: '10.0.0.5', is_saved: true, is_usb: false, ...fields }) as Device;

test('the target is the record\'s address; web_ui_url only picks scheme and port on that same address', () => {
  const t = (d: Partial<Device>) => {
    const r = printerWebTarget(dev(d), rules);
    return r.ok ? r.target.origin : `${r.status} ${r.message}`;
  };
  assert.equal(t({}), 'http://10.0.0.5');
  assert.equal(t({ web_ui_url: 'https://10.0.0.5/' }), 'https://10.0.0.5');
  assert.equal(t({ web_ui_url: 'https://10.0.0.5:8000/hp/device' }), 'https://10.0.0.5:8000');
  assert.equal(t({ web_ui_url: 'http://10.0.0.5:80/' }), 'http://10.0.0.5');
  assert.equal(t({ web_ui_url: 'https://evil.example:8443/' }), 'http://10.0.0.5', 'another host: neither its host nor its port');
  assert.equal(t({ web_ui_url: 'https://10.0.0.6/' }), 'http://10.0.0.5');
  assert.equal(t({ web_ui_url: 'ftp://10.0.0.5/' }), 'http://10.0.0.5');
  assert.equal(t({ web_ui_url: 'not a url' }), 'http://10.0.0.5');
  assert.equal(t({ is_saved: false }), '403 device "P1" is not saved: only a saved printer\'s web page is proxied');
  assert.equal(t({ is_usb: true }), '409 device "P1" is a USB printer: its web page is not proxied');
  assert.equal(t({ ip: '' }), '409 device "P1" has no IPv4 address to proxy to');
  assert.equal(t({ ip: 'printer.local' }), '409 device "P1" has no IPv4 address to proxy to');
  // This box itself, on any port, and addresses that are no other host.
  const self = (ip: string, why: string) => assert.equal(t({ ip, web_ui_url: `http://${ip}:9100/` }), `403 device "P1" is at ${ip}, ${why}: a printer's page is never fetched from this box itself`);
  self('0.0.0.0', 'an unspecified address (0.0.0.0/8), which reaches this box');
  self('0.1.2.3', 'an unspecified address (0.0.0.0/8), which reaches this box');
  self('127.0.0.1', 'a loopback address (127.0.0.0/8)');
  self('127.9.9.9', 'a loopback address (127.0.0.0/8)');
  self('169.254.1.1', 'a link-local address (169.254.0.0/16)');
  self('10.0.0.9', 'an address of this box itself');
  const ranged = printerWebTarget(dev({}), { ...rules, allowedRanges: ['192.168.0.0/16'] });
  assert.deepEqual(ranged, { ok: false, status: 403, message: 'device "P1" is at 10.0.0.5, outside discovery.allowed_ranges' });
});

test('bodies: root-absolute and own-origin links gain the prefix once; others are left alone', () => {
  const html = `<html><HEAD lang="en"><link href='/a.css'><script src="/s.js"></script></HEAD><body>` +
    `<a href="/proxy/P1/x">already</a><a href="http://10.0.0.5/abs">own</a><a href="http://10.0.0.50/other">other printer</a>` +
    `<a href="//cdn.example/x.js">protocol-relative</a><div style="background:url('/bg.png')"></div>` +
    `<script>if(x)location.href="/";</script></body></html>`;
  const out = rewriteBody(html, 'html', '/proxy/P1', 'http://10.0.0.5', '/sub/page.html?x=1');
  assert.match(out, /<HEAD lang="en"><base href="\/proxy\/P1\/sub\/">/);
  assert.match(out, /href='\/proxy\/P1\/a\.css'/);
  assert.match(out, /src="\/proxy\/P1\/s\.js"/);
  assert.match(out, /href="\/proxy\/P1\/x">already/, 'never prefixed twice');
  assert.match(out, /href="\/proxy\/P1\/abs">own/);
  assert.match(out, /href="http:\/\/10\.0\.0\.50\/other"/, 'another address that starts the same is another printer');
  // The reference prefixes this too; the browser then asks /proxy/P1//cdn... which the box refuses (400).
  assert.match(out, /href="\/proxy\/P1\/\/cdn\.example\/x\.js"/);
  assert.match(out, /url\('\/proxy\/P1\/bg\.png'\)/);
  assert.match(out, /location\.href="\/proxy\/P1\/"/);
  assert.equal(rewriteBody('<html><head><base href="/x/"></head></html>', 'html', '/proxy/P1', 'http://10.0.0.5', '/'), '<html><head><base href="/proxy/P1/x/"></head></html>', 'a page\'s own <base> is kept, prefixed');
  assert.equal(rewriteBody('a{b:url(/i.png)}', 'css', '/proxy/P1', 'https://10.0.0.5', '/c.css'), 'a{b:url(/proxy/P1/i.png)}');
  assert.equal(rewriteBody('x="https://10.0.0.5:443/y"', 'js', '/proxy/P1', 'https://10.0.0.5', '/a.js'), 'x="/proxy/P1/y"', 'the default port named');
});

test('Location and Set-Cookie', () => {
  assert.equal(rewriteLocation('/login?next=/', '/proxy/P1', 'http://10.0.0.5', '/a/b'), '/proxy/P1/login?next=/');
  assert.equal(rewriteLocation('c.html', '/proxy/P1', 'http://10.0.0.5', '/a/b'), '/proxy/P1/a/c.html');
  assert.equal(rewriteLocation('http://10.0.0.5:80/x', '/proxy/P1', 'http://10.0.0.5', '/'), '/proxy/P1/x');
  assert.equal(rewriteLocation('https://10.0.0.5/x', '/proxy/P1', 'http://10.0.0.5', '/'), '/proxy/P1/x', 'a printer sending its HTTP page to its HTTPS one: same printer');
  assert.equal(rewriteLocation('https://vendor.example/help', '/proxy/P1', 'http://10.0.0.5', '/'), 'https://vendor.example/help');
});

test('addresses that are no other host', () => {
  const own = new Set(['192.168.1.4']);
  for (const [a, why] of [
    ['::1', 'the loopback address (::1)'],
    ['[::1]', 'the loopback address (::1)'],
    ['::', 'the unspecified address (::), which reaches this box'],
    ['::ffff:127.0.0.1', 'a loopback address (127.0.0.0/8)'],
    ['[::ffff:7f00:1]', 'a loopback address (127.0.0.0/8)'],
    ['::ffff:c0a8:104', 'an address of this box itself'],
    ['fe80::1%eth0', 'a link-local address (fe80::/10)'],
    ['febf::1', 'a link-local address (fe80::/10)'],
    ['192.168.1.4', 'an address of this box itself'],
  ]) assert.equal(notAnotherHost(a, own), why, a);
  for (const a of ['192.168.1.5', '10.0.0.1', 'fec0::1', '2001:db8::1', '1.0.0.0']) assert.equal(notAnotherHost(a, own), undefined, a);
});

test('a printer\'s cookies live in one jar cookie of the box\'s making', () => {
  const now = 1_000_000;
  const set = (jar: ReturnType<typeof readJar>, headers: string[]) => applySetCookies(jar, headers, now);
  const u = set([], ['sid=abc; Path=/; Domain=10.0.0.5; HttpOnly; Secure', 'pm_agent_session=planted; Path=/', '__Host-x=1; Path=/', 'lang=en; Max-Age=60', 'bad name=1', 'v=a;b']);
  assert.deepEqual(u.jar, [['sid', 'abc', null], ['pm_agent_session', 'planted', null], ['__Host-x', '1', null], ['lang', 'en', now + 60_000], ['v', 'a', null]]);
  assert.equal(u.refused, 1, 'a name with a space');
  const header = jarSetCookie(u.jar, '/proxy/P1/', true);
  assert.match(header, new RegExp(`^${JAR_COOKIE}=[A-Za-z0-9_-]+; Path=/proxy/P1/; HttpOnly; SameSite=Lax; Secure$`));
  // The browser sends it back beside the box's own cookies: the printer gets its own only.
  const cookie = `pm_agent_session=SESSION; ${header.split(';')[0]}; other=1`;
  const back = readJar(cookie, now);
  assert.equal(printerCookieHeader(back), 'sid=abc; pm_agent_session=planted; __Host-x=1; lang=en; v=a');
  assert.deepEqual(readJar(cookie, now + 60_000).map((e) => e[0]), ['sid', 'pm_agent_session', '__Host-x', 'v'], 'lang lapsed');
  // Deletion, replacement, and the limits.
  assert.deepEqual(set(back, ['sid=; Max-Age=0', 'lang=de', 'v=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT']).jar, [['pm_agent_session', 'planted', null], ['__Host-x', '1', null], ['lang', 'de', null]]);
  const many = set([], Array.from({ length: 150 }, (_, i) => `c${i}=${'x'.repeat(10)}`));
  assert.equal(many.jar.length, JAR_LIMITS.entries);
  assert.equal(many.refused, 150 - JAR_LIMITS.entries);
  const big = set([], Array.from({ length: 5 }, (_, i) => `b${i}=${'y'.repeat(1200)}`));
  assert.ok(jarSetCookie(big.jar, '/proxy/P1/', true).length < 4096, 'one browser cookie, under 4 KiB');
  assert.equal(big.jar.length, 2);
  assert.equal(printerCookieHeader(readJar(`${JAR_COOKIE}=not-json`, now)), undefined, 'a forged jar is no jar');
  assert.match(jarSetCookie([], '/proxy/P1/', false), /^pbx_printer_jar=; Path=\/proxy\/P1\/; HttpOnly; SameSite=Lax; Max-Age=0; /);
});
