// Port probes on a private LAN of network namespaces (test/kit/printer-lan.ts): the
// box's agent in its own namespace scans the LAN's /24 as a manual range. On the LAN:
// - a printer that answers IPP and announces nothing (CUPS's ippeveprinter, DNS-SD off, no Avahi)
//   and no SNMP: found by its open port 631 and read by IPP, with its MAC from the box's neighbour
//   table (the host's real link address);
// - a printer that answers SNMP (snmpsim, a Kyocera recording) with a raw port 9100 open (a node
//   listener in its namespace): its record carries open_ports [9100];
// - a host with only 9100 open: not listed (a port identifies nothing), and probed by connect only;
// - with discovery.port_probes_enabled off, nothing is probed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createPrinterLan, printerLanUnavailable, type PrinterHost, type PrinterLan } from '../../kit/printer-lan.js';
import { startAgentInBox, type BoxAgent } from '../../kit/lan.js';
import { discoveredListing, type Info } from '../../kit/discovered.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';

const skip = printerLanUnavailable() ?? ensureSnmpsim();
if (skip) console.log(`# port-probe LAN test skipped: ${skip}`);

const SNMP_PORT = 1161;
const KYOCERA_SERIAL = 'VD21457943';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** A TCP listener on 9100 inside a host namespace, which reports each connection and its bytes. */
interface RawPort {
  proc: ChildProcess;
  out: string;
  connections(): number;
  bytes(): number;
}

async function listen9100(h: PrinterHost): Promise<RawPort> {
  const script = `
    const net = require('node:net');
    net.createServer((s) => {
      console.log('conn');
      s.on('data', (b) => console.log('data ' + b.length));
      s.on('error', () => {});
    }).listen(9100, process.argv[1], () => console.log('listening'));`;
  const proc = spawn('ip', ['netns', 'exec', h.ns, process.execPath, '-e', script, h.address], { stdio: ['ignore', 'pipe', 'pipe'] });
  const raw: RawPort = {
    proc,
    out: '',
    connections: () => raw.out.split('\n').filter((l) => l === 'conn').length,
    bytes: () => raw.out.split('\n').filter((l) => l.startsWith('data ')).reduce((n, l) => n + Number(l.slice(5)), 0),
  };
  proc.stdout!.on('data', (b: Buffer) => (raw.out += b.toString()));
  proc.stderr!.on('data', (b: Buffer) => (raw.out += b.toString()));
  const deadline = Date.now() + 20_000;
  while (!raw.out.includes('listening')) {
    if (proc.exitCode !== null) throw new Error(`9100 listener in ${h.ns} exited: ${raw.out}`);
    if (Date.now() > deadline) throw new Error(`9100 listener in ${h.ns} not listening: ${raw.out}`);
    await sleep(50);
  }
  return raw;
}

/** The host's real link-layer address (its eth0 on the LAN's bridge). */
function linkMac(h: PrinterHost): string {
  const r = spawnSync('ip', ['-n', h.ns, '-j', 'link', 'show', 'eth0'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as { address: string }[])[0].address.toLowerCase();
}

describe('port probes in a range scan on a namespace LAN', { skip: skip ?? undefined, timeout: 240_000 }, () => {
  let lan: PrinterLan;
  let agent: BoxAgent;
  let quiet: PrinterHost;
  let snmpHost: PrinterHost;
  let rawOnly: PrinterHost;
  let sim: SnmpSim | undefined;
  let snmpRaw: RawPort;
  let rawRaw: RawPort;

  const json = { 'Content-Type': 'application/json' };
  const { discovered } = discoveredListing(() => agent);
  const settings = async (body: unknown) => {
    const r = await agent.request({ method: 'POST', path: '/settings', headers: json, body: JSON.stringify(body) });
    assert.equal(r.status, 200, r.body);
  };
  /** Runs a scan to its end (polls its state, with a generous bound); returns its final state. */
  const scanToEnd = async (): Promise<{ state: string; found: number; scanned: number; total: number }> => {
    const start = await agent.request({ method: 'POST', path: '/discover' });
    assert.equal(start.status, 202, start.body);
    const id = (JSON.parse(start.body) as { scan_id: number }).scan_id;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const st = JSON.parse((await agent.request('/discover')).body) as { scan_id: number; state: string; found: number; scanned: number; total: number } | null;
      if (st && st.scan_id === id && st.state !== 'running') return st;
      assert.ok(Date.now() < deadline, `scan did not end:\n${agent.stdout().slice(-3000)}`);
      await sleep(200);
    }
  };

  before(async () => {
    lan = createPrinterLan();
    quiet = lan.addHost('quiet-printer');
    snmpHost = lan.addHost('snmp-printer');
    rawOnly = lan.addHost('raw-only');
    agent = await startAgentInBox(lan, { mdns: false });
    sim = await startSnmpSim({ endpoints: [{ address: snmpHost.address, recording: fixturePath('printmaster/kyocera_p2040.snmprec') }], port: SNMP_PORT, netns: snmpHost.ns });
    [snmpRaw, rawRaw] = await Promise.all([listen9100(snmpHost), listen9100(rawOnly), lan.startPrinter(quiet, { make: 'Acme', model: 'Quiet 5', queue: 'Quiet Printer', location: 'Room 2', announce: false })]) as [RawPort, RawPort, void];
    await settings({ snmp: { port: SNMP_PORT }, discovery: { manual_ranges: true, ranges_text: lan.subnet, snmp_timeout_ms: 500 } });
  });

  after(async () => {
    await agent?.stop();
    await sim?.stop();
    snmpRaw?.proc.kill();
    rawRaw?.proc.kill();
    lan?.destroy();
  });

  it('finds the printer that answers only IPP by its open port 631, with identity, supplies, state and the MAC the box saw', async () => {
    const st = await scanToEnd();
    assert.equal(st.state, 'done', JSON.stringify(st));
    assert.equal(st.scanned, st.total);
    assert.equal(st.total, 254, "the /24's host addresses");
    const list = await discovered();
    const mine = list.filter((d) => d.ip === quiet.address);
    assert.equal(mine.length, 1, `listed once: ${JSON.stringify(list).slice(0, 2000)}\n${agent.stdout().slice(-3000)}`);
    const d = mine[0];
    assert.match(d.serial, /^UUID-[0-9a-f-]{36}$/, 'no serial: keyed by printer-uuid');
    assert.equal(d.manufacturer, 'Acme');
    assert.equal(d.model, 'Quiet 5');
    assert.equal(d.location, 'Room 2');
    assert.equal(d.description, 'Quiet Printer');
    assert.deepEqual(d.toner_levels, { black: 75, waste_toner: 25 });
    assert.deepEqual(d.status_messages ?? [], [], 'idle, state reasons "none"');
    assert.deepEqual(d.open_ports, [631]);
    assert.deepEqual(d.discovery_methods, ['ipp', 'manual_range']);
    assert.ok((d.detection_reasons as string[]).includes('tcp 631 open'), JSON.stringify(d.detection_reasons));
    assert.ok((d.detection_reasons as string[]).some((r) => r.startsWith('ipp: ipp port 631')), JSON.stringify(d.detection_reasons));
    assert.equal(d.mac_address, linkMac(quiet), "the neighbour table's MAC: the host's real link address");
  });

  it("puts the probed raw port on the SNMP printer's record, and lists nothing for a host with only 9100 open", async () => {
    const list = await discovered();
    const snmp = list.filter((d) => d.ip === snmpHost.address);
    assert.equal(snmp.length, 1, JSON.stringify(snmp));
    assert.equal(snmp[0].serial, KYOCERA_SERIAL);
    assert.deepEqual(snmp[0].open_ports, [9100]);
    assert.ok((snmp[0].detection_reasons as string[]).includes('tcp 9100 open'), JSON.stringify(snmp[0].detection_reasons));
    assert.ok((snmp[0].discovery_methods as string[]).includes('manual_range'));
    assert.equal(list.filter((d) => d.ip === rawOnly.address).length, 0, 'a raw port alone identifies no printer');
    assert.equal(list.length, 2, JSON.stringify(list.map((d) => d.ip)));
    // Probed: connected to, and sent nothing (connect only, then reset).
    assert.ok(rawRaw.connections() >= 1, rawRaw.out);
    assert.equal(rawRaw.bytes(), 0, 'nothing sent to a raw port');
    assert.equal(snmpRaw.bytes(), 0);
  });

  it('with discovery.port_probes_enabled off, a scan probes nothing (and a bad value is refused)', async () => {
    const bad = await agent.request({ method: 'POST', path: '/settings', headers: json, body: JSON.stringify({ discovery: { port_probes_enabled: 1 } }) });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /discovery\.port_probes_enabled must be true or false/);
    await settings({ discovery: { port_probes_enabled: false } });
    const before = rawRaw.connections() + snmpRaw.connections();
    const st = await scanToEnd();
    assert.equal(st.state, 'done');
    assert.equal(st.found, 1, 'only the SNMP printer: the IPP-only one is not found without probes');
    assert.equal(rawRaw.connections() + snmpRaw.connections(), before, 'no connection to 9100');
    const snmp = (await discovered()).find((d) => d.ip === snmpHost.address)!;
    assert.deepEqual(snmp.open_ports, [9100], 'what the last probe found stays until the next probe');
    await settings({ discovery: { port_probes_enabled: true } });
  });
});
