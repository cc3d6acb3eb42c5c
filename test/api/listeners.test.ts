// Listeners (issue 2 "What must work" 3; contract 1 and 7): HTTPS with a generated or configured
// certificate, TLS >= 1.2, key mode 0600, certificate replaced on disk picked up without restart,
// HTTP -> HTTPS redirect (same host and path, before auth and method guard), or HTTP serving the API.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { generate } from 'selfsigned';
import { certFingerprint, expectJson, expectTextError, describe as show, startAgent, type Agent } from '../helpers/agent.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newPair = () =>
  generate([{ name: 'commonName', value: 'printbox-test' }], { keySize: 2048, algorithm: 'sha256' });

let gen: Agent; // generated certificate, redirect on, no local admin
let conf: Agent; // configured certificate, HTTP serves the API
let noHttp: Agent; // http_port = 0
let certDir = '';

before(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'printbox-cert-'));
  const pair = await newPair();
  writeFileSync(join(certDir, 'c.crt'), pair.cert);
  writeFileSync(join(certDir, 'c.key'), pair.private, { mode: 0o600 });
  [gen, conf, noHttp] = await Promise.all([
    startAgent({ allowLocalAdmin: false }),
    startAgent({ certFile: join(certDir, 'c.crt'), keyFile: join(certDir, 'c.key'), redirectHttpToHttps: false }),
    startAgent({ httpPort: 0 }),
  ]);
});
after(async () => {
  await Promise.all([gen?.stop(), conf?.stop(), noHttp?.stop()]);
});

function handshake(port: number, opts: tls.ConnectionOptions): Promise<{ ok: boolean; protocol?: string | null; error?: string; fp?: string }> {
  return new Promise((res) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
      const r = { ok: true, protocol: s.getProtocol(), fp: s.getPeerCertificate().fingerprint256 };
      s.end();
      res(r);
    });
    s.setTimeout(5000, () => s.destroy(new Error('timeout')));
    s.on('error', (e) => res({ ok: false, error: e.message }));
  });
}

describe('HTTPS with a generated certificate', () => {
  test('certificate and key are generated under <data_dir>/tls, key mode 0600', () => {
    const crt = join(gen.dataDir, 'tls/agent.crt');
    const key = join(gen.dataDir, 'tls/agent.key');
    assert.ok(existsSync(crt), crt);
    assert.ok(existsSync(key), key);
    assert.equal(statSync(key).mode & 0o777, 0o600, `key mode ${(statSync(key).mode & 0o777).toString(8)}`);
  });
  test('the served certificate is the generated one and verifies as a trusted anchor', async () => {
    const fp = certFingerprint(readFileSync(join(gen.dataDir, 'tls/agent.crt')));
    const r = await gen.request('/api/version'); // trusts agent.crt as CA; throws if verification fails
    expectJson(r);
    assert.equal(r.peerFingerprint, fp);
  });
  test('TLS 1.2 and 1.3 are accepted', async () => {
    const v12 = await handshake(gen.httpsPort, { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' });
    assert.ok(v12.ok, v12.error);
    assert.equal(v12.protocol, 'TLSv1.2');
    const v13 = await handshake(gen.httpsPort, { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' });
    assert.ok(v13.ok, v13.error);
    assert.equal(v13.protocol, 'TLSv1.3');
  });
  test('a TLS 1.1 (and 1.0) client is refused', async (t) => {
    // Control: this client can really speak TLS 1.1 (against a local server that allows it).
    const pair = await newPair();
    const control = tls.createServer(
      { key: pair.private, cert: pair.cert, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' },
      (s) => s.end(),
    );
    await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()));
    const old = { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' } as const;
    const c = await handshake((control.address() as { port: number }).port, old);
    control.close();
    if (!c.ok) {
      t.skip(`this OpenSSL cannot speak TLS 1.1 at all (${c.error})`);
      return;
    }
    const r = await handshake(gen.httpsPort, old);
    assert.equal(r.ok, false, `agent accepted ${r.protocol}`);
    const r10 = await handshake(gen.httpsPort, { ...old, maxVersion: 'TLSv1' });
    assert.equal(r10.ok, false, `agent accepted ${r10.protocol}`);
    expectJson(await gen.request('/api/version'));
  });
});

describe('HTTP listener redirecting to HTTPS', () => {
  const P = '/api/devices/profile?serial=A%20B&x=1';
  test('same host and path on the HTTPS port, empty body', async () => {
    const r = await gen.request(P, { http: true });
    assert.equal(r.status, 302, show(r));
    assert.equal(r.headers.location, `https://127.0.0.1:${gen.httpsPort}${P}`);
    assert.equal(r.body, '');
  });
  test('the host comes from the request', async () => {
    const r = await gen.request('/devices/list', { http: true, headers: { Host: `printbox.local:${gen.httpPort}` } });
    assert.equal(r.status, 302, show(r));
    assert.equal(r.headers.location, `https://printbox.local:${gen.httpsPort}/devices/list`);
    const r2 = await gen.request('/devices/list', { http: true, headers: { Host: 'printbox.local' } });
    assert.equal(r2.headers.location, `https://printbox.local:${gen.httpsPort}/devices/list`);
  });
  test('before authentication and the method guard', async () => {
    // over HTTPS these are 401 (no local admin in this agent) ...
    expectTextError(await gen.request('/devices/list'), 401, 'unauthorized');
    // ... over HTTP the redirect answers first, whatever the method, path or Accept
    for (const [method, path, accept] of [
      ['GET', '/devices/list', 'application/json'],
      ['GET', '/devices/list', 'text/html'],
      ['POST', '/api/version', 'application/json'],
      ['DELETE', '/api/devices/profile', 'application/json'],
      ['GET', '/no/such/path', 'application/json'],
      ['GET', '/api/devices/metrics/history?since=x&until=y', 'application/json'],
    ] as const) {
      const r = await gen.request(path, { http: true, method, headers: { Accept: accept } });
      assert.equal(r.status, 302, `${method} ${path}: ${show(r)}`);
      assert.equal(r.headers.location, `https://127.0.0.1:${gen.httpsPort}${path}`);
    }
  });
});

describe('HTTP listener serving the API (redirect off)', () => {
  test('answers like HTTPS', async () => {
    expectJson(await conf.request('/api/version', { http: true }));
    expectJson(await conf.request('/devices/list', { http: true }));
    expectTextError(await conf.request('/api/devices/profile', { http: true }), 400, 'serial parameter required');
    expectTextError(await conf.request('/api/version', { http: true, method: 'POST' }), 405, 'GET only');
  });
});

describe('http_port = 0', () => {
  test('the agent serves HTTPS without an HTTP listener', async () => {
    expectJson(await noHttp.request('/api/version'));
  });
});

describe('configured certificate', () => {
  test('is served, and a replacement on disk is picked up without a restart', async () => {
    const first = certFingerprint(readFileSync(join(certDir, 'c.crt')));
    const r = await conf.request('/api/version');
    expectJson(r);
    assert.equal(r.peerFingerprint, first);
    const pid = conf.proc.pid;

    const pair = await newPair();
    const second = certFingerprint(pair.cert);
    assert.notEqual(second, first);
    // Replace the pair the way a renewal does: write aside, then rename over (key first).
    writeFileSync(join(certDir, 'c.key.new'), pair.private, { mode: 0o600 });
    writeFileSync(join(certDir, 'c.crt.new'), pair.cert);
    renameSync(join(certDir, 'c.key.new'), join(certDir, 'c.key'));
    renameSync(join(certDir, 'c.crt.new'), join(certDir, 'c.crt'));

    let served = '';
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const h = await handshake(conf.httpsPort, {});
      if (h.ok && h.fp === second) {
        served = h.fp;
        break;
      }
      await sleep(250);
    }
    assert.equal(served, second, 'new certificate served within 20 s');
    assert.equal(conf.proc.pid, pid);
    assert.ok(conf.alive(), 'no restart');
    expectJson(await conf.request('/api/version'));
  });
});

describe('generated certificate across restarts and renewals', () => {
  test('kept across a restart, then a renewed pair in <data_dir>/tls is picked up without restart', async () => {
    const crt = join(gen.dataDir, 'tls/agent.crt');
    const key = join(gen.dataDir, 'tls/agent.key');
    const first = certFingerprint(readFileSync(crt));
    await gen.restart();
    assert.equal((await gen.request('/api/version')).peerFingerprint, first, 'same certificate after restart');
    assert.equal(statSync(key).mode & 0o777, 0o600);

    const pid = gen.proc.pid;
    const pair = await newPair();
    const second = certFingerprint(pair.cert);
    writeFileSync(key + '.new', pair.private, { mode: 0o600 });
    writeFileSync(crt + '.new', pair.cert);
    renameSync(key + '.new', key);
    renameSync(crt + '.new', crt);
    let served = '';
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const h = await handshake(gen.httpsPort, {});
      if (h.ok && h.fp === second) {
        served = h.fp;
        break;
      }
      await sleep(250);
    }
    assert.equal(served, second, 'renewed certificate served within 20 s');
    assert.equal(gen.proc.pid, pid, 'no restart');
    assert.equal(certFingerprint(readFileSync(crt)), second, 'the agent did not overwrite the renewed pair');
  });
});
