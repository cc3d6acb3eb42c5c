// GET /api/version (contract 2.6 VersionInfo, 4.1, 5.8; docs/decisions/0016-version-report.md).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { expectJson, expectTextError, repoRoot, runCli, startAgent, type Agent } from '../../kit/agent.js';

let agent: Agent;
before(async () => {
  agent = await startAgent({ allowLocalAdmin: false }); // public: no credential, no loopback allowance
});
after(async () => {
  await agent?.stop();
});

const goArch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386' };

test('version: every field, with package version and Go-style os/arch', async () => {
  const v = expectJson(await agent.request('/api/version', { headers: { Accept: 'application/json' } })) as Record<string, unknown>;
  assert.deepEqual(Object.keys(v).sort(), ['arch', 'build_time', 'build_type', 'git_commit', 'go_version', 'os', 'version']);
  for (const [k, x] of Object.entries(v)) assert.equal(typeof x, 'string', `${k} is a string`);
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  assert.equal(v.version, pkg.version);
  assert.match(String(v.version), /^\d+\.\d+\.\d+/);
  assert.notEqual(v.build_time, '');
  assert.notEqual(v.git_commit, '');
  assert.notEqual(v.build_type, '');
  assert.equal(v.go_version, process.version, 'the runtime the agent runs on');
  assert.match(String(v.go_version), /^v\d+\.\d+\.\d+$/);
  assert.equal(v.os, process.platform === 'linux' ? 'linux' : process.platform);
  assert.equal(v.arch, goArch[process.arch] ?? process.arch);
  assert.ok(['amd64', 'arm64', 'arm', '386'].includes(String(v.arch)));
});

test('version: public even with Accept text/html and bogus credentials', async () => {
  const a = expectJson(await agent.request('/api/version'));
  const b = expectJson(await agent.request('/api/version', { headers: { Accept: 'text/html', Authorization: 'Bearer x', Cookie: 'pm_agent_session=x' } }));
  assert.deepEqual(b, a);
});

test('version: 405 GET only for other methods, before anything else', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    expectTextError(await agent.request('/api/version?x=1', { method, body: method === 'DELETE' ? undefined : '{}' }), 405, 'GET only');
  }
});

test('version: the `version` subcommand agrees with the API', async () => {
  const r = await runCli(['version'], { configPath: agent.configPath });
  assert.equal(r.code, 0, r.stderr);
  const v = expectJson(await agent.request('/api/version')) as Record<string, string>;
  assert.ok(r.stdout.includes(v.version!), `version output ${JSON.stringify(r.stdout)} mentions ${v.version}`);
});
