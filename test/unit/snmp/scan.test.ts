// The discovery scanner against real printers' recordings served by snmpsim over real UDP on
// loopback (127.77.0.0/16). Every packet goes to 127.0.0.0/8; allowed_ranges is set to loopback.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { spawnSync } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { openSession, SnmpError, type SessionOptions, type SnmpCredential } from '../../../src/snmp/client.js';
import { readHost, scan, type ScanProgress } from '../../../src/snmp/scan.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, writeMovedCounters, type SnmpSim } from '../../kit/snmpsim.js';

const LOOPBACK = ['127.0.0.0/8'];
// How long a test gives the simulator to answer, where an answer is expected: generous, so that a
// machine under load (CI beside the image builds, or two CPU hogs) still answers in time. A test of
// silence or of a slow printer uses it too, and so waits that long for what does not come.
const ANSWER_MS = 3000;
const PUBLIC: SnmpCredential = { version: 'v2c', community: 'public' };
const SERIAL = '1.3.6.1.2.1.43.5.1.1.17.1';
const LIFE_COUNT = '1.3.6.1.2.1.43.10.2.1.4.1.1';
const SUPPLY_LEVEL = '1.3.6.1.2.1.43.11.1.1.9';
const SYS_UPTIME = '1.3.6.1.2.1.1.3.0';

// Expected values written from the recordings (README table, checked with grep).
const PRINTMASTER: { file: string; serial: string; life: number }[] = [
  { file: 'printmaster/brother.snmprec', serial: 'U64641E7J134163', life: 42976 },
  { file: 'printmaster/epson_cw.snmprec', serial: 'X7F4008528', life: 7389 },
  { file: 'printmaster/epson_sc.snmprec', serial: 'X8G9000415', life: 145 },
  { file: 'printmaster/kyocera_cs4053.snmprec', serial: 'RH28Y00024', life: 76498 },
  { file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943', life: 7432 },
];
const BROTHER: { file: string; life: number; uptime: number }[] = [
  { file: 'brother/hl-l2340dw.snmprec', life: 1279, uptime: 413613515 },
];

// 127.77.1.1-20: printers (printmaster recordings cycled, one Brother), 127.77.1.21-40: silent.
const PRINTERS = Array.from({ length: 20 }, (_, i) => `127.77.1.${i + 1}`);
const SILENT = Array.from({ length: 20 }, (_, i) => `127.77.1.${i + 21}`);
const MOVING = '127.77.2.1';
const V3_HOST = '127.77.3.1';
const V3 = {
  address: V3_HOST,
  recording: fixturePath('printmaster/kyocera_p2040.snmprec'),
  user: 'printbox',
  authProto: 'SHA' as const,
  authKey: 'auth-secret-1',
  privProto: 'AES' as const,
  privKey: 'priv-secret-1',
  context: 'printer',
  extraUsers: [{ user: 'legacy', authProto: 'MD5' as const, authKey: 'md5-secret-1', privProto: 'DES' as const, privKey: 'des-secret-1' }],
};

function recordingFor(i: number): { file: string; serial?: string; life: number } {
  if (i === 19) return BROTHER[0];
  return PRINTMASTER[i % PRINTMASTER.length];
}

const skipReason = ensureSnmpsim();
if (skipReason) console.log(`# scan tests skipped: ${skipReason}`);

describe('discovery scan against snmpsim', { skip: skipReason ?? false }, () => {
  let sim: SnmpSim;
  let tmp: string;

  before(async () => {
    tmp = mkdtempSync(join(os.tmpdir(), 'printbox-scan-test-'));
    sim = await startSnmpSim({
      endpoints: [
        ...PRINTERS.map((address, i) => ({ address, recording: fixturePath(recordingFor(i).file) })),
        { address: MOVING, recording: fixturePath('printmaster/kyocera_p2040.snmprec'), switchable: true },
      ],
      v3: V3,
    });
  });

  after(async () => {
    await sim?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('finds exactly the printers among silent addresses, with their raw values', async () => {
    const progress: ScanProgress[] = [];
    const events: string[] = [];
    const result = await scan({
      targets: [...PRINTERS, ...SILENT],
      credentials: [PUBLIC],
      port: sim.port,
      // Long enough for 16 reads at once from one single-threaded simulator on a loaded machine;
      // the silent addresses still cost one timeout each (asserted below, by requests).
      timeoutMs: 3000,
      concurrency: 16,
      allowedRanges: LOOPBACK,
      onProgress: (p) => progress.push(p),
      onStart: (a) => events.push(`start ${a}`),
      onHost: (h) => events.push(`host ${h.address}`),
      onScanned: (a, answered) => events.push(`${answered ? 'answered' : 'silent'} ${a}`),
    });
    assert.deepEqual(
      result.hosts.map((h) => h.address),
      PRINTERS,
    );
    // Each address: started once, then (a printer) read, then scanned with its outcome.
    for (const a of [...PRINTERS, ...SILENT]) {
      const mine = events.filter((e) => e.endsWith(` ${a}`));
      assert.deepEqual(mine, PRINTERS.includes(a) ? [`start ${a}`, `host ${a}`, `answered ${a}`] : [`start ${a}`, `silent ${a}`], a);
    }
    assert.equal(result.total, 40);
    assert.equal(result.scanned, 40);
    assert.deepEqual(result.skipped, []);
    assert.equal(result.aborted, false);
    PRINTERS.forEach((address, i) => {
      const host = result.hosts[i];
      const exp = recordingFor(i);
      assert.equal(host.credentialIndex, 0);
      assert.equal(host.partial, false, `${address}: ${host.errors.join('; ')}`);
      assert.deepEqual(host.values.get(LIFE_COUNT), { type: 'counter', value: exp.life }, address);
      if (exp.serial) {
        assert.deepEqual(host.values.get(SERIAL), { type: 'str', value: exp.serial }, address);
        // Walked tables came back too (supplies levels).
        assert.ok([...host.values.keys()].some((k) => k.startsWith(SUPPLY_LEVEL + '.')), `${address}: supplies walked`);
      } else {
        assert.deepEqual(host.values.get(SYS_UPTIME), { type: 'ticks', value: BROTHER[0].uptime });
      }
    });
    // Progress: starts at 0, ends complete, never goes backwards.
    assert.deepEqual(progress[0], { scanned: 0, total: 40, found: 0 });
    assert.deepEqual(progress[progress.length - 1], { scanned: 40, total: 40, found: 20 });
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].scanned >= progress[i - 1].scanned);
    // Silent addresses cost one request each (the found printers' requests are counted per host).
    const printerRequests = result.hosts.reduce((n, h) => n + h.requests, 0);
    assert.equal(result.requests - printerRequests, 40 - result.hosts.length, 'one request per silent address');
  });

  it('reads a printer over SNMPv1 (GETNEXT walks, noSuchName for missing OIDs)', async () => {
    const host = await readHost(PRINTERS[4], {
      credentials: [{ version: 'v1', community: 'public' }],
      port: sim.port,
      timeoutMs: ANSWER_MS,
      allowedRanges: LOOPBACK,
    });
    assert.ok(host);
    assert.deepEqual(host.values.get(SERIAL), { type: 'str', value: 'VD21457943' });
    assert.ok([...host.values.keys()].some((k) => k.startsWith(SUPPLY_LEVEL + '.')));
    // A recording lacking most identity OIDs: each noSuchName drops one OID, the rest still come.
    const sparse = await readHost(PRINTERS[19], {
      credentials: [{ version: 'v1', community: 'public' }],
      port: sim.port,
      timeoutMs: ANSWER_MS,
      allowedRanges: LOOPBACK,
    });
    assert.ok(sparse);
    assert.deepEqual(sparse.values.get(SYS_UPTIME), { type: 'ticks', value: BROTHER[0].uptime });
    assert.deepEqual(sparse.values.get(LIFE_COUNT), { type: 'counter', value: BROTHER[0].life });
  });

  it('finds a v3 printer (SHA/AES) and uses the first credential that answers', async () => {
    const v3: SnmpCredential = {
      version: 'v3',
      user: V3.user,
      authProtocol: 'SHA',
      authKey: V3.authKey,
      privProtocol: 'AES',
      privKey: V3.privKey,
      context: V3.context,
    };
    // Count the sessions open at once: the v2c probe (which waits for its timeout) runs beside the
    // v3 probe, not before it.
    let open = 0;
    let mostOpen = 0;
    const result = await scan({
      targets: [V3_HOST],
      credentials: [PUBLIC, v3],
      port: sim.port,
      timeoutMs: ANSWER_MS,
      allowedRanges: LOOPBACK,
      openSession: (cred, o) => {
        const s = openSession(cred, o);
        mostOpen = Math.max(mostOpen, ++open);
        const close = s.close.bind(s);
        let closed = false;
        s.close = () => {
          if (!closed) open--;
          closed = true;
          close();
        };
        return s;
      },
    });
    assert.equal(result.hosts.length, 1);
    assert.equal(result.hosts[0].credentialIndex, 1);
    assert.deepEqual(result.hosts[0].values.get(SERIAL), { type: 'str', value: 'VD21457943' });
    assert.equal(mostOpen, 2, 'both credentials probed at once');

    const probeErrors: string[] = [];
    const wrongKey = await scan({
      targets: [V3_HOST],
      credentials: [{ ...v3, authKey: 'not-the-key' }],
      port: sim.port,
      timeoutMs: ANSWER_MS,
      allowedRanges: LOOPBACK,
      onProbeError: (address, i, e) => probeErrors.push(`${address} ${i} ${e.kind}: ${e.message}`),
    });
    assert.equal(wrongKey.hosts.length, 0);
    // A wrong key is an authentication failure, reported (not mistaken for silence).
    assert.equal(probeErrors.length, 1);
    assert.match(probeErrors[0], /^127\.77\.3\.1 0 auth: /);
  });

  it('v3 with MD5/DES (DES needs OpenSSL legacy: run in a child with --openssl-legacy-provider)', async () => {
    const cred: SnmpCredential = {
      version: 'v3',
      user: 'legacy',
      authProtocol: 'MD5',
      authKey: 'md5-secret-1',
      privProtocol: 'DES',
      privKey: 'des-secret-1',
      context: V3.context,
    };
    let desInProcess = true;
    try {
      createCipheriv('des-cbc', Buffer.alloc(8), Buffer.alloc(8));
    } catch {
      desInProcess = false;
    }
    if (!desInProcess) {
      // Without the legacy provider the client reports DES as unsupported, clearly.
      const s = openSession(cred, { host: V3_HOST, port: sim.port, timeoutMs: ANSWER_MS, allowedRanges: LOOPBACK });
      try {
        await assert.rejects(s.get([SERIAL]), (e: unknown) => e instanceof SnmpError && e.kind === 'unsupported');
      } finally {
        s.close();
      }
    }
    const clientUrl = new URL('../../../src/snmp/client.js', import.meta.url).href;
    const script = `
      import { openSession } from ${JSON.stringify(clientUrl)};
      const s = openSession(${JSON.stringify(cred)}, { host: ${JSON.stringify(V3_HOST)}, port: ${sim.port}, timeoutMs: ${ANSWER_MS}, allowedRanges: ['127.0.0.0/8'] });
      try { const v = await s.get([${JSON.stringify(SERIAL)}]); console.log(JSON.stringify(v.get(${JSON.stringify(SERIAL)}))); }
      catch (e) { console.log('ERROR ' + e.message); }
      finally { s.close(); }`;
    const r = spawnSync(process.execPath, ['--openssl-legacy-provider', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.stdout.trim(), JSON.stringify({ type: 'str', value: 'VD21457943' }), r.stderr);
  });

  it('a printer that answers the probe and then goes slow never stalls the scan', async () => {
    // A relay in front of a simulated printer: passes the first reply, then delays every reply past
    // the client's timeout (late replies are dropped by the client).
    const timeoutMs = ANSWER_MS;
    const front = dgram.createSocket('udp4');
    const back = dgram.createSocket('udp4');
    let replies = 0;
    let client: dgram.RemoteInfo | null = null;
    const timers: NodeJS.Timeout[] = [];
    front.on('message', (msg, rinfo) => {
      client = rinfo;
      back.send(msg, sim.port, PRINTERS[2]);
    });
    back.on('message', (msg) => {
      const to = client;
      if (!to) return;
      replies++;
      const delay = replies <= 1 ? 0 : timeoutMs * 3;
      timers.push(setTimeout(() => front.send(msg, to.port, to.address, () => {}), delay));
    });
    await new Promise<void>((resolve) => front.bind(sim.port, '127.77.6.1', () => resolve()));
    await new Promise<void>((resolve) => back.bind(0, '127.0.0.1', () => resolve()));
    try {
      const result = await scan({
        targets: ['127.77.6.1', PRINTERS[3], PRINTERS[4]],
        credentials: [PUBLIC],
        port: sim.port,
        timeoutMs,
        concurrency: 2,
        allowedRanges: LOOPBACK,
      });
      assert.deepEqual(
        result.hosts.map((h) => h.address),
        [PRINTERS[3], PRINTERS[4], '127.77.6.1'],
      );
      const slow = result.hosts[2];
      assert.equal(slow.partial, true);
      assert.match(slow.errors.join('\n'), /timed out/);
      assert.deepEqual(slow.values.get(SERIAL), { type: 'str', value: recordingFor(2).serial });
      assert.equal(result.hosts[0].partial, false);
      assert.equal(result.hosts[1].partial, false);
      // Probe + one request with one retry, then the read stops: a few timeouts, not one per OID.
      const full = await readHost(PRINTERS[2], { credentials: [PUBLIC], port: sim.port, timeoutMs, allowedRanges: LOOPBACK });
      assert.ok(full && full.requests > 4, `a whole read takes ${full?.requests} requests`);
      assert.ok(slow.requests <= 3, `the slow read stopped after ${slow.requests} requests`);
    } finally {
      timers.forEach(clearTimeout);
      front.close();
      back.close();
    }
  });

  it('a wrong community is not found; the right one later in the list is', async () => {
    const wrong = await scan({
      targets: [PRINTERS[0]],
      credentials: [{ version: 'v2c', community: 'not-public' }],
      port: sim.port,
      timeoutMs: ANSWER_MS,
      allowedRanges: LOOPBACK,
    });
    assert.equal(wrong.hosts.length, 0);
    assert.equal(wrong.scanned, 1);

    const second = await scan({
      targets: [PRINTERS[0]],
      credentials: [{ version: 'v2c', community: 'not-public' }, PUBLIC],
      port: sim.port,
      timeoutMs: ANSWER_MS,
      allowedRanges: LOOPBACK,
    });
    assert.equal(second.hosts.length, 1);
    assert.equal(second.hosts[0].credentialIndex, 1);
  });

  it('counters that moved between two polls are read anew', async () => {
    const opts = { credentials: [PUBLIC], port: sim.port, timeoutMs: ANSWER_MS, allowedRanges: LOOPBACK };
    const first = await readHost(MOVING, opts);
    assert.deepEqual(first?.values.get(LIFE_COUNT), { type: 'counter', value: 7432 });
    const moved = join(tmp, 'kyocera_p2040-moved.snmprec');
    writeMovedCounters(fixturePath('printmaster/kyocera_p2040.snmprec'), moved, 250);
    sim.switchRecording(MOVING, moved);
    const second = await readHost(MOVING, opts);
    assert.deepEqual(second?.values.get(LIFE_COUNT), { type: 'counter', value: 7682 });
    assert.deepEqual(second?.values.get(SERIAL), { type: 'str', value: 'VD21457943' });
  });

  it('a host answering garbage: no crash, not found, the scan completes', async () => {
    const junk = dgram.createSocket('udp4');
    let received = 0;
    const replies = [
      Buffer.from('this is not SNMP at all'),
      Buffer.from([0x30, 0x82, 0xff, 0xff, 0x02, 0x01]), // truncated BER sequence
      Buffer.from([0x30, 0x0c, 0x02, 0x01, 0x01, 0x04, 0x06, 0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0xa2]), // v2c header, broken PDU
      Buffer.alloc(0),
    ];
    junk.on('message', (_msg, rinfo) => {
      received++;
      for (const r of replies) junk.send(r, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => junk.bind(sim.port, '127.77.4.1', () => resolve()));
    try {
      const result = await scan({
        targets: ['127.77.4.1', PRINTERS[1]],
        credentials: [PUBLIC, { version: 'v1', community: 'public' }],
        port: sim.port,
        timeoutMs: ANSWER_MS,
        allowedRanges: LOOPBACK,
      });
      assert.ok(received >= 2, 'the junk host was probed');
      assert.deepEqual(
        result.hosts.map((h) => h.address),
        [PRINTERS[1]],
      );
      assert.equal(result.scanned, 2);
    } finally {
      junk.close();
    }
  });

  it('allowed_ranges: no packet is sent outside, not even by the client', async () => {
    const listener = dgram.createSocket('udp4');
    let received = 0;
    listener.on('message', () => received++);
    await new Promise<void>((resolve) => listener.bind(sim.port, '127.77.5.1', () => resolve()));
    try {
      const result = await scan({
        targets: ['127.77.5.1', PRINTERS[0], 'not-an-ip'],
        credentials: [PUBLIC],
        port: sim.port,
        timeoutMs: ANSWER_MS,
        allowedRanges: ['127.77.1.0/24'],
      });
      assert.deepEqual(result.skipped, ['127.77.5.1', 'not-an-ip']);
      assert.deepEqual(
        result.hosts.map((h) => h.address),
        [PRINTERS[0]],
      );
      assert.throws(
        () => openSession(PUBLIC, { host: '127.77.5.1', port: sim.port, timeoutMs: 100, allowedRanges: ['127.77.1.0/24'] }),
        (e: unknown) => e instanceof SnmpError && e.kind === 'not-allowed',
      );
      await assert.rejects(readHost('127.77.5.1', { credentials: [PUBLIC], port: sim.port, timeoutMs: 100, allowedRanges: ['127.77.1.0/24'] }), /allowed_ranges/);
      // The same listener does see a packet when allowed: the check above is meaningful.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(received, 0);
      await readHost('127.77.5.1', { credentials: [PUBLIC], port: sim.port, timeoutMs: 200, allowedRanges: LOOPBACK });
      assert.equal(received, 1);
    } finally {
      listener.close();
    }
  });
});

describe('scanner cost and bounds (silent loopback addresses)', () => {
  // Loopback addresses with nothing listening: the ICMP port-unreachable goes to an unconnected
  // socket and is not reported, so each probe waits for its timeout, like a dead LAN host.
  const silent = (n: number, third: number) => Array.from({ length: n }, (_, i) => `127.77.${third}.${i + 1}`);

  function countingOpen() {
    const active = new Map<string, number>();
    let maxHosts = 0;
    let opened = 0;
    const open = (cred: SnmpCredential, o: SessionOptions) => {
      const s = openSession(cred, o);
      opened++;
      active.set(o.host, (active.get(o.host) ?? 0) + 1);
      maxHosts = Math.max(maxHosts, active.size);
      const close = s.close.bind(s);
      let closed = false;
      s.close = () => {
        if (!closed) {
          closed = true;
          const n = (active.get(o.host) ?? 1) - 1;
          if (n <= 0) active.delete(o.host);
          else active.set(o.host, n);
        }
        close();
      };
      return s;
    };
    return { open, stats: () => ({ maxHosts, opened, openNow: active.size }) };
  }

  it('respects the concurrency bound, and a dead host costs one timeout', async () => {
    const c = countingOpen();
    const timeoutMs = 300;
    const result = await scan({
      targets: silent(24, 10),
      credentials: [PUBLIC, { version: 'v1', community: 'private' }, { version: 'v3', user: 'u', authProtocol: 'SHA', authKey: 'k1234567', privProtocol: 'AES', privKey: 'p1234567' }],
      port: 16161,
      timeoutMs,
      concurrency: 4,
      allowedRanges: LOOPBACK,
      openSession: c.open,
    });
    assert.equal(result.hosts.length, 0);
    assert.equal(result.scanned, 24);
    assert.equal(c.stats().maxHosts, 4);
    assert.equal(c.stats().opened, 24 * 3);
    // One request per credential per host, no retries, no further OIDs.
    assert.equal(result.requests, 24 * 3);
  });

  it('many silent addresses at higher concurrency: C at once, one request each', async () => {
    const c = countingOpen();
    const timeoutMs = 500;
    const result = await scan({
      targets: silent(100, 11),
      credentials: [PUBLIC],
      port: 16161,
      timeoutMs,
      concurrency: 25,
      allowedRanges: LOOPBACK,
      openSession: c.open,
    });
    assert.equal(result.scanned, 100);
    assert.equal(c.stats().maxHosts, 25);
    assert.equal(result.requests, 100);
  });

  it('abort stops the scan early and closes sessions', { timeout: 120_000 }, async () => {
    // Silent hosts with a 10-minute timeout: the scan ends only because it was aborted.
    const c = countingOpen();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const result = await scan({
      targets: silent(50, 12),
      credentials: [PUBLIC],
      port: 16161,
      timeoutMs: 600_000,
      concurrency: 5,
      allowedRanges: LOOPBACK,
      signal: ac.signal,
      openSession: c.open,
    });
    assert.equal(result.aborted, true);
    assert.ok(result.scanned < 50);
    assert.equal(c.stats().openNow, 0, 'every session closed');
  });

  it('no credentials: nothing sent, empty result', async () => {
    const result = await scan({ targets: silent(3, 13), credentials: [], timeoutMs: 100, allowedRanges: LOOPBACK });
    assert.equal(result.hosts.length, 0);
    assert.equal(result.requests, 0);
  });
});
