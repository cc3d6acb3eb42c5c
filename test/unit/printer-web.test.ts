// printer-web/: which web server a printer's page comes from, and how the page is kept under
// /proxy/{serial}/ (the cases the real printers in test/api/printer-proxy.test.ts do not show).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { printerWebTarget } from '../../src/printer-web/target.js';
import { rewriteBody, rewriteLocation, rewriteSetCookie } from '../../src/printer-web/rewrite.js';
import type { Device } from '../../src/model/device.js';

const rules = { allowedRanges: [] as string[], ownPorts: [8443, 8080] };
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
  assert.equal(t({ ip: '127.0.0.1', web_ui_url: 'https://127.0.0.1:8443/' }), '403 device "P1" points at this box\'s own port 8443: not proxied');
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
  assert.equal(rewriteSetCookie('s=1; path=/web; domain=10.0.0.5; secure; HttpOnly', '/proxy/P1', false, 'pm_agent_session'), 's=1; Path=/proxy/P1/web; HttpOnly');
  assert.equal(rewriteSetCookie('s=1', '/proxy/P1', true, 'pm_agent_session'), 's=1; Path=/proxy/P1/; Secure');
  assert.equal(rewriteSetCookie('s=1; Path=/proxy/P1/x', '/proxy/P1', false, 'pm_agent_session'), 's=1; Path=/proxy/P1/x');
  assert.equal(rewriteSetCookie('pm_agent_session=x; Path=/', '/proxy/P1', true, 'pm_agent_session'), undefined);
});
