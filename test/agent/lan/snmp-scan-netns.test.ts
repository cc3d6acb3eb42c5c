// Subnet discovery on a real (isolated) LAN: two network namespaces joined by a veth pair.
// The simulator's namespace holds printers at 198.18.0.1-10/24 (RFC 2544 benchmarking range);
// the scanner runs inside its own namespace (198.18.0.254/24), on the default SNMP port 161.
// Absent hosts get no ARP reply, as on a LAN. Nothing here touches the root namespace's routes:
// 198.18.0.0/24 exists only inside the two namespaces this test creates and deletes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';

const tag = String(process.pid % 100000);
const SIM_NS = `pbx-sim-${tag}`;
const SCAN_NS = `pbx-scn-${tag}`;
const VETH_SIM = `pbxs${tag}`;
const VETH_SCAN = `pbxc${tag}`;
const PRINTERS = Array.from({ length: 10 }, (_, i) => `198.18.0.${i + 1}`);
const SILENT = Array.from({ length: 10 }, (_, i) => `198.18.0.${i + 101}`);
const RECORDINGS = [
  { file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' },
  { file: 'printmaster/epson_sc.snmprec', serial: 'X8G9000415' },
];

function ip(...args: string[]): { ok: boolean; err: string } {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  return { ok: r.status === 0, err: (r.stderr || '').trim() };
}

function netnsUnavailable(): string | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'needs root for ip netns';
  const sim = ensureSnmpsim();
  if (sim) return sim;
  const probe = `pbx-probe-${tag}`;
  const r = ip('netns', 'add', probe);
  if (!r.ok) return `ip netns unavailable: ${r.err}`;
  ip('netns', 'del', probe);
  return null;
}

const skipReason = netnsUnavailable();
if (skipReason) console.log(`# netns scan test skipped: ${skipReason}`);

function teardownNamespaces(): void {
  ip('netns', 'del', SIM_NS);
  ip('netns', 'del', SCAN_NS);
}

function setupNamespaces(): void {
  teardownNamespaces();
  const steps: string[][] = [
    ['netns', 'add', SIM_NS],
    ['netns', 'add', SCAN_NS],
    ['link', 'add', VETH_SIM, 'type', 'veth', 'peer', 'name', VETH_SCAN],
    ['link', 'set', VETH_SIM, 'netns', SIM_NS],
    ['link', 'set', VETH_SCAN, 'netns', SCAN_NS],
    ['-n', SIM_NS, 'link', 'set', 'lo', 'up'],
    ['-n', SCAN_NS, 'link', 'set', 'lo', 'up'],
    ...PRINTERS.map((a) => ['-n', SIM_NS, 'addr', 'add', `${a}/24`, 'dev', VETH_SIM]),
    ['-n', SCAN_NS, 'addr', 'add', '198.18.0.254/24', 'dev', VETH_SCAN],
    ['-n', SIM_NS, 'link', 'set', VETH_SIM, 'up'],
    ['-n', SCAN_NS, 'link', 'set', VETH_SCAN, 'up'],
  ];
  for (const s of steps) {
    const r = ip(...s);
    if (!r.ok) throw new Error(`ip ${s.join(' ')}: ${r.err}`);
  }
}

describe('subnet scan across network namespaces', { skip: skipReason ?? false }, () => {
  let sim: SnmpSim | undefined;

  before(async () => {
    setupNamespaces();
    sim = await startSnmpSim({
      endpoints: PRINTERS.map((address, i) => ({ address, recording: fixturePath(RECORDINGS[i % 2].file) })),
      port: 161,
      netns: SIM_NS,
    });
  });

  after(async () => {
    await sim?.stop();
    teardownNamespaces();
  });

  it('finds exactly the printers; absent hosts time out once each, 10 at once', () => {
    const scanUrl = new URL('../../../src/snmp/scan.js', import.meta.url).href;
    const clientUrl = new URL('../../../src/snmp/client.js', import.meta.url).href;
    // Long enough that a printer's answer on a loaded machine is never taken for silence (snmpsim
    // answers in milliseconds once warm); each absent host waits it out once, all 10 side by side.
    const timeoutMs = 5000;
    // Sessions are counted (requests per address, most open at once), not the scan's duration.
    const script = `
      import { scan } from ${JSON.stringify(scanUrl)};
      import { openSession } from ${JSON.stringify(clientUrl)};
      const requests = {};
      let open = 0;
      let mostOpen = 0;
      const counting = (credential, options) => {
        const s = openSession(credential, options);
        mostOpen = Math.max(mostOpen, ++open);
        const close = s.close.bind(s);
        let closed = false;
        s.close = () => {
          if (!closed) {
            closed = true;
            open--;
            requests[options.host] = (requests[options.host] ?? 0) + s.requests;
          }
          close();
        };
        return s;
      };
      const r = await scan({
        targets: ${JSON.stringify([...PRINTERS, ...SILENT])},
        credentials: [{ version: 'v2c', community: 'public' }],
        timeoutMs: ${timeoutMs},
        concurrency: 10,
        allowedRanges: ['198.18.0.0/24'],
        openSession: counting,
      });
      console.log(JSON.stringify({
        hosts: r.hosts.map((h) => ({ address: h.address, serial: h.values.get('1.3.6.1.2.1.43.5.1.1.17.1')?.value, partial: h.partial })),
        scanned: r.scanned,
        durationMs: r.durationMs,
        requests,
        mostOpen,
        openAtEnd: open,
      }));`;
    const r = spawnSync('ip', ['netns', 'exec', SCAN_NS, process.execPath, '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 180_000, // only a give-up
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      hosts: { address: string; serial: string; partial: boolean }[];
      scanned: number;
      durationMs: number;
      requests: Record<string, number>;
      mostOpen: number;
      openAtEnd: number;
    };
    console.log(`# figure: scan of 10 printers and 10 absent hosts (timeout ${timeoutMs} ms, 10 at once) took ${out.durationMs} ms`);
    assert.equal(out.scanned, 20);
    assert.deepEqual(
      out.hosts.map((h) => h.address),
      PRINTERS,
    );
    out.hosts.forEach((h, i) => {
      assert.equal(h.serial, RECORDINGS[i % 2].serial);
      assert.equal(h.partial, false);
    });
    // Each absent host cost one request (one timeout, no retry), and hosts were probed 10 at once:
    // so the absent ones cost about one timeout together, not ten in a row.
    assert.deepEqual(SILENT.map((a) => out.requests[a]), SILENT.map(() => 1), JSON.stringify(out.requests));
    assert.equal(out.mostOpen, 10, 'ten hosts probed at once');
    assert.equal(out.openAtEnd, 0, 'every session closed');
  });
});
