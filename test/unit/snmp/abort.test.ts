// Aborting SNMP reads (bounded shutdown): closing a session fails its requests at once,
// not at their timeout, and an aborted read or scan sends nothing more. The "printers" are UDP
// sockets on loopback (127.0.21.0/24) that count what they receive and never answer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { openSession, SnmpError, type SessionOptions, type SnmpCredential, type SnmpSession } from '../../../src/snmp/client.js';
import { readHost, scan } from '../../../src/snmp/scan.js';
import { until } from '../../kit/until.js';

const LOOPBACK = ['127.0.0.0/8'];
// Ten minutes: nothing here can end by its timeout (each test's own { timeout } is far shorter), so a
// request that ends at all ended by abort or close. No elapsed time is measured.
const TIMEOUT_MS = 600_000;
const TEST_TIMEOUT = { timeout: 120_000 };
const CREDENTIALS: SnmpCredential[] = [
  { version: 'v2c', community: 'public' },
  { version: 'v1', community: 'private' },
  { version: 'v3', user: 'nobody', authProtocol: 'SHA', authKey: 'authpassword', privProtocol: 'AES', privKey: 'privpassword' },
];
const HOSTS = Array.from({ length: 20 }, (_, i) => `127.0.21.${231 + i}`);

/** Opens real sessions and counts those not closed yet (a closed session's socket sends nothing). */
function countingOpen() {
  const open = new Set<SnmpSession>();
  const openSessionCounted = (credential: SnmpCredential, options: SessionOptions): SnmpSession => {
    const s = openSession(credential, options);
    open.add(s);
    const close = s.close.bind(s);
    s.close = () => {
      open.delete(s);
      close();
    };
    return s;
  };
  return { openSession: openSessionCounted, openNow: () => open.size };
}

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
  it('SnmpSession.close() fails a request in flight at once, for v1, v2c and v3', TEST_TIMEOUT, async () => {
    for (const credential of CREDENTIALS) {
      const session = openSession(credential, { host: HOSTS[0], port, timeoutMs: TIMEOUT_MS, allowedRanges: LOOPBACK });
      const before = received.get(HOSTS[0]) ?? 0;
      const pending = session.get(['1.3.6.1.2.1.1.1.0']);
      const walk = session.walk('1.3.6.1.2.1.43');
      // Closed while a request is on the wire (the silent host has it), 10 minutes before its timeout.
      await until(`${credential.version}: a request at the silent host`, () => (received.get(HOSTS[0]) ?? 0) > before);
      session.close();
      for (const p of [pending, walk]) {
        await assert.rejects(p, (e: unknown) => e instanceof SnmpError && e.kind === 'closed', `${credential.version}: failed as closed, not by its timeout`);
      }
      await assert.rejects(session.get(['1.3.6.1.2.1.1.1.0']), (e: unknown) => e instanceof SnmpError && e.kind === 'closed');
    }
  });

  it('readHost: abort closes every credential\'s session at once and sends nothing more', TEST_TIMEOUT, async () => {
    received.clear();
    const c = countingOpen();
    const ac = new AbortController();
    const read = readHost(HOSTS[1], { credentials: CREDENTIALS, port, timeoutMs: TIMEOUT_MS, allowedRanges: LOOPBACK, signal: ac.signal, openSession: c.openSession });
    await until('one identity probe per credential', () => total() >= CREDENTIALS.length);
    const sent = total();
    assert.equal(sent, CREDENTIALS.length, 'one identity probe per credential (v3: its engine discovery)');
    assert.equal(c.openNow(), CREDENTIALS.length);
    ac.abort();
    assert.equal(await read, null, 'ended by the abort (its timeout is 10 minutes away)');
    // Every session closed: their sockets can send nothing more.
    assert.equal(c.openNow(), 0, 'every session closed');
    assert.equal(total(), sent, 'nothing sent after the abort');
    // An already aborted signal opens no session, so it sends nothing at all.
    const none = countingOpen();
    assert.equal(await readHost(HOSTS[1], { credentials: CREDENTIALS, port, timeoutMs: TIMEOUT_MS, allowedRanges: LOOPBACK, signal: ac.signal, openSession: none.openSession }), null);
    assert.equal(none.openNow(), 0);
    assert.equal(total(), sent);
  });

  it('scan: abort ends it at once with aborted: true; no host is probed after it', TEST_TIMEOUT, async () => {
    received.clear();
    const c = countingOpen();
    const ac = new AbortController();
    const running = scan({
      targets: HOSTS,
      credentials: CREDENTIALS.slice(0, 1),
      port,
      timeoutMs: TIMEOUT_MS,
      concurrency: 2,
      allowedRanges: LOOPBACK,
      signal: ac.signal,
      openSession: c.openSession,
    });
    await until('two hosts probed', () => received.size >= 2);
    assert.deepEqual([...received.keys()].sort(), HOSTS.slice(0, 2), 'two hosts in flight');
    assert.equal(c.openNow(), 2);
    ac.abort();
    const result = await running;
    assert.equal(result.aborted, true, 'ended by the abort (its timeout is 10 minutes away)');
    assert.deepEqual(result.hosts, []);
    assert.equal(result.requests, 2);
    assert.equal(c.openNow(), 0, 'every session closed: nothing more can be sent');
    assert.equal(total(), 2, 'no other address probed after the abort');
  });
});
