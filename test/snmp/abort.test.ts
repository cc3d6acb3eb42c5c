// Aborting SNMP reads (bounded shutdown, issue 21): closing a session fails its requests at once,
// not at their timeout, and an aborted read or scan sends nothing more. The "printers" are UDP
// sockets on loopback (127.0.21.0/24) that count what they receive and never answer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { openSession, SnmpError, type SnmpCredential } from '../../src/snmp/client.js';
import { readHost, scan } from '../../src/snmp/scan.js';

const LOOPBACK = ['127.0.0.0/8'];
const TIMEOUT_MS = 60_000; // no test may come near it: everything here ends by abort or close
const CREDENTIALS: SnmpCredential[] = [
  { version: 'v2c', community: 'public' },
  { version: 'v1', community: 'private' },
  { version: 'v3', user: 'nobody', authProtocol: 'SHA', authKey: 'authpassword', privProtocol: 'AES', privKey: 'privpassword' },
];
const HOSTS = Array.from({ length: 20 }, (_, i) => `127.0.21.${231 + i}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Silent UDP listeners on HOSTS, all on one port, counting datagrams per address. */
let sockets: dgram.Socket[] = [];
let port = 0;
const received = new Map<string, number>();
const total = () => [...received.values()].reduce((a, b) => a + b, 0);

before(async () => {
  for (let attempt = 0; attempt < 5 && sockets.length < HOSTS.length; attempt++) {
    for (const s of sockets) s.close();
    sockets = [];
    try {
      for (const host of HOSTS) {
        const s = dgram.createSocket('udp4');
        s.on('message', () => received.set(host, (received.get(host) ?? 0) + 1));
        await new Promise<void>((res, rej) => {
          s.once('error', rej);
          s.bind(port, host, () => res());
        });
        if (port === 0) port = s.address().port;
        sockets.push(s);
      }
    } catch {
      port = 0; // that port was taken on another address: try another
    }
  }
  assert.equal(sockets.length, HOSTS.length);
});

after(() => {
  for (const s of sockets) s.close();
});

describe('abort', () => {
  it('SnmpSession.close() fails a request in flight at once, for v1, v2c and v3', async () => {
    for (const credential of CREDENTIALS) {
      const session = openSession(credential, { host: HOSTS[0], port, timeoutMs: TIMEOUT_MS, allowedRanges: LOOPBACK });
      const t0 = Date.now();
      const pending = session.get(['1.3.6.1.2.1.1.1.0']);
      const walk = session.walk('1.3.6.1.2.1.43');
      await sleep(100);
      session.close();
      for (const p of [pending, walk]) {
        await assert.rejects(p, (e: unknown) => e instanceof SnmpError && e.kind === 'closed');
      }
      const ms = Date.now() - t0;
      assert.ok(ms < TIMEOUT_MS, `${credential.version}: failed after ${ms} ms, not at the timeout`);
      await assert.rejects(session.get(['1.3.6.1.2.1.1.1.0']), (e: unknown) => e instanceof SnmpError && e.kind === 'closed');
    }
  });

  it('readHost: abort closes every credential\'s session at once and sends nothing more', async () => {
    received.clear();
    const ac = new AbortController();
    const t0 = Date.now();
    const read = readHost(HOSTS[1], { credentials: CREDENTIALS, port, timeoutMs: TIMEOUT_MS, allowedRanges: LOOPBACK, signal: ac.signal });
    await sleep(200);
    const sent = total();
    assert.equal(sent, CREDENTIALS.length, 'one identity probe per credential (v3: its engine discovery)');
    ac.abort();
    assert.equal(await read, null);
    assert.ok(Date.now() - t0 < TIMEOUT_MS);
    await sleep(300);
    assert.equal(total(), sent, 'nothing sent after the abort');
    // An already aborted signal sends nothing at all.
    assert.equal(await readHost(HOSTS[1], { credentials: CREDENTIALS, port, timeoutMs: TIMEOUT_MS, allowedRanges: LOOPBACK, signal: ac.signal }), null);
    await sleep(100);
    assert.equal(total(), sent);
  });

  it('scan: abort ends it at once with aborted: true; no host is probed after it', async () => {
    received.clear();
    const ac = new AbortController();
    const t0 = Date.now();
    const running = scan({
      targets: HOSTS,
      credentials: CREDENTIALS.slice(0, 1),
      port,
      timeoutMs: TIMEOUT_MS,
      concurrency: 2,
      allowedRanges: LOOPBACK,
      signal: ac.signal,
    });
    await sleep(200);
    assert.deepEqual([...received.keys()].sort(), HOSTS.slice(0, 2), 'two hosts in flight');
    ac.abort();
    const result = await running;
    assert.ok(Date.now() - t0 < TIMEOUT_MS);
    assert.equal(result.aborted, true);
    assert.deepEqual(result.hosts, []);
    assert.equal(result.requests, 2);
    await sleep(300);
    assert.equal(total(), 2, 'no other address probed after the abort');
  });
});
