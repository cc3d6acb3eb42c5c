// No reading is lost to a full card (the storage guard): a real printer (snmpsim on
// loopback) is read by the discovery service into a database on a real, full file system (tmpfs).
// The write fails with SQLITE_FULL; the reading is kept by the storage guard, the caller is told it
// is not stored, and once there is room the guard writes it, with its own time and meters. The same
// when another process holds the database past busy_timeout (the CLI's import).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { openDatabase } from '../../../src/store/db.js';
import { DeviceStore, type Reading } from '../../../src/store/devices.js';
import { MAX_PENDING_READINGS, StorageGuard, storageProblem } from '../../../src/store/storage-guard.js';
import { DiscoveryService, ReadingsKeptError } from '../../../src/discovery/service.js';
import { SettingsStore } from '../../../src/settings/store.js';
import { EventBus } from '../../../src/events/bus.js';
import { cannotMount, fill, mountCard, unfill, unmountCards } from '../../kit/card.js';
import { fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';

const PRINTER = { address: '127.0.9.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943', pages: 7432 };
const log = pino({ level: 'silent' });

test('storage errors are told apart from other errors by their code', () => {
  assert.equal(storageProblem(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })), 'full');
  assert.equal(storageProblem({ code: 'SQLITE_IOERR_SHMSIZE' }), 'full');
  assert.equal(storageProblem({ code: 'ENOSPC' }), 'full');
  assert.equal(storageProblem({ code: 'SQLITE_READONLY' }), 'read_only');
  assert.equal(storageProblem({ code: 'EROFS' }), 'read_only');
  assert.equal(storageProblem({ code: 'SQLITE_IOERR_WRITE' }), 'io_error');
  assert.equal(storageProblem({ code: 'SQLITE_CONSTRAINT_UNIQUE' }), undefined);
  assert.equal(storageProblem(new Error('no code')), undefined);
});

test('at most MAX_PENDING_READINGS readings wait in memory; the oldest go first, with a warning', () => {
  const warnings: unknown[] = [];
  const guard = new StorageGuard({
    dataDir: '/nonexistent',
    reserveBytes: 0,
    log: { ...log, warn: (o: unknown) => warnings.push(o), info() {}, error() {} } as unknown as typeof log,
    events: new EventBus(),
    writeReadings: () => undefined,
    probe: () => undefined,
    makeRoom: async () => ({}),
  });
  const reading = (ts: number): Reading => ({ device: {} as Reading['device'], snapshot: { serial: 'X', ts } as Reading['snapshot'] });
  guard.keep(Array.from({ length: MAX_PENDING_READINGS }, (_, i) => reading(i)));
  assert.equal(guard.status().pending_readings, MAX_PENDING_READINGS);
  assert.equal(warnings.length, 0);
  guard.keep([reading(MAX_PENDING_READINGS), reading(MAX_PENDING_READINGS + 1)]);
  assert.equal(guard.status().pending_readings, MAX_PENDING_READINGS);
  assert.equal(warnings.length, 1);
  assert.deepEqual((warnings[0] as { dropped: number }).dropped, 2);
});

let sim: SnmpSim;
before(async () => {
  sim = await startSnmpSim({ endpoints: [{ address: PRINTER.address, recording: fixturePath(PRINTER.file) }] });
});
after(async () => {
  await sim?.stop();
  unmountCards();
});

/** A database in `dir`, the discovery service with a storage guard, and the printer already found by a scan. */
async function setUp(dir: string) {
  const db = openDatabase(join(dir, 'printbox.db'));
  const devices = new DeviceStore(db);
  const events = new EventBus();
  const settings = new SettingsStore(db, { subnet_scan: false, auto_discover: false, allowed_ranges: [] });
  settings.update({
    snmp: { port: sim.port, communities: [sim.community] },
    discovery: { snmp_timeout_ms: 2000, manual_ranges: true, ranges_text: PRINTER.address },
  });
  const guard = new StorageGuard({
    dataDir: dir,
    reserveBytes: 0,
    log,
    events,
    writeReadings: (r) => devices.recordReadings(r),
    probe: () => undefined,
    makeRoom: async () => ({}),
  });
  const statuses: string[] = [];
  events.subscribe((name, data) => name === 'storage_status' && statuses.push((data as { state: string }).state));
  const discovery = new DiscoveryService({ devices, settings, events, log, now: Date.now, storage: guard });
  discovery.start();
  await discovery.settle();
  assert.ok(devices.get(PRINTER.serial), 'the printer was found');
  return { db, guard, discovery, statuses };
}

async function waitNoPending(guard: StorageGuard): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (guard.status().pending_readings > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  assert.equal(guard.status().pending_readings, 0, 'the kept reading was written');
}

test('a poll while another process holds the database (an import): the reading is kept and stored soon after', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-busy-'));
  const { db, guard, discovery, statuses } = await setUp(dir);
  const other = new Database(join(dir, 'printbox.db'));
  try {
    other.exec('BEGIN IMMEDIATE'); // as `printbox-agent import` holds it for the whole file
    const t0 = Date.now();
    await assert.rejects(discovery.collect(PRINTER.serial), (err: unknown) => {
      assert.ok(err instanceof ReadingsKeptError, String(err));
      assert.equal((err as ReadingsKeptError).code, 'SQLITE_BUSY');
      return true;
    });
    assert.equal(guard.status().pending_readings, 1);
    assert.equal(guard.status().state, 'ok', 'a busy database is not a storage failure');
    other.exec('COMMIT');
    await waitNoPending(guard);
    const row = db.prepare('SELECT ts, page_count FROM metrics_raw ORDER BY id DESC LIMIT 1').get() as { ts: number; page_count: number };
    assert.ok(row.ts >= t0);
    assert.equal(row.page_count, PRINTER.pages);
    assert.deepEqual(statuses.filter((s) => s !== 'ok'), []);
  } finally {
    guard.stop();
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('a poll on a full card', { skip: cannotMount }, () => {
  test('the reading is kept, the caller told, and it is stored once there is room', async () => {
    const dir = mountCard(16);
    const { db, guard, discovery, statuses } = await setUp(dir);
    const rowsBefore = db.prepare('SELECT count(*) FROM metrics_raw').pluck().get() as number;

    fill(dir);
    const t0 = Date.now();
    await assert.rejects(discovery.collect(PRINTER.serial), (err: unknown) => {
      assert.ok(err instanceof ReadingsKeptError, String(err));
      assert.match(err.message, /1 reading\(s\) taken but not stored yet: database or disk is full/);
      assert.equal(storageProblem(err), 'full');
      return true;
    });
    assert.equal(guard.status().state, 'full');
    assert.equal(guard.status().pending_readings, 1);
    assert.equal(db.prepare('SELECT count(*) FROM metrics_raw').pluck().get(), rowsBefore, 'nothing half-written');

    guard.start();
    try {
      unfill(dir);
      await waitNoPending(guard);
      assert.equal(guard.status().state, 'ok');
      const row = db.prepare('SELECT ts, page_count FROM metrics_raw ORDER BY id DESC LIMIT 1').get() as { ts: number; page_count: number };
      assert.ok(row.ts >= t0, 'stored with the time it was taken');
      assert.equal(row.page_count, PRINTER.pages);
      assert.deepEqual(statuses.filter((s, i) => s !== statuses[i - 1]).slice(0, 2), ['full', 'ok']);
    } finally {
      guard.stop();
      db.close();
    }
  });
});
