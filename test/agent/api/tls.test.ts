// The HTTPS listener's TLS: 1.2 or later with AEAD suites only, and a key usage fit for an EC key.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import tls from 'node:tls';
import { after, before, test } from 'node:test';
import { startAgent, type Agent } from '../../kit/agent.js';

let agent: Agent;
before(async () => {
  agent = await startAgent();
});
after(() => agent?.stop());

/** Handshake result: the negotiated protocol and cipher, or the error. */
function handshake(opts: tls.ConnectionOptions): Promise<{ protocol?: string | null; cipher?: string; error?: string }> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port: agent.httpsPort, rejectUnauthorized: false, ...opts }, () => {
      resolve({ protocol: s.getProtocol(), cipher: s.getCipher().name });
      s.end();
    });
    s.on('error', (e) => resolve({ error: e.message }));
  });
}

test('TLS 1.3 and 1.2 with AEAD suites are spoken', async () => {
  assert.equal((await handshake({})).protocol, 'TLSv1.3');
  const gcm = await handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' });
  assert.deepEqual(gcm, { protocol: 'TLSv1.2', cipher: 'ECDHE-ECDSA-AES128-GCM-SHA256' });
  const chacha = await handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-CHACHA20-POLY1305' });
  assert.equal(chacha.cipher, 'ECDHE-ECDSA-CHACHA20-POLY1305');
});

test('CBC suites and TLS 1.1 are refused', async () => {
  for (const cipher of ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA384', 'ECDHE-ECDSA-AES128-SHA256']) {
    const r = await handshake({ maxVersion: 'TLSv1.2', ciphers: cipher });
    assert.ok(r.error, `${cipher} must fail: ${JSON.stringify(r)}`);
  }
  const old = await handshake({ minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' });
  assert.ok(old.error, JSON.stringify(old));
});

test('the generated certificate claims only digitalSignature for its EC key', () => {
  const text = execFileSync('openssl', ['x509', '-in', agent.certPath, '-noout', '-ext', 'keyUsage'], { encoding: 'utf8' });
  assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature\s*$/);
});
