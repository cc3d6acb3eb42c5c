import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../src/store/db.js';
import { latestVersion, migrations } from '../../../src/store/migrations.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'printbox-mig-'));

test('a new database migrates to the latest version with WAL, FULL sync and a 2 MiB page cache', () => {
  const dir = tmp();
  try {
    const db = openDatabase(join(dir, 'a.db'));
    assert.equal(db.pragma('user_version', { simple: true }), latestVersion);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('synchronous', { simple: true }), 2); // FULL
    assert.equal(db.pragma('auto_vacuum', { simple: true }), 2); // INCREMENTAL
    db.close();
    // Every connection, read-only ones too, caps its page cache at 2 MiB (a Pi's memory).
    for (const readonly of [false, true]) {
      const c = openDatabase(join(dir, 'a.db'), { readonly });
      assert.equal(c.pragma('cache_size', { simple: true }), -2000, `readonly: ${readonly}`);
      c.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('versions are consecutive from 1', () => {
  migrations.forEach((m, i) => assert.equal(m.version, i + 1));
});

// From every earlier version that has tables (1 .. latest-1), with data in it: the upgrade keeps
// every row. Version 0 (an empty file) is the first test.
for (let from = 1; from <= latestVersion; from++) {
  test(`migrating from version ${from} keeps devices and metrics`, () => {
    const dir = tmp();
    const file = join(dir, 'm.db');
    try {
      const old = openDatabase(file, { migrateTo: from });
      assert.equal(old.pragma('user_version', { simple: true }), from);
      old.prepare(
        `INSERT INTO devices (serial, ip, last_seen, created_at, first_seen, device_type, source_type, is_saved, visible)
         VALUES ('S1', '127.0.0.9', 1, 1, 1, 'network', 'snmp', 1, 1)`,
      ).run();
      old.prepare(`INSERT INTO metrics_raw (serial, ts, page_count) VALUES ('S1', 1000, 42)`).run();
      old.prepare(`INSERT INTO metrics_monthly (serial, ts, sample_count, page_count_max) VALUES ('S1', 0, 3, 40)`).run();
      old.close();

      const db = openDatabase(file);
      assert.equal(db.pragma('user_version', { simple: true }), latestVersion);
      assert.deepEqual(db.prepare('SELECT serial, ip FROM devices').all(), [{ serial: 'S1', ip: '127.0.0.9' }]);
      assert.deepEqual(db.prepare('SELECT serial, ts, page_count FROM metrics_raw').all(), [{ serial: 'S1', ts: 1000, page_count: 42 }]);
      assert.equal((db.prepare('SELECT count(*) AS n FROM metrics_monthly').get() as { n: number }).n, 1);
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('migration 7: of each raw (serial, ts) held twice the first row stays, device_latest points at it; later copies are ignored', () => {
  const dir = tmp();
  const file = join(dir, 'd.db');
  const H = 3_600_000;
  try {
    const old = openDatabase(file, { migrateTo: 6 });
    const ins = old.prepare('INSERT INTO metrics_raw (serial, ts, page_count) VALUES (?, ?, ?)');
    // What importing a backup twice left (ids 1..7): A at 10h three times, A at 11h twice, B once,
    // and A a millisecond before the next hour once. device_latest noted the last copy of the
    // newest (an equal ts replaces it); C's newest row is gone (retention).
    const rows: [string, number, number][] = [
      ['A', 10 * H, 1], ['A', 10 * H, 2], ['B', 10 * H, 3], ['A', 11 * H, 4], ['A', 10 * H, 5], ['A', 11 * H, 6], ['A', 11 * H - 1, 7],
    ];
    for (const r of rows) ins.run(...r);
    old.exec(`INSERT INTO device_latest (serial, ts, raw_id) VALUES ('A', ${11 * H}, 6), ('B', ${10 * H}, 3), ('C', ${H}, 99)`);
    old.close();

    const db = openDatabase(file);
    assert.deepEqual(db.prepare('SELECT id, serial, ts, page_count FROM metrics_raw ORDER BY id').all(), [
      { id: 1, serial: 'A', ts: 10 * H, page_count: 1 },
      { id: 3, serial: 'B', ts: 10 * H, page_count: 3 },
      { id: 4, serial: 'A', ts: 11 * H, page_count: 4 },
      { id: 7, serial: 'A', ts: 11 * H - 1, page_count: 7 },
    ]);
    assert.deepEqual(db.prepare('SELECT serial, ts, raw_id FROM device_latest ORDER BY serial').all(), [
      { serial: 'A', ts: 11 * H, raw_id: 4 },
      { serial: 'B', ts: 10 * H, raw_id: 3 },
      { serial: 'C', ts: H, raw_id: 99 },
    ]);
    // At the latest version (whatever later migrations did to the table), any insert of a reading
    // a device already has is ignored, whichever way ts is bound; a new one is stored.
    const again = db.prepare('INSERT INTO metrics_raw (serial, ts, page_count) VALUES (?, ?, ?)');
    assert.equal(again.run('A', 11 * H, 9).changes, 0);
    assert.equal(again.run('A', 11 * H + 0.0, 9).changes, 0);
    assert.equal(db.prepare(`INSERT INTO metrics_raw (serial, ts) VALUES ('B', ${10 * H})`).run().changes, 0);
    assert.equal(again.run('A', 11 * H + 1, 9).changes, 1);
    assert.equal(again.run('B', 11 * H, 9).changes, 1);
    assert.equal(db.prepare('SELECT count(*) FROM metrics_raw').pluck().get(), 6);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('migration 16: accounts made before roles become admins; a role other than admin or viewer is refused', () => {
  const dir = tmp();
  const file = join(dir, 'r.db');
  try {
    const old = openDatabase(file, { migrateTo: 15 });
    old.prepare("INSERT INTO accounts (username, password_hash, created_at, updated_at) VALUES ('tech', 'scrypt$x', 1, 1), ('office', 'scrypt$y', 2, 2)").run();
    old.close();
    const db = openDatabase(file);
    assert.deepEqual(db.prepare('SELECT username, role FROM accounts ORDER BY username').all(), [
      { username: 'office', role: 'admin' },
      { username: 'tech', role: 'admin' },
    ]);
    assert.throws(() => db.prepare("UPDATE accounts SET role = 'owner' WHERE username = 'tech'").run(), /CHECK constraint failed/);
    db.prepare("UPDATE accounts SET role = 'viewer' WHERE username = 'office'").run();
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a database from a newer agent is refused, not rewritten', () => {
  const dir = tmp();
  const file = join(dir, 'n.db');
  try {
    const db = openDatabase(file);
    db.pragma(`user_version = ${latestVersion + 1}`);
    db.close();
    assert.throws(() => openDatabase(file), /newer than this agent supports/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
