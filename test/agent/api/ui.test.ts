// The local web UI: served to an authenticated client under a strict CSP, never to others.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAgent, type Agent } from '../../kit/agent.js';

const agents: Agent[] = [];
after(async () => {
  for (const a of agents) await a.stop();
});

test('the page and its modules are served with a CSP that forbids inline script', async () => {
  const agent = await startAgent();
  agents.push(agent);
  const page = await agent.request('/', { headers: { Accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  // Relative to the page, so that it also works under a prefix that serves the box (docs/ui.md).
  assert.match(page.body, /<script type="module" src="ui\/main.js"><\/script>/);
  assert.doesNotMatch(page.body, /(src|href|action)="\//, 'no root-absolute URL');
  assert.doesNotMatch(page.body, /<script>/, 'no inline script');
  assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);
  // Every module the page preloads is served, as JavaScript (module scripts refuse anything else),
  // under the page's headers; the whole graph is preloaded: each import names a preloaded module.
  const preloaded = [...page.body.matchAll(/<link rel="modulepreload" href="ui\/([\w.-]+\.js)">/g)].map((m) => m[1]);
  // The build bundles the modules into main.js (scripts/build.mjs); uPlot is the other.
  assert.deepEqual(preloaded.sort(), ['main.js', 'uplot.js']);
  for (const name of preloaded) {
    // As a browser asks for a module script: CORS mode, same origin.
    const js = await agent.request(`/ui/${name}`, { headers: { Accept: '*/*', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Dest': 'script' } });
    assert.equal(js.status, 200, name);
    assert.match(String(js.headers['content-type']), /^text\/javascript/, name);
    assert.equal(js.headers['x-content-type-options'], 'nosniff', name);
    assert.equal(js.headers['cache-control'], 'no-cache', name);
    for (const [, imported] of js.body.matchAll(/\bimport\s*[\w\s{},*]*?\s*from\s*["']\.\/([\w.-]+\.js)["']/g)) {
      assert.ok(preloaded.includes(imported), `${name} imports ${imported}, which the page preloads`);
    }
    const again = await agent.request(`/ui/${name}`, { headers: { 'If-None-Match': String(js.headers.etag) } });
    assert.equal(again.status, 304, name);
  }
  // The bundle holds the modules: the API client's fetch and the Printers view's windowed list.
  const main = (await agent.request('/ui/main.js')).body;
  assert.match(main, /fetch\(path/);
  assert.match(main, /function printersView\b/);
  assert.match(main, /import uPlot from ?["']\.\/uplot\.js["']/, 'uPlot stays its own module');
  assert.doesNotMatch(main, /from ?["']\.\/(?!uplot\.js)/, 'nothing else is imported');
  assert.match((await agent.request('/ui/uplot.js')).body, /^\/\*! uPlot\nThe MIT License/, "uPlot's licence travels with it");
  // Only the modules: no other file, nothing outside (an encoded slash is refused before routing).
  for (const [bad, status] of [['/ui/nope.js', 404], ['/ui/api.js', 404], ['/ui/types.d.ts', 404], ['/ui/', 404], ['/ui/..%2Fpage.js', 400]] as const) {
    const r = await agent.request(bad, { headers: { Accept: '*/*' } });
    assert.equal(r.status, status, bad);
  }
});

test('without a credential the page redirects to login and the modules are refused', async () => {
  const agent = await startAgent({ allowLocalAdmin: false });
  agents.push(agent);
  const page = await agent.request('/', { headers: { Accept: 'text/html' } });
  assert.equal(page.status, 302);
  assert.equal(page.headers.location, 'login?return_to=%2F', 'relative: it also works under a prefix that serves the box');
  const js = await agent.request('/ui/main.js', { headers: { Accept: '*/*' } });
  assert.equal(js.status, 401);
});

test('the icon: public (the sign-in page names it), an SVG under the same headers as the page, named relatively by both pages', async () => {
  const agent = await startAgent({ allowLocalAdmin: false });
  agents.push(agent);
  const icon = await agent.request('/favicon.ico', { headers: { Accept: 'image/*' } });
  assert.equal(icon.status, 200);
  assert.match(String(icon.headers['content-type']), /^image\/svg\+xml/);
  assert.match(icon.body, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.doesNotMatch(icon.body, /<script|href=|on\w+=/i, 'no script and no outside reference');
  assert.equal(icon.headers['x-content-type-options'], 'nosniff');
  assert.match(String(icon.headers['content-security-policy']), /default-src 'self'.*frame-ancestors 'none'/);
  assert.equal(icon.headers['x-frame-options'], 'DENY');
  const again = await agent.request('/favicon.ico', { headers: { 'If-None-Match': String(icon.headers.etag) } });
  assert.equal(again.status, 304);
  const login = await agent.request('/login', { headers: { Accept: 'text/html' } });
  assert.match(login.body, /<link rel="icon" href="favicon.ico" type="image\/svg\+xml">/);
  const { PAGE_HTML } = await import('../../../src/ui/page.js');
  assert.match(PAGE_HTML, /<link rel="icon" href="favicon.ico" type="image\/svg\+xml">/);
});
