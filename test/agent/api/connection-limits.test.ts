// Connection hygiene against a hostile site network: a real agent in its
// own network namespace, run with the unit's Node flags, environment and LimitNOFILE
// (scripts/bench/process.ts), flooded from the laptop namespace. A smaller flood than the soak's
// (scripts/soak/conn-flood.ts: 25,000 idle + 8,000 half-handshakes, figures in docs/reliability.md)
// that still crosses every cap: the per-address cap on both listeners, the cap on all
// connections, the TLS handshake timeout; and a renegotiation attempt.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createLan, lanUnavailable, startAgentInBox, type BoxAgent, type Lan } from '../../kit/lan.js';
import { probe, renegotiate, startFlood, widenPortRange, type ProbeResult } from '../../kit/flood.js';
import { rssMiB, unitEnvironment, unitFileLimit, unitMemoryMax, unitNodeFlags } from '../../../scripts/bench/process.js';
import { addressKey, CONNECTION_LIMITS } from '../../../src/web/connection-gate.js';
import { HANDSHAKE_TIMEOUT_MS, HTTP_LIMITS } from '../../../src/web/listeners.js';

const unavailable = lanUnavailable();
if (unavailable) console.log(`# connection-limits: skipped: ${unavailable}`);

const { maxConnections, maxPerAddress } = CONNECTION_LIMITS;
// Every probe of another host is answered (within the probe's own timeout). How fast is a figure
// (docs/reliability.md, scripts/soak/conn-flood.ts), not a test threshold: on a loaded 2-core CI
// machine the flood and the agent share the cores.
const answered = (r: ProbeResult[]) => r.length > 0 && r.every((p) => p.status === 200);

describe('connection limits from the site network, under the unit\'s flags', { skip: unavailable ?? false }, () => {
  let lan: Lan;
  let agent: BoxAgent;
  let host: string;
  const rss = () => rssMiB(agent.proc.pid!);

  before(async () => {
    lan = createLan();
    widenPortRange(lan.laptopNs);
    host = lan.boxAddress;
    agent = await startAgentInBox(lan, { nodeFlags: unitNodeFlags(), env: unitEnvironment(), fdLimit: unitFileLimit() });
  });
  after(async () => {
    await agent?.stop();
    lan?.destroy();
  });

  test('the unit sets the heap, the open-file limit and the memory limit together', () => {
    assert.ok(unitNodeFlags().some((f) => /^--max-old-space-size=\d+$/.test(f)), unitNodeFlags().join(' '));
    const nofile = unitFileLimit();
    assert.ok(nofile && nofile >= maxConnections * 2, `LimitNOFILE ${nofile}: the connections plus as many again for SNMP, the database, the logs`);
    assert.ok(unitMemoryMax(), 'MemoryMax set');
    const limit = spawnSync('ip', ['netns', 'exec', lan.boxNs, 'cat', `/proc/${agent.proc.pid}/limits`], { encoding: 'utf8' }).stdout;
    assert.match(limit, new RegExp(`Max open files\\s+${nofile}\\s+${nofile}`), 'the agent here runs under the unit\'s LimitNOFILE');
  });

  test('one address: held to the per-address cap, the rest reset at once; another host answered; all closed at the handshake timeout', async () => {
    const before = rss();
    const idle = maxPerAddress + 300;
    const partial = 200;
    const flood = await startFlood(lan.laptopNs, { host, port: agent.config.httpsPort, from: lan.laptop, idle, partial });
    try {
      const held = await flood.until((t) => t.done && t.open <= maxPerAddress, 60_000, `every connection attempted, at most ${maxPerAddress} open`);
      assert.equal(held.attempted, idle + partial);
      assert.equal(held.open, maxPerAddress, `the box holds exactly the cap from one address: ${JSON.stringify(held)}`);
      const others = await probe(lan.laptopNs, { host, port: agent.config.httpsPort, from: lan.proxyLaptop, count: 5 });
      assert.ok(answered(others), `another host during the flood: ${JSON.stringify(others)}`);
      const during = rss();
      // Every connection the box held was closed by it at the handshake timeout: seconds, not 2 minutes.
      const closed = await flood.until((t) => t.open === 0, HANDSHAKE_TIMEOUT_MS + 30_000, 'every held connection closed by the box');
      assert.ok(closed.longLivedMin! >= HANDSHAKE_TIMEOUT_MS - 500, `closed after ${closed.longLivedMin} ms, before the timeout`);
      assert.ok(closed.longLivedMax! <= HANDSHAKE_TIMEOUT_MS + 5000, `held ${closed.longLivedMax} ms, longer than the handshake timeout`);
      assert.ok(agent.alive());
      console.log(`# one address: ${idle + partial} attempted, ${held.open} held, RSS ${before.toFixed(1)} -> ${during.toFixed(1)} MiB, another host ${others.map((p) => p.ms.toFixed(0)).join('/')} ms`);
    } finally {
      await flood.stop();
    }
  });

  test('the HTTP listener: the same per-address cap, and a connection that says nothing is closed at the headers timeout', async () => {
    const flood = await startFlood(lan.laptopNs, { host, port: agent.config.httpPort, from: lan.laptop, idle: maxPerAddress + 100 });
    try {
      const held = await flood.until((t) => t.done && t.open <= maxPerAddress, 60_000, `at most ${maxPerAddress} open`);
      assert.equal(held.open, maxPerAddress, JSON.stringify(held));
      const closed = await flood.until((t) => t.open === 0, HTTP_LIMITS.headersTimeout + 30_000, 'every held connection closed by the box');
      assert.ok(closed.longLivedMin! >= HTTP_LIMITS.headersTimeout - 1500 && closed.longLivedMax! <= HTTP_LIMITS.headersTimeout + 5000, JSON.stringify(closed));
    } finally {
      await flood.stop();
    }
  });

  test('many addresses: held to the cap on all connections (memory stays bounded); another host still answered', async () => {
    // Enough addresses, each under its own cap, to cross the cap on all connections.
    const count = Math.ceil(maxConnections / maxPerAddress) + 2;
    const addresses = Array.from({ length: count }, (_, i) => `198.18.7.${20 + i}`);
    for (const a of addresses) {
      const r = spawnSync('ip', ['-n', lan.laptopNs, 'addr', 'add', `${a}/24`, 'dev', `pbxl${lan.tag}`], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    }
    const per = maxPerAddress - 8; // every address stays under its own cap
    const flood = await startFlood(lan.laptopNs, { host, port: agent.config.httpsPort, from: addresses, idle: (count * per) / 2, partial: (count * per) / 2 });
    try {
      const held = await flood.until((t) => t.done && t.open <= maxConnections, 60_000, `at most ${maxConnections} open`);
      assert.equal(held.open, maxConnections, JSON.stringify(held));
      const atCap = rss();
      assert.ok(agent.alive());
      assert.ok(atCap * 1048576 < unitMemoryMax()!, `RSS ${atCap} MiB at the cap, over the unit's MemoryMax`);
      // The cap is full: a host holding nothing gets in, an address holding most makes room.
      const others = await probe(lan.laptopNs, { host, port: agent.config.httpsPort, from: lan.proxyLaptop, count: 3 });
      assert.ok(answered(others), `another host at the cap: ${JSON.stringify(others)}`);
      // The flood's child reports its tally now and then: wait for the report that saw the resets.
      const after = await flood.until((t) => t.open < maxConnections, 30_000, 'the flood to see connections closed for the newcomer');
      assert.ok(after.open >= maxConnections - 3, `at most three of the flood's connections made room: ${JSON.stringify(after)}`);
      await flood.until((t) => t.open === 0, HANDSHAKE_TIMEOUT_MS + 30_000, 'every held connection closed by the box');
      console.log(`# ${count} addresses: ${held.attempted} attempted, ${held.open} held, RSS at the cap ${atCap.toFixed(1)} MiB`);
    } finally {
      await flood.stop();
    }
  });

  test('a client-initiated renegotiation is refused; the box keeps answering', async () => {
    const r = await renegotiate(lan.laptopNs, { host, port: agent.config.httpsPort, from: lan.laptop });
    assert.equal(r.protocol, 'TLSv1.2');
    assert.ok([r.callbackError, r.socketError].includes('ERR_SSL_NO_RENEGOTIATION'), JSON.stringify(r));
    assert.equal(r.answered, false, 'no request carried over a renegotiated session');
    assert.ok(r.closed);
    assert.ok(answered(await probe(lan.laptopNs, { host, port: agent.config.httpsPort, from: lan.laptop, count: 1 })));
  });

  test('the refused connections are reported in one log line, not one per connection', async () => {
    await agent.stop({ keepDir: true });
    const lines = agent.stdout().split('\n').filter((l) => l.includes('connections refused'));
    assert.ok(lines.length >= 1 && lines.length <= 3, `${lines.length} lines`);
    const rec = JSON.parse(lines.at(-1)!) as { refused: number; top: { address: string }[] };
    assert.ok(rec.refused > 0);
    assert.ok(lines.some((l) => l.includes(lan.laptop)), lines.join('\n'));
  });
});

test('whom a connection counts against: an IPv4 address (mapped or not), an IPv6 /64', () => {
  assert.equal(addressKey('198.18.7.2'), '198.18.7.2');
  assert.equal(addressKey('::ffff:198.18.7.2'), '198.18.7.2');
  assert.equal(addressKey('::1'), '::1');
  // Any address of one /64 is the same host: SLAAC gives a LAN host as many as it wants.
  for (const a of ['2001:db8:0:1::1', '2001:db8:0:1:ffff:ffff:ffff:ffff', '2001:0db8:0000:0001:1:2:3:4', 'fe80::1%eth0'.replace('fe80::', '2001:db8:0:1::')]) {
    assert.equal(addressKey(a), '2001:db8:0:1::/64', a);
  }
  assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.notEqual(addressKey('2001:db8:0:2::1'), addressKey('2001:db8:0:1::1'));
});
