// Configuration keys: unknown keys and wrong types fail start-up with a
// non-zero exit and a message on stderr naming the key. A minimal valid config starts an agent with
// an empty database.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { expectJson, runCli, startAgent, writeConfig } from '../../kit/agent.js';
import { parseConfig } from '../../../src/config/config.js';
import { device, ndjson } from '../../kit/seed.js';

/** Writes a valid config, applies `edit` to its text, runs `serve`, expects a quick non-zero exit naming `key`. */
async function expectRejected(edit: (toml: string) => string, key: string) {
  const cfg = await writeConfig();
  writeFileSync(cfg.configPath, edit(readFileSync(cfg.configPath, 'utf8')));
  const r = await runCli(['serve'], { configPath: cfg.configPath, timeoutMs: 15_000 });
  assert.notEqual(r.code, 0, `serve must fail; stderr: ${r.stderr}`);
  assert.notEqual(r.code, -1, `serve must exit by itself (it was killed after 15 s); stderr: ${r.stderr}`);
  assert.ok(r.stderr.includes(key), `stderr must name ${key}: ${JSON.stringify(r.stderr)}`);
}

const cases: [string, (t: string) => string, string][] = [
  ['unknown top-level key', (t) => 'bogus_key = 1\n' + t, 'bogus_key'],
  ['unknown key in [web]', (t) => t.replace('[web]\n', '[web]\nlisten_adress = "127.0.0.1"\n'), 'listen_adress'],
  ['unknown key in [web.tls]', (t) => t.replace('[web.tls]\n', '[web.tls]\nca_file = ""\n'), 'ca_file'],
  ['unknown key in [web.auth]', (t) => t.replace('[web.auth]\n', '[web.auth]\nallow_remote_admin = true\n'), 'allow_remote_admin'],
  ['unknown key in [server]', (t) => t.replace('[server]\n', '[server]\ntoken = "x"\n'), 'token'],
  ['unknown table', (t) => t + '[snmpx]\ncommunity = "public"\n', 'snmpx'],
  ['https_port as a string', (t) => t.replace(/https_port = \d+/, 'https_port = "8443"'), 'https_port'],
  ['http_port as a float', (t) => t.replace(/http_port = \d+/, 'http_port = 80.5'), 'http_port'],
  ['https_port out of range', (t) => t.replace(/https_port = \d+/, 'https_port = 70000'), 'https_port'],
  ['redirect_http_to_https as a string', (t) => t.replace(/redirect_http_to_https = \w+/, 'redirect_http_to_https = "yes"'), 'redirect_http_to_https'],
  ['allow_local_admin as a number', (t) => t.replace(/allow_local_admin = \w+/, 'allow_local_admin = 1'), 'allow_local_admin'],
  ['mode not one of local|server|disabled', (t) => t.replace(/mode = "local"/, 'mode = "open"'), 'mode'],
  ['data_dir as a number', (t) => t.replace(/data_dir = .*/, 'data_dir = 5'), 'data_dir'],
  ['listen_address as an array', (t) => t.replace(/listen_address = .*/, 'listen_address = ["127.0.0.1"]'), 'listen_address'],
  ['cert_file as a boolean', (t) => t.replace(/cert_file = .*/, 'cert_file = false'), 'cert_file'],
  ['url as a table', (t) => t.replace(/url = .*/, 'url = { host = "x" }'), 'url'],
  ['misspelled table', (t) => t.replace('[web]\n', '[webx]\n'), 'webx'],
  ['upload_batch_size of 0', (t) => t.replace('[server]\n', '[server]\nupload_batch_size = 0\n'), 'upload_batch_size'],
  ['upload_interval_ms as a string', (t) => t.replace('[server]\n', '[server]\nupload_interval_ms = "1s"\n'), 'upload_interval_ms'],
  ['ca_file as a number', (t) => t.replace('[server]\n', '[server]\nca_file = 1\n'), 'ca_file'],
  ['http_port equal to https_port', (t) => t.replace(/http_port = \d+/, `http_port = ${/https_port = (\d+)/.exec(t)![1]}`), 'web.http_port and web.https_port'],
  // listen_address is an IP literal: a name was resolved at start-up and failed with a DNS error naming no key.
  ...['not-an-address', 'localhost', 'printbox.local', '[::1]', '127.0.0.1:8443', '127.1', ''].map(
    (a): [string, (t: string) => string, string] => [
      `listen_address = ${JSON.stringify(a)}`,
      (t) => t.replace(/listen_address = .*/, `listen_address = ${JSON.stringify(a)}`),
      `config key web.listen_address: ${a === '' ? 'empty' : JSON.stringify(a)}`,
    ],
  ),
];
for (const [name, edit, key] of cases) {
  test(`config: ${name} -> non-zero exit naming ${key}`, async () => {
    await expectRejected(edit, key);
  });
}

test('config: listen_address accepts IPv4 and IPv6 literals, the wildcards included', () => {
  for (const a of ['0.0.0.0', '::', '127.0.0.1', '::1', '10.1.2.3', 'fe80::1%eth0', '::ffff:127.0.0.1']) {
    assert.equal(parseConfig(`[web]\nlisten_address = ${JSON.stringify(a)}\n`, '/tmp').web.listen_address, a);
  }
  assert.throws(() => parseConfig('[web]\nlisten_address = "localhost"\n', '/tmp'), /host names are not accepted/);
});

test('config: TOML syntax error -> non-zero exit', async () => {
  const cfg = await writeConfig();
  writeFileSync(cfg.configPath, readFileSync(cfg.configPath, 'utf8') + '\n[web\n');
  const r = await runCli(['serve'], { configPath: cfg.configPath, timeoutMs: 15_000 });
  assert.ok(r.code !== 0 && r.code !== -1, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.ok(r.stderr.trim().length > 0);
});

test('config: a valid config starts; an empty database lists [] and []', async () => {
  const a = await startAgent();
  try {
    assert.deepEqual(expectJson(await a.get('/devices/list')), []);
    assert.equal((await a.get('/devices/list')).body, '[]\n');
    assert.deepEqual(expectJson(await a.get('/devices/discovered')), []);
    assert.deepEqual(expectJson(await a.get('/devices/discovered?include_known=true&minutes=5')), []);
    assert.equal((await a.get('/api/devices/metrics/history?serial=X')).body, 'null\n');
  } finally {
    const code = await a.stop();
    assert.ok(code === 0 || code === null, `SIGTERM should end the agent cleanly, exit ${code}`);
  }
});

test('config: PRINTBOX_CONFIG names the file when --config is absent', async () => {
  const a = await startAgent({ seed: ndjson([device('ENV-1', { ip: '10.7.0.1' })]) });
  try {
    const viaFlag = await runCli(['export'], { configPath: a.configPath });
    const viaEnv = await runCli(['export'], { env: { PRINTBOX_CONFIG: a.configPath } });
    assert.equal(viaFlag.code, 0, viaFlag.stderr);
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.ok(viaFlag.stdout.includes('"ENV-1"'), viaFlag.stdout);
    assert.equal(viaEnv.stdout, viaFlag.stdout);
  } finally {
    await a.stop();
  }
});
