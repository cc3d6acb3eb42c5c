// A polling round is written in batches (a round of 2,000 printers once held every reading
// until one transaction, and the agent's RSS grew with the fleet). Real printers (snmpsim on
// loopback) are read by the discovery service into a real database: a round in batches stores
// every reading, and a process killed mid-round keeps the batches it had written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore, type Reading } from '../../../src/store/devices.js';
import { SettingsStore } from '../../../src/settings/store.js';
import { EventBus } from '../../../src/events/bus.js';
import { DiscoveryService, ROUND_BATCH } from '../../../src/discovery/service.js';
import type { Device } from '../../../src/model/device.js';
import { parsePrinter } from '../../../src/snmp/parse/printer.js';
import { fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { readSnmprec } from '../../kit/snmprec.js';

const here = dirname(fileURLToPath(import.meta.url));
const log = pino({ level: 'silent' });
const SILENT_IP = '127.0.35.99'; // nothing listens there: a saved printer that does not answer

/** Four real recordings, each with a serial of its own, on 127.0.35.1-4, in serial order (the order a round reads them). */
function printers(): { ip: string; recording: string; serial: string }[] {
  const dir = fixturePath('printmaster');
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.snmprec'))
    .sort()
    .map((f) => ({ recording: join(dir, f), serial: parsePrinter(readSnmprec(join(dir, f)), '127.0.0.1', new Date()).serial ?? '' }));
  // Some recordings carry a placeholder ("serial_number") shared with others: only serials seen once.
  const once = all.filter((p) => p.serial !== '' && all.filter((q) => q.serial === p.serial).length === 1);
  const found = once.slice(0, 4).sort((a, b) => (a.serial < b.serial ? -1 : 1));
  assert.equal(found.length, 4, 'four recordings with a serial of their own');
  return found.map((p, i) => ({ ...p, ip: `127.0.35.${i + 1}` }));
}

const PRINTERS = printers();
let sim: SnmpSim;
before(async () => {
  sim = await startSnmpSim({ endpoints: PRINTERS.map((p) => ({ address: p.ip, recording: p.recording })) });
});
after(async () => {
  await sim?.stop();
});

const saved = (serial: string, ip: string): Device => {
  const t = Date.now() - 3_600_000;
  return {
    serial, ip, last_seen: t, created_at: t, first_seen: t, device_type: 'network', source_type: 'snmp',
    is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
    printer_info: {},
  } as Device;
};

test('a round in batches stores every reading, each batch in its own transaction, with its events', async () => {
  assert.ok(ROUND_BATCH >= 100 && ROUND_BATCH <= 1000, `the agent's batch (${ROUND_BATCH}) bounds a round's memory without a commit per few readings`);
  const dir = mkdtempSync(join(tmpdir(), 'printbox-round-batches-'));
  const db = openDatabase(join(dir, 'printbox.db'));
  try {
    const devices = new DeviceStore(db);
    for (const p of PRINTERS) devices.put(saved(p.serial, p.ip));
    const settings = new SettingsStore(db, { subnet_scan: false, auto_discover: false, allowed_ranges: [] });
    settings.update({ snmp: { port: sim.port, communities: [sim.community] }, discovery: { snmp_timeout_ms: 3000 } });
    // Each transaction's readings, as the store is asked to write them.
    const writes: string[][] = [];
    const recordReadings = devices.recordReadings.bind(devices);
    devices.recordReadings = (readings: Reading[]) => {
      writes.push(readings.map((r) => r.snapshot.serial));
      return recordReadings(readings);
    };
    const events = new EventBus();
    const metricsEvents: string[] = [];
    events.subscribe((name, data) => {
      const d = data as { serial: string; change: string };
      if (name === 'device_change' && d.change === 'metrics') metricsEvents.push(d.serial);
    });
    const discovery = new DiscoveryService({ devices, settings, events, log, now: Date.now, roundBatch: 3 });
    const snaps = await discovery.collectSaved();

    const serials = PRINTERS.map((p) => p.serial);
    assert.deepEqual(writes.map((w) => w.length), [3, 1], 'four readings: a full batch of 3, then the rest');
    assert.deepEqual(writes.flat().sort(), serials, 'each printer written once');
    assert.deepEqual(snaps.map((s) => s.serial).sort(), serials, 'the round answers every snapshot');
    assert.ok(snaps.every((s) => typeof s.id === 'number' && s.page_count! > 0), 'stored snapshots, with their meters');
    assert.deepEqual(metricsEvents.sort(), serials, 'one metrics event a stored reading');
    for (const p of PRINTERS) {
      assert.equal(db.prepare('SELECT count(*) FROM metrics_raw WHERE serial = ?').pluck().get(p.serial), 1, `${p.serial} has its reading`);
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a process killed mid-round keeps the batches it had written; the database is whole', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-round-crash-'));
  const file = join(dir, 'printbox.db');
  // Read one at a time in serial order: two answer (a batch of 2, written), then a silent one
  // holds the round for its whole timeout, then the last two (never read).
  const silent = `${PRINTERS[1].serial}~`; // sorts right after the second printer
  const setup = openDatabase(file);
  const devices = new DeviceStore(setup);
  for (const p of PRINTERS) devices.put(saved(p.serial, p.ip));
  devices.put(saved(silent, SILENT_IP));
  setup.close();

  const child = spawn(process.execPath, [join(here, 'round-crash-child.js'), file, String(sim.port), sim.community, '60000'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
  const watch = new Database(file, { readonly: true });
  try {
    const rows = () => watch.prepare('SELECT serial FROM metrics_raw ORDER BY serial').pluck().all() as string[];
    const deadline = Date.now() + 50_000;
    while (rows().length < 2 && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(rows(), [PRINTERS[0].serial, PRINTERS[1].serial], 'the first batch is written while the round waits on the silent printer');
    assert.equal(child.exitCode, null, 'the round is still under way');
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    assert.equal(out, '', 'killed before the round ended');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    watch.close();
  }
  const db = openDatabase(file);
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.deepEqual(db.prepare('SELECT serial FROM metrics_raw ORDER BY serial').pluck().all(), [PRINTERS[0].serial, PRINTERS[1].serial], 'the written batch survives the kill; nothing of the rest');
    assert.deepEqual(db.prepare('SELECT serial FROM device_latest ORDER BY serial').pluck().all(), [PRINTERS[0].serial, PRINTERS[1].serial]);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
