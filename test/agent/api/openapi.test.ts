// docs/openapi.yaml: the document is valid OpenAPI 3.1, it names exactly the routes the
// agent registers, the agent serves it publicly, the response check that every other test goes
// through catches what the document does not describe, and a client generated from it
// (openapi-typescript + openapi-fetch) compiles and reads a real agent.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routeTable } from '../../../src/api/app.js';
import { httpsRequest, repoRoot, startAgent, type Agent } from '../../kit/agent.js';
import { OPENAPI_FILE, eventProblem, openapiDocument, responseProblem } from '../../kit/openapi.js';
import { HOUR, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';

const SERIAL = 'OA-CLIENT-1';
let agent: Agent;

before(async () => {
  const now = nowSeconds();
  agent = await startAgent({
    authMode: 'local',
    allowLocalAdmin: true,
    seed: ndjson([
      device(SERIAL, { ip: '127.0.1.77', is_saved: true, model: 'ECOSYS P2040dw', manufacturer: 'Kyocera' }),
      ...[3, 2, 1].map((h) => metrics(SERIAL, 'raw', now - h * HOUR, { page_count: 1000 - h, toner_levels: { black: 50 } })),
    ]),
  });
});
after(async () => {
  await agent?.stop();
});

test('the document is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)', async () => {
  const validator = new Validator();
  const r = await validator.validate(OPENAPI_FILE);
  assert.equal(validator.version, '3.1');
  assert.ok(r.valid, JSON.stringify(r.errors, null, 2));
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  assert.equal(openapiDocument().info.version, pkg.version, 'info.version is the package version');
});

test('the document names exactly the routes the agent registers', () => {
  const doc = openapiDocument();
  // tinyhttp's `:name` parameters are OpenAPI's `{name}`.
  const registered = routeTable().map((r) => ({ method: r.method?.toLowerCase(), path: r.path.replace(/:(\w+)/g, '{$1}') }));
  for (const r of registered) {
    const item = doc.paths[r.path];
    assert.ok(item, `${r.path} is registered but not in docs/openapi.yaml`);
    if (r.method) assert.ok(item[r.method], `${r.method.toUpperCase()} ${r.path} is registered but not in docs/openapi.yaml`);
  }
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item).filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k))) {
      assert.ok(
        registered.some((r) => r.path === path && (r.method === undefined || r.method === method)),
        `${method.toUpperCase()} ${path} is in docs/openapi.yaml but the agent does not register it`,
      );
    }
  }
});

test('docs/api.md is generated from the current document (node scripts/docs/gen-api.mjs)', () => {
  const md = readFileSync(join(repoRoot, 'docs/api.md'), 'utf8');
  const doc = openapiDocument();
  assert.ok(md.includes(doc.info.description.trim()), 'the introduction is info.description');
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, { summary?: string; responses?: Record<string, unknown> }>)) {
      if (!op.responses || !Object.keys(op.responses).some((s) => s.startsWith('2'))) continue;
      assert.ok(md.includes(`### \`${method.toUpperCase()} ${path}\``), `docs/api.md has ${method.toUpperCase()} ${path}: regenerate it`);
      assert.ok(md.includes(`**${op.summary}.**`), `docs/api.md has the summary of ${method.toUpperCase()} ${path}: regenerate it`);
    }
  }
  for (const name of Object.keys(doc.components.schemas)) assert.ok(md.includes(`### ${name}\n`), `docs/api.md has schema ${name}`);
});

test('GET /api/openapi.json serves the document, without credentials', async () => {
  // A fresh agent in password mode: no session, no local admin; the document is still public.
  const locked = await startAgent({ authMode: 'password', allowLocalAdmin: false });
  try {
    const r = await locked.request('/api/openapi.json', { headers: { Accept: 'application/json' } });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.deepEqual(JSON.parse(r.body), openapiDocument());
    const settings = await locked.request('/settings', { headers: { Accept: 'application/json' } });
    assert.equal(settings.status, 401, 'the rest stays closed');
  } finally {
    await locked.stop();
  }
});

test('the response check fails responses the document does not describe', async () => {
  const version = await httpsRequest(agent.httpsPort, '/api/version');
  assert.equal(responseProblem('GET', '/api/version', version), null);
  const body = JSON.parse(version.body) as Record<string, unknown>;
  delete body.version;
  assert.match(responseProblem('GET', '/api/version', { ...version, body: JSON.stringify(body) }) ?? '', /version/);
  assert.match(responseProblem('GET', '/api/version', { ...version, status: 418 }) ?? '', /status not declared/);
  assert.match(responseProblem('GET', '/api/version', { ...version, headers: { 'content-type': 'text/html' } }) ?? '', /media type not declared/);
  assert.match(responseProblem('GET', '/no/such/path', { ...version }) ?? '', /not in docs\/openapi.yaml/);
  assert.equal(responseProblem('GET', '/no/such/path', { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found\n' }), null);
  assert.match(eventProblem('no_such_event', {}) ?? '', /not in \/events/);
});

test('a client generated from the document compiles and reads /devices/list and history from a real agent', () => {
  const work = join(repoRoot, 'dist', `openapi-client-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    execFileSync(process.execPath, [join(repoRoot, 'node_modules/openapi-typescript/bin/cli.js'), OPENAPI_FILE, '-o', join(work, 'api.d.ts')], { stdio: 'pipe' });
    writeFileSync(
      join(work, 'client.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
const client = createClient<paths>({ baseUrl: process.argv[2] });
const list = await client.GET('/devices/list');
if (!list.data) throw new Error('list: ' + list.response.status);
const serials: string[] = list.data.map((entry) => entry.serial);
const history = await client.GET('/api/devices/metrics/history', { params: { query: { serial: serials[0], period: 'day' } } });
if (!history.data) throw new Error('history: ' + history.response.status);
const counts: (number | null | undefined)[] = history.data.map((row) => row.page_count);
console.log(JSON.stringify({ serials, counts }));
`,
    );
    writeFileSync(
      join(work, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: ['node'], outDir: '.' }, files: ['client.ts'] }),
    );
    writeFileSync(join(work, 'package.json'), '{"type":"module"}\n');
    const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', work], { encoding: 'utf8' });
    assert.equal(tsc.status, 0, `the generated client compiles:\n${tsc.stdout}${tsc.stderr}`);
    const run = spawnSync(process.execPath, [join(work, 'client.js'), `https://localhost:${agent.httpsPort}`], {
      encoding: 'utf8',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: agent.certPath },
      timeout: 30_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { serials: [SERIAL], counts: [997, 998, 999] });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
