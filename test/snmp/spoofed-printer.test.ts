// Spoofed printers (issue 32, item 6): a host that answers SNMP with a saved printer's serial from
// another address must not take the record over. Real agent over HTTPS, real printers' recordings
// served by snmpsim over real UDP on loopback: the printer at 127.0.32.1 (its own snmpsim process,
// so that it can be silenced), the responder at 127.0.32.2 (another process, same port) with the
// printer's serial, model and MAC but a page counter of 5 and a description of its own.
// Nothing leaves 127.0.0.0/8 (allowed_ranges).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { startAgent, expectJson, expectTextError, type Agent } from '../helpers/agent.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, writeMovedCounters, type SnmpSim } from '../helpers/snmpsim.js';

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

const post = (path: string, body: unknown) =>
  agent.request(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });

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
  expectJson(await post('/settings', { discovery: { ranges_text: ranges } }));
  const started = expectJson(await post('/discover', {}), 202) as any;
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
    await post('/settings', {
      discovery: { subnet_scan: false, manual_ranges: true, ranges_text: PRINTER, allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 800, discover_concurrency: 4 },
      snmp: { port, communities: ['public'] },
    }),
  );
  // The printer, found where it is and saved: its history starts at 120,000 pages.
  const s = await scanOnce(PRINTER);
  assert.equal(s.found, 1);
  expectJson(await post('/devices/save', { serial: SERIAL }));
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
  const polled = expectJson(await post('/devices/metrics/collect', { serial: SERIAL })) as any;
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
  expectTextError(await post('/devices/metrics/collect', { serial: SERIAL }), 504, `device ${SERIAL} did not answer at ${PRINTER}`);
  const polled = await device();
  assert.equal(polled.ip, PRINTER);
  assert.ok(polled.status_messages.some((m: string) => m.startsWith('not responding')));
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
  const r = await post('/devices/metrics/collect', { serial: SERIAL });
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

  expectTextError(await post('/devices/confirm-counter', { serial: 'NOSUCH' }), 404, 'no device with serial "NOSUCH"');
  expectTextError(await post('/devices/confirm-counter', {}), 400, 'missing field serial');
  const accepted = expectJson(await post('/devices/confirm-counter', { serial: SERIAL })) as any;
  assert.equal(accepted.raw_data.counter_flag, undefined);
  assert.ok(!(accepted.status_messages ?? []).some((m: string) => m.startsWith('page counter went down')));
  assert.equal(await latestPages(), 7532);
  expectTextError(await post('/devices/confirm-counter', { serial: SERIAL }), 409, `device ${SERIAL} has no flagged page counter`);
  // From the accepted count on, readings are stored again.
  const next = expectJson(await post('/devices/metrics/collect', { serial: SERIAL })) as any;
  assert.equal(next.page_count, 7532);
});

test('(c) a person confirms the move: the record moves to the address they saw, and only then', { skip: skip ?? false }, async () => {
  const d = await device();
  assert.equal(d.raw_data.pending_move.ip, RESPONDER, 'still pending from the rounds before');
  expectTextError(await post('/devices/confirm-move', { serial: SERIAL }), 400, 'missing field ip');
  expectTextError(await post('/devices/confirm-move', { serial: 'NOSUCH', ip: RESPONDER }), 404, 'no device with serial "NOSUCH"');
  expectTextError(await post('/devices/confirm-move', { serial: SERIAL, ip: '127.0.32.9' }), 409, `device ${SERIAL}'s pending move is to ${RESPONDER}, not 127.0.32.9`);
  assert.equal((await device()).ip, PRINTER, 'a refused confirmation changes nothing');
  const moved = expectJson(await post('/devices/confirm-move', { serial: SERIAL, ip: RESPONDER })) as any;
  assert.equal(moved.ip, RESPONDER);
  assert.equal(moved.raw_data?.pending_move, undefined);
  assert.ok(!(moved.status_messages ?? []).some((m: string) => m.startsWith('address move pending')));
  assert.equal((await device()).ip, RESPONDER);
  expectTextError(await post('/devices/confirm-move', { serial: SERIAL, ip: RESPONDER }), 409, `device ${SERIAL} has no pending move`);
  // Polls now read the new address. Its counter (5) is below the stored one: flagged, not stored.
  const r = await post('/devices/metrics/collect', { serial: SERIAL });
  assert.equal(r.status, 409, r.body);
  assert.match(r.body, new RegExp(`^page counter went down: 5 read at ${RESPONDER.replaceAll('.', '\\.')}`));
  assert.ok(!(await pageCounts()).includes(5));
});
