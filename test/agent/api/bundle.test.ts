// The one bundled file the box runs (dist/src/printbox-agent.js, scripts/bundle.mjs): the same
// commands as dist/src/cli.js, so that a bundling mistake (a package that cannot be bundled, a file
// read beside a module, a command left out) fails here and not on the box. Provisioning, then the
// agent serving HTTPS on 127.0.0.1 from that database, both run from the bundle only.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bundlePath, expectJson, repoRoot, runCli, startAgent, writeConfig, type Agent, type TestConfig } from '../../kit/agent.js';
import { until } from '../../kit/until.js';

const TOML = `[admin]
user = "tech"
password = "bundled secret"

[polling]
interval_minutes = 25
`;

describe('the bundled agent (the box runs this file)', () => {
  let cfg: TestConfig;
  let boot: string;
  let agent: Agent | undefined;
  const bundle = (args: string[]) => runCli(args, { configPath: cfg.configPath, entry: bundlePath });

  before(async () => {
    cfg = await writeConfig({ authMode: 'password', allowLocalAdmin: false });
    boot = join(cfg.dir, 'boot');
    mkdirSync(boot);
    writeFileSync(join(boot, 'printbox.toml'), TOML);
  });
  after(() => agent?.stop());

  test('imports nothing of the compiled tree: only Node and the packages left outside on purpose', () => {
    const meta = JSON.parse(readFileSync(join(repoRoot, 'dist/printbox-agent.meta.json'), 'utf8')) as {
      outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[]; inputs: Record<string, unknown> }>;
    };
    const out = Object.entries(meta.outputs).find(([name]) => name.endsWith('dist/src/printbox-agent.js'));
    assert.ok(out, 'the metafile describes the bundle');
    const [, { imports, inputs }] = out;
    const outside = [...new Set(imports.filter((i) => !builtinModules.includes(i.path.replace(/^node:/, ''))).map((i) => i.path))];
    // better-sqlite3: native. bufferutil and utf-8-validate: ws's optional native helpers, tried in a
    // try/catch (absent: ws uses its JavaScript). usb and net-snmp come through createRequire.
    assert.deepEqual(outside.sort(), ['better-sqlite3', 'bufferutil', 'utf-8-validate'], 'only native addons stay outside');
    for (const cmd of ['serve', 'provision', 'redirect', 'version', 'install-allowed']) {
      assert.ok(Object.keys(inputs).includes(`dist/src/commands/${cmd}.js`), `command ${cmd} is in the bundle`);
    }
  });

  test('provision applies printbox.toml', async () => {
    const r = await bundle(['provision', '--boot', boot, '--etc', join(cfg.dir, 'etc'), '--run', join(cfg.dir, 'run')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /printbox\.toml applied \(account tech; password line removed\)/);
    assert.doesNotMatch(readFileSync(join(boot, 'printbox.toml'), 'utf8'), /bundled secret/);
  });

  test('version reports the package and the build (files read beside the modules)', async () => {
    const r = await bundle(['version']);
    assert.equal(r.code, 0, r.stderr);
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const build = JSON.parse(readFileSync(join(repoRoot, 'dist/build-info.json'), 'utf8')) as { git_commit: string };
    assert.match(r.stdout, new RegExp(pkg.version.replaceAll('.', '\\.')));
    assert.match(r.stdout, new RegExp(build.git_commit));
  });

  test('load-only (the image build warming the compile cache) evaluates a command without running it', async () => {
    const r = await bundle(['load-only', 'serve']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '', 'nothing served, nothing logged');
    const bad = await bundle(['load-only', 'nonsense']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /load-only needs a command name/);
  });

  test('serve: HTTPS answers /api/version, the OpenAPI document, the sign-in and the UI page and modules', async () => {
    agent = await startAgent({ config: cfg, entry: bundlePath });
    const build = JSON.parse(readFileSync(join(repoRoot, 'dist/build-info.json'), 'utf8')) as { git_commit: string; build_time: string };
    const v = expectJson(await agent.get('/api/version')) as { git_commit: string; build_time: string };
    assert.equal(v.git_commit, build.git_commit, 'build-info.json read from dist/');
    assert.equal(v.build_time, build.build_time);
    const doc = expectJson(await agent.get('/api/openapi.json')) as { openapi: string; paths: object };
    assert.match(doc.openapi, /^3\./);
    assert.ok(Object.keys(doc.paths).length > 10, 'the whole document');

    const loginPage = await agent.request('/login', { headers: { Accept: 'text/html' } });
    assert.equal(loginPage.status, 200);
    assert.match(loginPage.body, /<script src="login\.js"><\/script>/);
    const login = await agent.request('/api/v1/auth/login', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'tech', password: 'bundled secret' }),
    });
    assert.equal(login.status, 200, login.body);
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const page = await agent.request('/', { headers: { Cookie: cookie, Accept: 'text/html' } });
    assert.equal(page.status, 200);
    const modules = [...page.body.matchAll(/<link rel="modulepreload" href="ui\/([^"]+)">/g)].map((m) => m[1]);
    assert.ok(modules.includes('main.js') && modules.includes('uplot.js'), `modules: ${modules.join(', ')}`);
    const main = await agent.request('/ui/main.js', { headers: { Cookie: cookie } });
    assert.equal(main.status, 200);
    assert.equal(main.body, readFileSync(join(repoRoot, 'dist/src/ui/assets/ui.js'), 'utf8'), "the UI's bundled module, as the build made it");

    const settings = expectJson(await agent.request('/settings', { headers: { Cookie: cookie, Accept: 'application/json' } })) as {
      collection: { interval_minutes: number };
    };
    assert.equal(settings.collection.interval_minutes, 25, 'the provisioned setting');
    await until('the start-up phases line', () => agent!.stdout().includes('"msg":"start-up phases"'));
  });
});
