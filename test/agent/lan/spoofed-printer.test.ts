// Spoofed printers: a host that answers SNMP with a saved printer's serial from
// another address must not take the record over. Real agent over HTTPS, real printers' recordings
// served by snmpsim over real UDP on loopback: the printer at 127.0.32.1 (its own snmpsim process,
// so that it can be silenced), the responder at 127.0.32.2 (another process, same port) with the
// printer's serial, model and MAC but a page counter of 5 and a description of its own.
// Nothing leaves 127.0.0.0/8 (allowed_ranges).
import { after, before, describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, writeMovedCounters, type SnmpSim } from '../../kit/snmpsim.js';
import { createLan, lanUnavailable, startAgentInBox, type BoxAgent, type Lan } from '../../kit/lan.js';
import { readHost } from '../../../src/snmp/scan.js';
import type { SnmpCredential } from '../../../src/snmp/client.js';
import { judgeSighting, type Fingerprint, type PendingMove } from '../../../src/discovery/move-check.js';
import type { Device } from '../../../src/model/device.js';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore } from '../../../src/store/devices.js';

const SERIAL = 'VD21457943';
const PRINTER = '127.0.32.1';
const RESPONDER = '127.0.32.2';
const PAGES = 120_000;
const RECORDING = fixturePath('printmaster/kyocera_p2040.snmprec');
const LIFE_COUNT = '1.3.6.1.2.1.43.10.2.1.4.1.1';
const SYS_DESCR = '1.3.6.1.2.1.1.1.0';

const skip = ensureSnmpsim();
if (skip) console.log(`# spoofed-printer tests skipped: ${skip}`);

let tmp: string;
let printerSim: SnmpSim | undefined;
let responderSim: SnmpSim | undefined;
let agent: Agent;
let port: number;
let printerRecording: string;

/** The printer's recording with one line's value replaced (snmprec: oid|type|value). */
function withValue(src: string, dst: string, oid: string, value: string): void {
  const lines = readFileSync(src, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.startsWith(`${oid}|`));
  assert.ok(i >= 0, `${oid} in ${src}`);
  const [o, type] = lines[i].split('|');
  lines[i] = `${o}|${type}|${value}`;
  writeFileSync(dst, lines.join('\n'));
  chmodSync(dst, 0o644);
}


async function device(): Promise<any> {
  return (expectJson(await agent.get(`/api/devices/profile?serial=${SERIAL}`)) as any).device;
}

/** Every raw page count stored for the printer, oldest first. */
async function pageCounts(): Promise<number[]> {
  const rows = expectJson(await agent.get(`/api/devices/metrics/history?serial=${SERIAL}&period=week`)) as any[];
  return rows.filter((r) => r.tier === undefined || r.tier === 'raw').map((r) => r.page_count);
}

async function latestPages(): Promise<number> {
  return (expectJson(await agent.get(`/api/devices/metrics/latest?serial=${SERIAL}`)) as any).page_count;
}

/** Runs one scan to its end (polls its state; bounded). */
async function scanOnce(ranges: string): Promise<any> {
  expectJson(await agent.post('/settings', { discovery: { ranges_text: ranges } }));
  const started = expectJson(await agent.post('/discover', {}), 202) as any;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const s = expectJson(await agent.get('/discover')) as any;
    if (s.scan_id === started.scan_id && s.state !== 'running') return s;
    if (Date.now() > deadline) throw new Error('scan did not end within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(join(os.tmpdir(), 'printbox-spoof-'));
  printerRecording = join(tmp, 'printer.snmprec');
  writeMovedCounters(RECORDING, printerRecording, PAGES - 7432);
  const responderRecording = join(tmp, 'responder.snmprec');
  withValue(RECORDING, join(tmp, 'r1.snmprec'), LIFE_COUNT, '5');
  withValue(join(tmp, 'r1.snmprec'), responderRecording, SYS_DESCR, 'Not the printer you saved');
  printerSim = await startSnmpSim({ endpoints: [{ address: PRINTER, recording: printerRecording, switchable: true }] });
  port = printerSim.port;
  responderSim = await startSnmpSim({ endpoints: [{ address: RESPONDER, recording: responderRecording }], port });
  agent = await startAgent({});
  expectJson(
    await agent.post('/settings', {
      discovery: { subnet_scan: false, manual_ranges: true, ranges_text: PRINTER, allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 800, discover_concurrency: 4 },
      snmp: { port, communities: ['public'] },
    }),
  );
  // The printer, found where it is and saved: its history starts at 120,000 pages.
  const s = await scanOnce(PRINTER);
  assert.equal(s.found, 1);
  expectJson(await agent.post('/devices/save', { serial: SERIAL }));
  const d = await device();
  assert.equal(d.ip, PRINTER);
  assert.equal(await latestPages(), PAGES);
});

after(async () => {
  await agent?.stop();
  await printerSim?.stop();
  await responderSim?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('(b) both answering: the record stays, a pending move is shown, nothing from the responder is stored', { skip: skip ?? false }, async () => {
  const before = await device();
  const s = await scanOnce(`${PRINTER}-${RESPONDER.split('.').pop()}`);
  assert.equal(s.state, 'done');
  const d = await device();
  assert.equal(d.ip, PRINTER, 'the record did not move');
  const move = d.raw_data?.pending_move;
  assert.ok(move, `a pending move is on the record: ${JSON.stringify(d.raw_data)}`);
  assert.equal(move.ip, RESPONDER);
  assert.equal(move.saved_address_answers, true);
  assert.equal(move.snmp, 'v2c');
  assert.equal(move.checks.identity, 'match', 'a careful spoofer copies model and manufacturer');
  assert.equal(move.checks.reported_mac, 'match', 'and the MAC it reports');
  assert.equal(move.checks.neighbour_mac, 'unknown', 'loopback has no neighbour table entry');
  assert.match(move.reason, /the saved address still answers with this serial/);
  assert.match(move.reason, /SNMP v2c does not prove who sent the reply/);
  assert.match(d.status_messages[0], new RegExp(`^address move pending: ${RESPONDER.replaceAll('.', '\\.')} answers with this serial`));
  assert.equal(d.description ?? '', before.description ?? '');
  const profile = expectJson(await agent.get(`/api/devices/profile?serial=${SERIAL}`)) as any;
  assert.notEqual(profile.printer_info?.description, 'Not the printer you saved', 'the description is the printer\'s');
  const counts = await pageCounts();
  assert.ok(!counts.includes(5), `no reading of 5 pages stored: ${counts}`);
  assert.ok(counts.every((c) => c === PAGES), `every stored reading is the printer's: ${counts}`);

  // A second round with both answering: still pending, still not moved; the printer's own poll is stored.
  await scanOnce(`${PRINTER}-${RESPONDER.split('.').pop()}`);
  const again = await device();
  assert.equal(again.ip, PRINTER);
  assert.equal(again.raw_data.pending_move.sightings, 2);
  const polled = expectJson(await agent.post('/devices/metrics/collect', { serial: SERIAL })) as any;
  assert.equal(polled.page_count, PAGES);
  assert.equal(await latestPages(), PAGES);
});

test('(a) the printer silent: the record stays, the move is pending, no reading from the responder is stored', { skip: skip ?? false }, async () => {
  await printerSim!.stop();
  printerSim = undefined;
  try {
    await printerSilent();
  } finally {
    // The printer is back, for the tests after this one.
    printerSim = await startSnmpSim({ endpoints: [{ address: PRINTER, recording: printerRecording, switchable: true }], port });
  }
});

async function printerSilent(): Promise<void> {
  const rowsBefore = (await pageCounts()).length;
  await scanOnce(RESPONDER);
  const d = await device();
  assert.equal(d.ip, PRINTER, 'the record did not move');
  assert.equal(d.raw_data.pending_move.ip, RESPONDER);
  assert.equal(d.raw_data.pending_move.saved_address_answers, false);
  assert.match(d.raw_data.pending_move.reason, /no MAC or engine ID the box could check/);
  assert.match(d.status_messages[0], /^address move pending/);
  assert.equal(await latestPages(), PAGES);
  // The next round: the same reply, the printer still silent. Nothing the box could check proves
  // it is the printer (v2c, no neighbour entry), so it is still only pending.
  await scanOnce(RESPONDER);
  const again = await device();
  assert.equal(again.ip, PRINTER);
  assert.ok(again.raw_data.pending_move.sightings >= 2);
  // A poll: the saved address is silent, the pending one is read, and still not trusted.
  expectTextError(await agent.post('/devices/metrics/collect', { serial: SERIAL }), 504, `device ${SERIAL} did not answer at ${PRINTER}`);
  const polled = await device();
  assert.equal(polled.ip, PRINTER);
  assert.ok(polled.status_messages.some((m: string) => m.startsWith('not answering since')));
  assert.ok(polled.status_messages[0].startsWith('address move pending'), 'the pending move stays said first');
  const counts = await pageCounts();
  assert.equal(counts.length, rowsBefore, 'no reading stored');
  assert.ok(!counts.includes(5));
}

test('(d) a lower page counter is flagged on the device, not stored; a person can accept it (a board swap)', { skip: skip ?? false }, async () => {
  const rowsBefore = (await pageCounts()).length;
  const swapped = join(tmp, 'swapped.snmprec');
  writeMovedCounters(RECORDING, swapped, 100); // the new board counts from 7,532
  printerSim!.switchRecording(PRINTER, swapped);
  const r = await agent.post('/devices/metrics/collect', { serial: SERIAL });
  expectTextError(r, 409, `page counter went down: 7532 read at ${PRINTER}, ${PAGES} stored; the reading is flagged on the device, not stored (POST /devices/confirm-counter accepts it)`);
  const d = await device();
  assert.deepEqual(
    { ...d.raw_data.counter_flag, seen_at: undefined },
    { ip: PRINTER, seen_at: undefined, page_count: 7532, stored_page_count: PAGES, reading: { page_count: 7532, mono_pages: 7532 } },
  );
  assert.ok(d.status_messages.some((m: string) => m.startsWith('page counter went down: 7532')));
  assert.equal(await latestPages(), PAGES);
  assert.equal((await pageCounts()).length, rowsBefore, 'not stored');

  // A scan of the printer's own address reads the same: still flagged, still not stored.
  await scanOnce(PRINTER);
  assert.equal((await pageCounts()).length, rowsBefore);
  assert.equal((await device()).raw_data.counter_flag.page_count, 7532);

  expectTextError(await agent.post('/devices/confirm-counter', { serial: 'NOSUCH' }), 404, 'no device with serial "NOSUCH"');
  expectTextError(await agent.post('/devices/confirm-counter', {}), 400, 'missing field serial');
  const accepted = expectJson(await agent.post('/devices/confirm-counter', { serial: SERIAL })) as any;
  assert.equal(accepted.raw_data.counter_flag, undefined);
  assert.ok(!(accepted.status_messages ?? []).some((m: string) => m.startsWith('page counter went down')));
  assert.equal(await latestPages(), 7532);
  expectTextError(await agent.post('/devices/confirm-counter', { serial: SERIAL }), 409, `device ${SERIAL} has no flagged page counter`);
  // From the accepted count on, readings are stored again.
  const next = expectJson(await agent.post('/devices/metrics/collect', { serial: SERIAL })) as any;
  assert.equal(next.page_count, 7532);
});

test('(c) a person confirms the move: the record moves to the address they saw, and only then', { skip: skip ?? false }, async () => {
  const d = await device();
  assert.equal(d.raw_data.pending_move.ip, RESPONDER, 'still pending from the rounds before');
  expectTextError(await agent.post('/devices/confirm-move', { serial: SERIAL }), 400, 'missing field ip');
  expectTextError(await agent.post('/devices/confirm-move', { serial: 'NOSUCH', ip: RESPONDER }), 404, 'no device with serial "NOSUCH"');
  expectTextError(await agent.post('/devices/confirm-move', { serial: SERIAL, ip: '127.0.32.9' }), 409, `device ${SERIAL}'s pending move is to ${RESPONDER}, not 127.0.32.9`);
  assert.equal((await device()).ip, PRINTER, 'a refused confirmation changes nothing');
  const moved = expectJson(await agent.post('/devices/confirm-move', { serial: SERIAL, ip: RESPONDER })) as any;
  assert.equal(moved.ip, RESPONDER);
  assert.equal(moved.raw_data?.pending_move, undefined);
  assert.ok(!(moved.status_messages ?? []).some((m: string) => m.startsWith('address move pending')));
  assert.equal((await device()).ip, RESPONDER);
  expectTextError(await agent.post('/devices/confirm-move', { serial: SERIAL, ip: RESPONDER }), 409, `device ${SERIAL} has no pending move`);
  // Polls now read the new address. Its counter (5) is below the stored one: flagged, not stored.
  const r = await agent.post('/devices/metrics/collect', { serial: SERIAL });
  assert.equal(r.status, 409, r.body);
  assert.match(r.body, new RegExp(`^page counter went down: 5 read at ${RESPONDER.replaceAll('.', '\\.')}`));
  assert.ok(!(await pageCounts()).includes(5));
});

// The neighbour table, for real: the agent runs in a "box" namespace; the printer is a host in
// another namespace (its own veth, so its own MAC) at 198.18.7.2, the responder a host in a third
// (another MAC) at 198.18.8.2, on the box's second subnet. The addresses exist only inside these
// namespaces (RFC 2544 range); nothing is added to the root namespace.
const lanSkip = skip ?? lanUnavailable();
if (lanSkip && !skip) console.log(`# spoofed-printer LAN test skipped: ${lanSkip}`);

describe('on a LAN: the MAC the box sees in its neighbour table', { skip: lanSkip ?? false }, () => {
  const LAN_PRINTER = '198.18.7.2';
  const LAN_MOVED = '198.18.7.4';
  const LAN_RESPONDER = '198.18.8.2';
  let lan: Lan;
  let box: BoxAgent;
  let spoofNs: string;
  let printer: SnmpSim | undefined;
  let responder: SnmpSim | undefined;
  let dir: string;

  const ipc = (...args: string[]) => {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const macOf = (ns: string, dev: string) => (JSON.parse(ipc('-n', ns, '-j', 'link', 'show', 'dev', dev))[0].address as string).toLowerCase();
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await box.request({ method, path, headers: { Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, body: r.body, json: () => JSON.parse(r.body) };
  };
  const lanDevice = async () => (await call('GET', `/api/devices/profile?serial=${SERIAL}`)).json().device;
  async function lanScan(ranges: string): Promise<void> {
    assert.equal((await call('POST', '/settings', { discovery: { ranges_text: ranges } })).status, 200);
    const started = (await call('POST', '/discover', {})).json();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const s = (await call('GET', '/discover')).json();
      if (s.scan_id === started.scan_id && s.state !== 'running') return;
      if (Date.now() > deadline) throw new Error('scan did not end within 60 s');
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  before(async () => {
    dir = mkdtempSync(join(os.tmpdir(), 'printbox-spoof-lan-'));
    lan = createLan();
    spoofNs = `pbx-spf-${lan.tag}`;
    const vBox = `pbxf${lan.tag}`;
    ipc('netns', 'add', spoofNs);
    ipc('-n', lan.boxNs, 'link', 'add', vBox, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', spoofNs);
    ipc('-n', lan.boxNs, 'addr', 'add', '198.18.8.1/24', 'dev', vBox);
    ipc('-n', spoofNs, 'addr', 'add', `${LAN_RESPONDER}/24`, 'dev', 'eth0');
    ipc('-n', lan.boxNs, 'link', 'set', vBox, 'up');
    ipc('-n', spoofNs, 'link', 'set', 'eth0', 'up');
    ipc('-n', spoofNs, 'link', 'set', 'lo', 'up');
    const rec = join(dir, 'printer.snmprec');
    writeMovedCounters(RECORDING, rec, PAGES - 7432);
    const fake = join(dir, 'responder.snmprec');
    withValue(RECORDING, fake, LIFE_COUNT, '5');
    printer = await startSnmpSim({ endpoints: [{ address: LAN_PRINTER, recording: rec }], port: 161, netns: lan.laptopNs });
    responder = await startSnmpSim({ endpoints: [{ address: LAN_RESPONDER, recording: fake }], port: 161, netns: spoofNs });
    box = await startAgentInBox(lan, {});
    const r = await call('POST', '/settings', {
      discovery: { subnet_scan: false, manual_ranges: true, ranges_text: LAN_PRINTER, allowed_ranges: ['198.18.7.0/24', '198.18.8.0/24'], snmp_timeout_ms: 1000, discover_concurrency: 4 },
      snmp: { port: 161, communities: ['public'] },
    });
    assert.equal(r.status, 200, r.body);
    await lanScan(LAN_PRINTER);
    assert.equal((await call('POST', '/devices/save', { serial: SERIAL })).status, 200);
  });

  after(async () => {
    await box?.stop();
    await printer?.stop();
    await responder?.stop();
    if (spoofNs) spawnSync('ip', ['netns', 'del', spoofNs]);
    lan?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a trusted reading remembers the MAC the box saw; a responder with another MAC is told apart and never moved to', async () => {
    const printerMac = macOf(lan.laptopNs, `pbxl${lan.tag}`);
    const responderMac = macOf(spoofNs, 'eth0');
    const d = await lanDevice();
    assert.equal(d.ip, LAN_PRINTER);
    assert.equal(d.raw_data.neighbour_mac, printerMac, 'read from the box\'s /proc/net/arp');

    // Both answering.
    await lanScan(LAN_RESPONDER);
    let seen = await lanDevice();
    assert.equal(seen.ip, LAN_PRINTER);
    assert.equal(seen.raw_data.pending_move.neighbour_mac, responderMac);
    assert.equal(seen.raw_data.pending_move.checks.neighbour_mac, 'differs');
    assert.equal(seen.raw_data.pending_move.saved_address_answers, true);
    assert.match(seen.raw_data.pending_move.reason, new RegExp(`the box sees MAC ${responderMac} at ${LAN_RESPONDER.replaceAll('.', '\\.')}, the printer's is ${printerMac}`));

    // The printer silent, two rounds of the responder: a MAC that differs never moves the record.
    await printer!.stop();
    printer = undefined;
    await lanScan(LAN_RESPONDER);
    await lanScan(LAN_RESPONDER);
    seen = await lanDevice();
    assert.equal(seen.ip, LAN_PRINTER);
    assert.ok(seen.raw_data.pending_move.sightings >= 3);
    assert.equal(seen.raw_data.pending_move.saved_address_answers, false);
    const latest = (await call('GET', `/api/devices/metrics/latest?serial=${SERIAL}`)).json();
    assert.equal(latest.page_count, PAGES, 'nothing of the responder\'s stored');
  });

  test('the printer really moved (same MAC, old address silent): followed at the first scan, no person needed', async () => {
    // The same host takes a new address (DHCP): same interface, same MAC.
    ipc('-n', lan.laptopNs, 'addr', 'add', `${LAN_MOVED}/24`, 'dev', `pbxl${lan.tag}`);
    const rec = join(dir, 'moved.snmprec');
    writeMovedCounters(RECORDING, rec, PAGES - 7432 + 40);
    printer = await startSnmpSim({ endpoints: [{ address: LAN_MOVED, recording: rec }], port: 161, netns: lan.laptopNs });
    await lanScan(LAN_MOVED);
    const moved = await lanDevice();
    assert.equal(moved.ip, LAN_MOVED, 'the printer\'s MAC at the new address, the old one silent: moved');
    assert.equal(moved.raw_data.pending_move, undefined);
    assert.match(box.stdout(), new RegExp(`printer moved from ${LAN_PRINTER.replaceAll('.', '\\.')} to ${LAN_MOVED.replaceAll('.', '\\.')}`));
    const latest = (await call('GET', `/api/devices/metrics/latest?serial=${SERIAL}`)).json();
    assert.equal(latest.page_count, PAGES + 40, 'and its reading is stored');
  });
});

// SNMPv3: the engine ID, from real snmpsim v3 agents (the agent's settings carry no SNMPv3 context,
// which snmpsim needs to pick a recording, so the reads here are the scanner's own, with the
// context): the engine ID comes from the agent's discovery Report, and an authenticated reply needs
// the user's keys localised to it. Two agents with the same user and keys (a site's shared v3
// credentials on another device) are told apart by it; a v2c reply for a printer known by its
// engine ID is a downgrade.
describe('SNMPv3: the engine ID', { skip: skip ?? false }, () => {
  const V3_PRINTER = '127.0.32.10';
  const V3_OTHER = '127.0.32.11';
  const user = { user: 'printbox', authProto: 'SHA' as const, authKey: 'auth-secret-1', privProto: 'AES' as const, privKey: 'priv-secret-1', context: 'printer' };
  const cred: SnmpCredential = { version: 'v3', user: user.user, authProtocol: 'SHA', authKey: user.authKey, privProtocol: 'AES', privKey: user.privKey, context: 'printer' };
  let a: SnmpSim | undefined;
  let b: SnmpSim | undefined;
  before(async () => {
    a = await startSnmpSim({ endpoints: [], v3: { address: V3_PRINTER, recording: RECORDING, ...user } });
    b = await startSnmpSim({ endpoints: [], v3: { address: V3_OTHER, recording: RECORDING, ...user }, port: a.port });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
  });

  test('an authenticated reply carries its engine ID; another engine with the same keys, or a v2c reply, is told apart', async () => {
    const read = async (address: string) => {
      const host = await readHost(address, { credentials: [cred], port: a!.port, timeoutMs: 2000, allowedRanges: ['127.0.0.0/8'], planRead: () => ({ gets: [], walks: [] }) });
      assert.ok(host, `${address} answered`);
      return host;
    };
    const hostA = await read(V3_PRINTER);
    const hostB = await read(V3_OTHER);
    assert.equal(hostA.securityLevel, 'v3 authPriv');
    assert.match(hostA.engineId ?? '', /^[0-9a-f]{10,64}$/);
    assert.notEqual(hostA.engineId, hostB.engineId, 'two engines, two IDs');

    const t0 = Date.parse('2026-11-01T10:00:00Z');
    const printer: Device = {
      serial: SERIAL, ip: V3_PRINTER, model: 'ECOSYS P2040dw', manufacturer: 'Kyocera', last_seen: t0, created_at: t0, first_seen: t0,
      device_type: 'network', source_type: 'snmp', is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
      trust: { snmp_engine_id: hostA.engineId },
    };
    const fp = (ip: string, host: typeof hostA): Fingerprint => ({ ip, snmp: host.securityLevel, engine_id: host.engineId, model: 'ECOSYS P2040dw', manufacturer: 'Kyocera' });

    // Another engine with the site's keys, claiming the serial: never moved to.
    const other = judgeSighting(printer, fp('127.0.32.12', hostB), t0 + 1000, false);
    assert.equal(other.move, false);
    assert.equal(!other.move && other.pending.checks.engine_id, 'differs');
    assert.match(!other.move ? other.pending.reason : '', /SNMPv3 engine ID [0-9a-f]+ differs from the printer's/);

    // A v2c reply for a printer known to speak SNMPv3: a downgrade.
    const v2c = judgeSighting(printer, { ip: '127.0.32.12', snmp: 'v2c', model: 'ECOSYS P2040dw', manufacturer: 'Kyocera' }, t0 + 1000, false);
    assert.equal(!v2c.move && v2c.pending.checks.engine_id, 'differs');
    assert.match(!v2c.move ? v2c.pending.reason : '', /the printer answered SNMPv3 \(engine ID [0-9a-f]+\), this reply did not/);

    // The printer's own engine, authenticated, at a new address: moved at once while the old one
    // is silent; two live addresses claiming it are a conflict for a person.
    const both = judgeSighting(printer, fp('127.0.32.12', hostA), t0 + 1000, true);
    assert.equal(both.move, false, 'not while the old address answers');
    assert.equal(!both.move && both.pending.checks.engine_id, 'match');
    assert.match(!both.move ? both.pending.reason : '', /two live addresses claim one printer/);
    assert.equal(judgeSighting(printer, fp('127.0.32.12', hostA), t0 + 1000, false).move, true);
    // The same engine ID over noAuthNoPriv proves nothing: anyone can send it.
    const noAuth = { ...fp('127.0.32.12', hostA), snmp: 'v3 noAuthNoPriv' as const };
    const pendingNoAuth = { ...printer, trust: { ...printer.trust, pending_move: (judgeSighting(printer, noAuth, t0 + 1000, false) as { pending: PendingMove }).pending } };
    assert.equal(judgeSighting(pendingNoAuth, noAuth, t0 + 3_600_000, false).move, false);
  });
});

test('a reading taken for the old address is dropped when a person confirmed the move meanwhile', () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'printbox-spoof-race-'));
  const db = openDatabase(join(dir, 'printbox.db'));
  try {
    const devices = new DeviceStore(db);
    const t0 = Date.parse('2026-11-01T10:00:00Z');
    const d: Device = {
      serial: SERIAL, ip: PRINTER, last_seen: t0, created_at: t0, first_seen: t0, device_type: 'network', source_type: 'snmp',
      is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
    };
    devices.put(d);
    // A round read the old address; meanwhile the person confirmed the move to RESPONDER.
    devices.put({ ...d, ip: RESPONDER });
    const ids = devices.recordReadings([{ device: { ...d, last_seen: t0 + 1000 }, snapshot: { serial: SERIAL, ts: t0 + 1000, page_count: PAGES }, existed: true, fromIp: PRINTER }]);
    assert.deepEqual(ids, [undefined]);
    assert.equal(devices.get(SERIAL)!.ip, RESPONDER, 'the person\'s move stands');
    assert.equal(devices.latestPageCount(SERIAL), undefined, 'nothing stored');
    // A reading for the current address is stored as before.
    const [id] = devices.recordReadings([{ device: { ...d, ip: RESPONDER }, snapshot: { serial: SERIAL, ts: t0 + 2000, page_count: PAGES }, existed: true, fromIp: RESPONDER }]);
    assert.equal(typeof id, 'number');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
