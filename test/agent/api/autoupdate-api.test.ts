// The contract's auto-update endpoints over real HTTPS, on a machine without RAUC (this one): the
// status says updates are not supported here and why, check and force answer 501 naming it, and a
// force without its reason is a 400 before anything else. The A/B install itself runs in the VM
// (scripts/boot-test.sh); the service's logic in test/unit/update/service.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectJson, expectTextError, startAgent, type Agent } from '../../kit/agent.js';

let agent: Agent;
before(async () => {
  agent = await startAgent();
});
after(() => agent?.stop());

const NO_RAUC = 'updates need RAUC (/etc/rauc/system.conf is missing: this is not a PrintBox image with A/B slots)';
const json = { 'Content-Type': 'application/json', Accept: 'application/json' };

test('GET /api/autoupdate/status: the running version, and why updates are not supported here', async () => {
  const s = expectJson(await agent.request('/api/autoupdate/status', { headers: { Accept: 'application/json' } }), 200) as Record<string, unknown>;
  assert.equal(s.supported, false);
  assert.equal(s.reason, NO_RAUC);
  assert.equal(s.state, 'idle');
  assert.equal(s.current_slot, null);
  assert.equal(typeof s.current_version, 'string');
});

test('POST check and force answer 501 naming the reason; a force without a reason is a 400', async () => {
  expectTextError(await agent.request('/api/autoupdate/check', { method: 'POST', headers: json }), 501, NO_RAUC);
  expectTextError(await agent.request('/api/autoupdate/force', { method: 'POST', headers: json, body: '{"reason":"test"}' }), 501, NO_RAUC);
  expectTextError(await agent.request('/api/autoupdate/force', { method: 'POST', headers: json, body: '{}' }), 400, 'missing field reason');
  expectTextError(await agent.request('/api/autoupdate/force', { method: 'POST', headers: json, body: '{"reason":""}' }), 400, 'field reason must be a non-empty string');
});

test('update.url is a setting: checked like the server URL, kept, shown', async () => {
  const post = (body: unknown) => agent.request('/settings', { method: 'POST', headers: json, body: JSON.stringify(body) });
  expectTextError(await post({ update: { url: 'ftp://updates.example/m.json' } }), 400, 'update.url must be an http:// or https:// URL');
  assert.equal((await post({ update: { url: 'https://updates.example/amd64/manifest.json' } })).status, 200);
  const s = expectJson(await agent.request('/settings', { headers: { Accept: 'application/json' } }), 200) as { update: { url: string } };
  assert.equal(s.update.url, 'https://updates.example/amd64/manifest.json');
  const st = expectJson(await agent.request('/api/autoupdate/status', { headers: { Accept: 'application/json' } }), 200) as Record<string, unknown>;
  assert.equal(st.source, 'https://updates.example/amd64/manifest.json');
});
