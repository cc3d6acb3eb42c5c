// Port probes: the pure helpers, and connect-only probes against listeners on loopback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import https from 'node:https';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProbedIpp } from '../../../src/discovery/announced.js';
import { SnmpTimeline } from '../../../src/discovery/snmp-timeline.js';
import { toObservation } from '../../../src/discovery/snmp-observation.js';
import { isProbeReason, openPorts, portReasons, probeHosts, probePort, readsByIpp, withProbedPorts } from '../../../src/discovery/port-probe.js';
import { onOwnSubnet, withNeighbourMac } from '../../../src/discovery/neighbours.js';
import { mergeObservation } from '../../../src/discovery/merge.js';
import type { Observation } from '../../../src/model/observation.js';
import { defaultSettings, mergeSettings, SettingsError } from '../../../src/settings/settings.js';

const observation = (over: Partial<Observation> = {}): Observation => ({
  serial: 'SN1',
  ip: '10.1.2.3',
  now: Date.parse('2026-11-26T04:00:00Z'),
  fields: { status_messages: [] },
  printerInfo: { serial: 'SN1', ip: '10.1.2.3' },
  ...over,
});

test('open ports are sorted, unique and valid; their reasons read "tcp N open"', () => {
  assert.deepEqual(openPorts([9100, 631, 80, 631, 0, 70000, 1.5, '443']), [80, 631, 9100]);
  assert.deepEqual(portReasons([9100, 631]), ['tcp 631 open', 'tcp 9100 open']);
  assert.equal(isProbeReason('tcp 515 open'), true);
  assert.equal(isProbeReason('ipp: ipp port 631 answered Get-Printer-Attributes'), false);
});

test('only port 631 makes a silent host worth an IPP read; 9100 alone identifies nothing', () => {
  assert.equal(readsByIpp([631]), true);
  assert.equal(readsByIpp([631, 9100]), true);
  assert.equal(readsByIpp([9100]), false);
  assert.equal(readsByIpp([80, 443, 515, 9100]), false);
  assert.equal(readsByIpp([]), false);
});

test("a probe's ports and reasons replace the last probe's, a later read's are added; what announcements and reads saw stays", () => {
  const first = withProbedPorts(observation({ printerInfo: { serial: 'SN1', detection_reasons: ['tcp 80 open', 'mdns: _ipp._tcp'] } }), [9100, 80]);
  assert.equal(first.portsProbed, true);
  assert.deepEqual(first.printerInfo.open_ports, [80, 9100]);
  assert.deepEqual(first.printerInfo.detection_reasons, ['tcp 80 open', 'tcp 9100 open', 'mdns: _ipp._tcp']);
  const stored = mergeObservation(undefined, first);
  // A poll (no probe) by IPP on 631: the scan's ports and reasons stay, 631 joins them, and the
  // announcement's reason stays too.
  const poll = mergeObservation(stored, observation({ printerInfo: { serial: 'SN1', open_ports: [631], detection_reasons: ['ipp: ipp port 631 answered Get-Printer-Attributes'], advertised_services: ['_ipp._tcp'] } }));
  assert.deepEqual(poll.printer_info!.open_ports, [80, 631, 9100]);
  assert.deepEqual(poll.printer_info!.detection_reasons, ['ipp: ipp port 631 answered Get-Printer-Attributes', 'tcp 80 open', 'tcp 9100 open', 'mdns: _ipp._tcp']);
  // The next scan's probe finds only 9100: what it found replaces the earlier probe's findings;
  // what IPP and mDNS saw is not the probe's to erase.
  const rescan = mergeObservation(poll, withProbedPorts(observation(), [9100]));
  assert.deepEqual(rescan.printer_info!.open_ports, [9100]);
  assert.deepEqual(rescan.printer_info!.detection_reasons, ['tcp 9100 open', 'ipp: ipp port 631 answered Get-Printer-Attributes', 'mdns: _ipp._tcp']);
  assert.deepEqual(rescan.printer_info!.advertised_services, ['_ipp._tcp'], 'the advertised services stay');
});

test("the neighbour table's MAC fills a printer on the box's own subnets that reported none", () => {
  const subnets = [{ cidr: '10.1.2.0/24' }];
  const table = new Map([['10.1.2.3', 'aa:bb:cc:00:11:22'], ['10.9.9.9', 'aa:bb:cc:00:11:99']]);
  const lookup = (ip: string) => table.get(ip);
  const filled = withNeighbourMac(observation(), lookup, subnets);
  assert.equal(filled.fields.mac_address, 'aa:bb:cc:00:11:22');
  assert.equal(filled.printerInfo.mac_address, 'aa:bb:cc:00:11:22');
  // The printer's own report wins.
  const own = withNeighbourMac(observation({ fields: { mac_address: '00:00:5e:00:53:01' } }), lookup, subnets);
  assert.equal(own.fields.mac_address, '00:00:5e:00:53:01');
  // Not on the box's subnets: no MAC, whatever the table says.
  const routed = withNeighbourMac(observation({ ip: '10.9.9.9' }), lookup, subnets);
  assert.equal(routed.fields.mac_address, undefined);
  assert.equal(onOwnSubnet('10.1.2.255', subnets), true);
  assert.equal(onOwnSubnet('10.1.3.1', subnets), false);
  // No entry: nothing.
  assert.equal(withNeighbourMac(observation({ ip: '10.1.2.4' }), lookup, subnets).fields.mac_address, undefined);
});

test('discovery.port_probes_enabled: on by default, a boolean, refused otherwise', () => {
  const base = defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: [] });
  assert.equal(base.discovery.port_probes_enabled, true);
  assert.equal(mergeSettings(base, { discovery: { port_probes_enabled: false } }).discovery.port_probes_enabled, false);
  assert.throws(() => mergeSettings(base, { discovery: { port_probes_enabled: 'yes' } }), (e: Error) => e instanceof SettingsError && /discovery\.port_probes_enabled must be true or false/.test(e.message));
});

/** A TCP listener on loopback; counts connections and the bytes they sent. */
async function listener(host: string): Promise<{ port: number; connections: number; bytes: number; close(): Promise<void> }> {
  const state = { connections: 0, bytes: 0 };
  const server = net.createServer((s) => {
    state.connections++;
    s.on('data', (b) => (state.bytes += b.length));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return state.connections;
    },
    get bytes() {
      return state.bytes;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test('a probe connects and sends nothing; a closed port is not open', async () => {
  const l = await listener('127.0.0.1');
  try {
    assert.equal(await probePort('127.0.0.1', l.port, 2000), true);
    const closed = await listener('127.0.0.1');
    const closedPort = closed.port;
    await closed.close();
    assert.equal(await probePort('127.0.0.1', closedPort, 2000), false);
    const deadline = Date.now() + 5000;
    while (l.connections < 1 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal(l.connections, 1);
    assert.equal(l.bytes, 0, 'connect only');
  } finally {
    await l.close();
  }
});

test('probeHosts: each address its own sorted ports; outside allowed_ranges nothing is contacted; an abort ends every probe', async () => {
  const a = await listener('127.0.0.1');
  const b = await listener('127.0.0.2');
  try {
    const ports = [b.port, a.port];
    const seen: string[] = [];
    const hosts = probeHosts(['127.0.0.1', '127.0.0.2', '127.0.0.3', 'not-an-ip'], { ports, timeoutMs: 2000, connections: 2, allowedRanges: ['127.0.0.0/30'], onHost: (ip) => seen.push(ip) });
    assert.deepEqual(await hosts.get('127.0.0.1'), [a.port]);
    assert.deepEqual(await hosts.get('127.0.0.2'), [b.port]);
    assert.deepEqual(await hosts.get('127.0.0.3'), []);
    assert.deepEqual(await hosts.get('not-an-ip'), []);
    assert.deepEqual(seen.sort(), ['127.0.0.1', '127.0.0.2', '127.0.0.3']);

    const before = a.connections;
    const fenced = probeHosts(['127.0.0.1'], { ports: [a.port], allowedRanges: ['10.0.0.0/8'] });
    assert.deepEqual(await fenced.get('127.0.0.1'), []);
    assert.equal(a.connections, before, 'outside allowed_ranges: not contacted');

    const stop = new AbortController();
    stop.abort();
    const stopped = probeHosts(['127.0.0.1'], { ports: [a.port], signal: stop.signal });
    assert.deepEqual(await stopped.get('127.0.0.1'), []);
  } finally {
    await a.close();
    await b.close();
  }
});

/** One IPP attribute in RFC 8010's encoding. */
function attr(tag: number, name: string, value: string | number): Buffer {
  const v = typeof value === 'number' ? Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]) : Buffer.from(value);
  const n = Buffer.from(name);
  return Buffer.concat([Buffer.from([tag, n.length >> 8, n.length & 255]), n, Buffer.from([v.length >> 8, v.length & 255]), v]);
}

test('a probed host whose IPP port answers only TLS is read over ipps, on the same port', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'probe-cert-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const gen = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=printer.local', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { encoding: 'utf8' });
  assert.equal(gen.status, 0, gen.stderr);
  const body = Buffer.concat([
    Buffer.from([0x02, 0x00, 0, 0, 0, 0, 0, 1, 0x01]),
    attr(0x47, 'attributes-charset', 'utf-8'),
    attr(0x48, 'attributes-natural-language', 'en'),
    Buffer.from([0x04]),
    attr(0x41, 'printer-make-and-model', 'Acme Secure 3'),
    attr(0x45, 'printer-uuid', 'urn:uuid:0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9'),
    attr(0x23, 'printer-state', 3),
    Buffer.from([0x03]),
  ]);
  let requests = 0;
  const server = https.createServer({ key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) }, (req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/ipp' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as net.AddressInfo).port;
  const settings = defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: ['127.0.0.0/8'] });
  const ctx = { settings, credentials: [], signal: new AbortController().signal, now: Date.now(), snmpObservation: toObservation };
  const read = await readProbedIpp('127.0.0.1', ctx, port);
  assert.ok('observation' in read, JSON.stringify(read));
  assert.equal(requests, 1, 'the plain request never reached the TLS server as a request');
  assert.deepEqual(read.ipp, { address: '127.0.0.1', port, resource: '/ipp/print', tls: true });
  assert.equal(read.observation.serial, 'UUID-0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9');
  assert.equal(read.observation.fields.manufacturer, 'Acme');
  assert.equal(read.observation.fields.model, 'Secure 3');
  // Nothing there: both attempts named.
  server.close();
  const none = await readProbedIpp('127.0.0.1', ctx, port);
  assert.ok('error' in none && /over TLS/.test(none.error), JSON.stringify(none));
});

test('a probed port that accepts and says nothing costs one budget: plain and TLS share it', async (t) => {
  // A mute listener: it accepts every connection and never writes (a hung service).
  const connections: net.Socket[] = [];
  const server = net.createServer((s) => {
    connections.push(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    connections.forEach((s) => s.destroy());
    return new Promise<void>((r) => server.close(() => r()));
  });
  const port = (server.address() as net.AddressInfo).port;
  const settings = defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: ['127.0.0.0/8'] });
  const ctx = { settings, credentials: [], signal: new AbortController().signal, now: Date.now(), snmpObservation: toObservation };
  const read = await readProbedIpp('127.0.0.1', ctx, port, 300);
  assert.ok('error' in read && /over TLS: not tried, the 300 ms were spent/.test(read.error), JSON.stringify(read));
  assert.equal(connections.length, 1, 'the plain request used the whole budget: no TLS attempt after it');
});

test('SnmpTimeline: started, answered and ended per address; the scan ending releases every wait', async () => {
  let now = 1000;
  const tl = new SnmpTimeline(() => now);
  tl.started('10.0.0.1');
  assert.equal(tl.startedAt('10.0.0.1'), 1000);
  now = 1500;
  tl.started('10.0.0.1');
  assert.equal(tl.startedAt('10.0.0.1'), 1000, 'the first start counts');
  tl.answered('10.0.0.1');
  await tl.answeredWithin('10.0.0.1', 60_000); // resolves on the answer, not the guard
  assert.equal(tl.hasAnswered('10.0.0.1'), true);
  const ended = tl.whenEnded('10.0.0.1');
  tl.ended('10.0.0.1');
  await ended;
  // Never reached by the scan (stopped, or outside the allowed ranges): released by finish().
  const waits = Promise.all([tl.whenStarted('10.0.0.2'), tl.whenEnded('10.0.0.2'), tl.answeredWithin('10.0.0.2', 60_000)]);
  tl.finish();
  await waits;
  assert.equal(tl.hasAnswered('10.0.0.2'), false);
  assert.equal(tl.startedAt('10.0.0.2'), undefined);
  await tl.whenEnded('10.0.0.3'); // asked after the end: already released
});
