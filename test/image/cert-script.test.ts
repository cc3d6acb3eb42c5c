// The box's certificate script (rootfs-overlay/usr/libexec/printbox/cert), run as the units run it,
// on a temporary directory: the first certificate is made at once without an address (the agent
// waits for it), and `cert address` renews it once the box has one, leaving the mark
// its unit turns into a fresh console banner. An operator's certificate is never replaced.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { repoRoot } from '../kit/agent.js';

const SCRIPT = join(repoRoot, 'rootfs-overlay/usr/libexec/printbox/cert');
const haveOpenssl = spawnSync('openssl', ['version']).status === 0;

describe('the certificate script', { skip: haveOpenssl ? false : 'openssl is not installed' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-cert-'));
  const tls = join(dir, 'tls');
  const run = join(dir, 'run');
  const addresses = join(dir, 'addresses');
  writeFileSync(addresses, '');
  const cert = (mode: string, waitS = 120) => {
    const started = Date.now();
    const r = spawnSync('sh', [SCRIPT, mode], {
      encoding: 'utf8',
      env: { ...process.env, PRINTBOX_TLS_DIR: tls, PRINTBOX_CERT_RUN: run, PRINTBOX_CERT_ADDRESSES: addresses, PRINTBOX_CERT_WAIT_S: String(waitS) },
    });
    return { ...r, ms: Date.now() - started };
  };
  const sans = () => execFileSync('openssl', ['x509', '-in', join(tls, 'agent.crt'), '-noout', '-ext', 'subjectAltName'], { encoding: 'utf8' });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('ensure without an address: a certificate at once, naming the host and loopback only', () => {
    const r = cert('ensure');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /new certificate \(none yet\)/);
    // The old script waited up to 10 s for DHCP here; openssl alone takes well under that.
    assert.ok(r.ms < 8000, `took ${r.ms} ms`);
    assert.match(sans(), /DNS:localhost, IP Address:127\.0\.0\.1/);
    assert.doesNotMatch(sans(), /192\.0\.2\.7/);
    assert.ok(!existsSync(join(run, 'renewed')));
  });

  test('address, once the box has one: renewed to name it, and the banner mark left', () => {
    const before = readFileSync(join(tls, 'agent.crt'), 'utf8');
    writeFileSync(addresses, '192.0.2.7\n');
    const r = cert('address');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /new certificate \(new address 192\.0\.2\.7\)/);
    assert.match(sans(), /IP Address:192\.0\.2\.7/);
    assert.notEqual(readFileSync(join(tls, 'agent.crt'), 'utf8'), before);
    assert.ok(existsSync(join(run, 'renewed')), 'the unit restarts the banner');
  });

  test('address at a later boot with the same address: the certificate is kept, no mark', () => {
    const before = readFileSync(join(tls, 'agent.crt'), 'utf8');
    const r = cert('address');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /certificate is current/);
    assert.equal(readFileSync(join(tls, 'agent.crt'), 'utf8'), before);
    assert.ok(!existsSync(join(run, 'renewed')), 'the mark of an earlier run is gone');
  });

  test('address with no address ever coming: gives up after its bound, keeps the certificate', () => {
    writeFileSync(addresses, '');
    const before = readFileSync(join(tls, 'agent.crt'), 'utf8');
    const r = cert('address', 1);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(tls, 'agent.crt'), 'utf8'), before);
    assert.ok(!existsSync(join(run, 'renewed')));
  });

  test("an operator's certificate is left alone, whatever the address", () => {
    const other = join(dir, 'operator');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30',
      '-subj', '/CN=operator', '-keyout', `${other}.key`, '-out', `${other}.crt`], { stdio: 'ignore' });
    writeFileSync(join(tls, 'agent.crt'), readFileSync(`${other}.crt`));
    writeFileSync(join(tls, 'agent.key'), readFileSync(`${other}.key`));
    writeFileSync(addresses, '192.0.2.9\n');
    const r = cert('address');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /installed by the operator: left alone/);
    assert.equal(readFileSync(join(tls, 'agent.crt'), 'utf8'), readFileSync(`${other}.crt`, 'utf8'));
  });

  test('an unknown mode is refused', () => {
    const r = cert('sometime');
    assert.equal(r.status, 2);
    assert.match(r.stdout, /unknown mode sometime/);
  });
});
