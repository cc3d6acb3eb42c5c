// Methods: a path that exists with other methods answers 405 with Allow (not 404), and HEAD is GET
// without the body. tinyhttp matches HEAD to a route of any method, so before this HEAD /discover
// ran the POST handler and started a scan; HEAD must never run another method's handler.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { routeTable } from '../../../src/api/app.js';
import { expectTextError, startAgent, type Agent } from '../../kit/agent.js';
import { device, ndjson } from '../../kit/seed.js';

let agent: Agent;
before(async () => {
  agent = await startAgent({ seed: ndjson([device('HEAD-1')]) });
});
after(() => agent?.stop());

test('every path registered for some methods answers 405 naming them to another method', async () => {
  const byPath = new Map<string, Set<string>>();
  for (const r of routeTable()) if (r.method) byPath.set(r.path, new Set([...(byPath.get(r.path) ?? []), r.method]));
  assert.ok(byPath.size > 10);
  for (const [path, methods] of byPath) {
    const r = await agent.request(path, { method: 'PATCH', headers: { Accept: 'application/json' } });
    const allowed = [...methods].join(', ');
    expectTextError(r, 405, `${allowed} only`);
    assert.equal(r.headers.allow, allowed, path);
  }
  expectTextError(await agent.request('/devices/save', { method: 'GET' }), 405, 'POST only');
  expectTextError(await agent.request('/Devices/Save/', { method: 'GET' }), 405, 'POST only');
  expectTextError(await agent.request('/no/such/path', { method: 'PATCH' }), 404, 'not found');
});

test('HEAD is GET without the body, and never runs a POST handler', async () => {
  const version = await agent.request('/api/version', { method: 'HEAD' });
  assert.equal(version.status, 200);
  assert.equal(version.body, '');
  assert.ok(Number(version.headers['content-length']) > 0, 'the length GET would send');
  assert.equal((await agent.request('/settings', { method: 'HEAD' })).status, 200);
  // A stream's head, at once: a HEAD never holds a stream open (nor one of the client's 4 slots).
  for (let i = 0; i < 6; i++) {
    const events = await agent.request('/events', { method: 'HEAD', timeoutMs: 5000 });
    assert.equal(events.status, 200);
    assert.equal(events.headers['content-type'], 'text/event-stream; charset=utf-8');
  }

  for (const path of ['/devices/save/all', '/devices/save', '/devices/delete']) {
    const r = await agent.request(path, { method: 'HEAD' });
    assert.equal(r.status, 405, path);
    assert.equal(r.headers.allow, 'POST', path);
  }
  const head = await agent.request('/discover', { method: 'HEAD' }); // GET /discover is the scan status
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.doesNotMatch(agent.stdout(), /discovery started/, 'HEAD /discover started no scan');
  const saved = JSON.parse((await agent.get('/devices/list')).body) as unknown[];
  assert.deepEqual(saved, [], 'HEAD /devices/save/all saved nothing');
});
