// The store's write path (few writes, for the flash card's wear) and read plans (a history or
// bounds request never scans more rows than its answer needs). Real SQLite files in a temp dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type DB } from '../../../src/store/db.js';
import { MetricsStore } from '../../../src/store/metrics.js';
import { DeviceStore, RECORD_REFRESH_MS, type Reading } from '../../../src/store/devices.js';
import type { Device } from '../../../src/model/device.js';
import { lttb } from '../../../src/api/lttb.js';
import { BOUND_SERIAL } from '../../../src/store/bound.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

function withDb(fn: (db: DB) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-writes-'));
  const db = openDatabase(join(dir, 'w.db'));
  try {
    fn(db);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const device = (serial: string, ts: number, extra: Partial<Device> = {}): Device => ({
  serial, ip: '127.0.0.9', last_seen: ts, created_at: ts, first_seen: ts, device_type: 'network', source_type: 'snmp',
  is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
  printer_info: { page_count: 0 }, ...extra,
});

const reading = (d: Device, ts: number, page: number): Reading => ({
  device: { ...d, last_seen: ts, printer_info: { page_count: page } },
  snapshot: { serial: d.serial, ts, page_count: page },
});

const storedRecord = (db: DB, serial: string) =>
  db.prepare('SELECT last_seen, printer_info, status_messages FROM devices WHERE serial = ?').get(serial) as {
    last_seen: number; printer_info: string; status_messages: string | null;
  };

test('a poll round stores every snapshot but rewrites a record only when its content changed or RECORD_REFRESH_MS passed', () => {
  withDb((db) => {
    const devices = new DeviceStore(db);
    const metrics = new MetricsStore(db);
    const d = device('S1', NOW);
    devices.put(d);
    const t1 = NOW + 15 * 60_000;
    const [id1] = devices.recordReadings([reading(d, t1, 100)]);
    // Only meters and the time moved: the record stays, the time is served from the snapshot.
    assert.equal(storedRecord(db, 'S1').last_seen, NOW);
    assert.equal(JSON.parse(storedRecord(db, 'S1').printer_info).page_count, 0);
    assert.equal(devices.get('S1')!.last_seen, t1);
    assert.equal(metrics.latestRaw('S1')!.id, id1);
    assert.equal(metrics.latestRaw('S1')!.page_count, 100);

    // A status change is content: written at once, with the fresh PrinterInfo.
    const t2 = t1 + 15 * 60_000;
    devices.recordReadings([{ ...reading(d, t2, 110), device: { ...reading(d, t2, 110).device, status_messages: ['toner low'] } }]);
    assert.deepEqual(JSON.parse(storedRecord(db, 'S1').status_messages!), ['toner low']);
    assert.equal(storedRecord(db, 'S1').last_seen, t2);
    assert.equal(JSON.parse(storedRecord(db, 'S1').printer_info).page_count, 110);

    // Same content RECORD_REFRESH_MS later: refreshed once, so a stored PrinterInfo is never older.
    const changed = { ...d, status_messages: ['toner low'] };
    const t3 = t2 + RECORD_REFRESH_MS - 1;
    devices.recordReadings([reading(changed, t3, 120)]);
    assert.equal(storedRecord(db, 'S1').last_seen, t2);
    const t4 = t2 + RECORD_REFRESH_MS;
    devices.recordReadings([reading(changed, t4, 130)]);
    assert.equal(storedRecord(db, 'S1').last_seen, t4);
    assert.equal(metrics.history('S1', NOW, t4, t4).length, 4);
  });
});

test('last_seen from the newest snapshot drives the /devices/discovered minutes filter', () => {
  withDb((db) => {
    const devices = new DeviceStore(db);
    const d = device('S2', NOW - 2 * HOUR, { is_saved: false });
    devices.put(d);
    assert.deepEqual(devices.listDiscovered({ includeKnown: false, seenSince: NOW - HOUR }).map((x) => x.serial), []);
    devices.recordReadings([reading(d, NOW - 10 * 60_000, 5)]);
    assert.deepEqual(devices.listDiscovered({ includeKnown: false, seenSince: NOW - HOUR }).map((x) => x.serial), ['S2']);
    // An older snapshot (an import) never moves last_seen or the newest reading back.
    new MetricsStore(db).insertRaw({ serial: 'S2', ts: NOW - 5 * HOUR, page_count: 1 });
    assert.equal(devices.get('S2')!.last_seen, NOW - 10 * 60_000);
    assert.equal(new MetricsStore(db).latestRaw('S2')!.page_count, 5);
  });
});

// Migration 7: one raw reading per device and millisecond. The poll keeps the first (stored rows
// never change) and says so; the import learns it was not stored.
test('a second reading of a device in the same millisecond is not stored: the first stays and its id is returned', () => {
  withDb((db) => {
    const heard: [string, number, number][] = [];
    const devices = new DeviceStore(db, { onDuplicateReading: (s, id) => heard.push([s.serial, s.ts, id]) });
    const metrics = new MetricsStore(db);
    const d = device('D1', NOW);
    devices.put(d);
    const [first] = devices.recordReadings([reading(d, NOW + 1, 100)]);
    const [second] = devices.recordReadings([reading(d, NOW + 1, 999)]);
    assert.equal(second, first);
    assert.deepEqual(heard, [['D1', NOW + 1, first]]);
    assert.equal(metrics.latestRaw('D1')!.page_count, 100);
    assert.equal(metrics.bounds('D1')!.points, 1);
    assert.equal(metrics.insertRawIfNew({ serial: 'D1', ts: NOW + 1, page_count: 5 }), undefined);
    assert.equal(metrics.latestRaw('D1')!.id, first);
    // Another device at that millisecond, and this one a millisecond later, are new readings.
    assert.equal(typeof metrics.insertRawIfNew({ serial: 'D2', ts: NOW + 1, page_count: 5 }), 'number');
    const next = metrics.insertRawIfNew({ serial: 'D1', ts: NOW + 2, page_count: 101 });
    assert.equal(metrics.latestRaw('D1')!.id, next);
    assert.equal(heard.length, 1);
  });
});

test('raw reads are the same through bucket seeks and through the scan used for a long span', () => {
  withDb((db) => {
    const devices = new DeviceStore(db);
    const metrics = new MetricsStore(db);
    devices.put(device('A', NOW));
    devices.put(device('B', NOW));
    // Recent rows of two devices, then (second half) one raw row of A 100 days old, as an import
    // leaves it before any roll-up: the span exceeds the seek limit and the scan variant answers.
    for (let h = 0; h < 48; h++) {
      metrics.insertRaw({ serial: 'A', ts: NOW - h * HOUR, page_count: 1000 - h });
      metrics.insertRaw({ serial: 'B', ts: NOW - h * HOUR - 1, page_count: 5000 - h });
    }
    const check = () => {
      const rows = metrics.history('A', NOW - DAY, NOW, NOW);
      assert.equal(rows.length, 25);
      assert.ok(rows.every((r) => r.serial === 'A'));
      assert.deepEqual(rows.map((r) => r.ts), [...rows.map((r) => r.ts)].sort((a, b) => a - b));
      assert.equal(rows[0].ts, NOW - DAY);
      assert.equal(rows.at(-1)!.ts, NOW);
    };
    check();
    assert.deepEqual(metrics.bounds('A'), { min: NOW - 47 * HOUR, max: NOW, points: 48 });
    metrics.insertRaw({ serial: 'A', ts: NOW - 100 * DAY, page_count: 1 });
    check();
    assert.deepEqual(metrics.bounds('A'), { min: NOW - 100 * DAY, max: NOW, points: 49 });
    assert.equal(metrics.bounds('B')!.points, 48);
    // Delete takes every row of A, in every part of the span, and nothing of B.
    assert.equal(devices.delete('A'), true);
    assert.equal(metrics.bounds('A'), undefined);
    assert.equal(metrics.latestRaw('A'), undefined);
    assert.equal(db.prepare("SELECT count(*) FROM device_latest WHERE serial = 'A'").pluck().get(), 0);
    assert.equal(metrics.bounds('B')!.points, 48);
  });
});

// historySampled reads page_count first and only the kept rows whole: it must return exactly what
// downsampling every row returns (docs/decisions/0006-history-downsampling.md: rows never reordered
// or altered), across all tiers, with missing page counts (y = 0), and another device's rows
// interleaved at the same timestamps.
test('downsampled history returns the same rows as downsampling the whole history', () => {
  withDb((db) => {
    const metrics = new MetricsStore(db);
    for (let t = NOW - 7 * DAY + 15 * 60_000; t <= NOW; t += 15 * 60_000) {
      const wobble = Math.round(Math.sin(t / HOUR) * 50);
      metrics.insertRaw({ serial: 'A', ts: t, ...(t % (5 * HOUR) === 0 ? {} : { page_count: t / 60_000 + wobble }), toner_levels: { black: 50 } });
      metrics.insertRaw({ serial: 'B', ts: t, page_count: 7 });
    }
    const agg = (ts: number, max: number | null) => ({
      serial: 'A', ts, sample_count: 4, counters: max === null ? {} : { page_count: { min: max - (ts % 9973), max, avg: max - 4 } },
      toner_last: { black: 40 },
    });
    for (let t = NOW - 30 * DAY; t <= NOW - 7 * DAY; t += HOUR) metrics.upsertAggregate('hourly', agg(t, t % (7 * HOUR) ? t / 60_000 : null));
    for (let t = NOW - 365 * DAY; t <= NOW - 30 * DAY; t += DAY) metrics.upsertAggregate('daily', agg(t, (t / 60_000) % 9973));
    for (let m = 0; m < 30; m++) metrics.upsertAggregate('monthly', agg(Date.UTC(2023, m, 1), m * 1000));
    const ranges = [
      [NOW - 400 * DAY, NOW], [NOW - 365 * DAY, NOW], [NOW - 31 * DAY, NOW - 6 * DAY], [NOW - DAY, NOW], [NOW + 1, NOW + DAY],
    ];
    for (const [since, until] of ranges) {
      const all = metrics.history('A', since, until, NOW);
      for (const k of [2, 3, 10, 200, 5000]) {
        const sampled = metrics.historySampled('A', since, until, NOW, (points) => lttb(points, k));
        assert.deepEqual(sampled, lttb(all, k), `[${since}, ${until}] maxPoints ${k}`);
      }
    }
    assert.ok(metrics.history('A', NOW - 400 * DAY, NOW, NOW).length > 1000, 'the long range spans every tier with rows to drop');
  });
});

/** Records the SQL of every statement `db` prepares until `prepare` is put back; `prepare` is the real one. */
function capturePrepared(db: DB): { sql: string[]; prepare: DB['prepare'] } {
  const sql: string[] = [];
  const prepare = db.prepare.bind(db);
  (db as unknown as { prepare: (s: string) => unknown }).prepare = (s: string) => {
    sql.push(s);
    return prepare(s);
  };
  return { sql, prepare };
}

// Every statement the metrics store prepares that reads one device's rows must reach them through
// an index (SEARCH), never by walking a whole metrics table (SCAN), except the declared fallback for
// raw spans beyond the seek limit.
test('EXPLAIN QUERY PLAN: history, bounds and latest search indexes, never scan a metrics table', () => {
  withDb((db) => {
    const { sql, prepare } = capturePrepared(db);
    // export: each tier's iterator prepares its statement on first use
    const store = new MetricsStore(db);
    for (const t of ['raw', 'hourly', 'daily', 'monthly'] as const) store.iterateTier(t).next();
    (db as unknown as { prepare: unknown }).prepare = prepare;
    // Export streams every tier through an index: no sort that would hold a tier in memory.
    const exports = sql.filter((q) => /^SELECT \* FROM metrics_\w+ ORDER BY/.test(q));
    assert.equal(exports.length, 4, exports.join('\n'));
    for (const q of exports) {
      const details = (prepare(`EXPLAIN QUERY PLAN ${q}`).all() as { detail: string }[]).map((p) => p.detail);
      assert.ok(!details.some((d) => d.includes('TEMP B-TREE')), `${q}\n${details.join('\n')}`);
    }
    const reads = sql.filter((s) => /^\s*SELECT/.test(s) && /serial = (\?|@serial|CAST\(\? AS TEXT\))/.test(s) && !/NOT INDEXED/.test(s));
    // per tier: its rows in a range (history), their page counts (downsampling), their supply
    // levels (forecast), their page counters (pages per period), their bounds, their ids (delete);
    // raw also the row a duplicate reading found stored; and the newest snapshot
    for (const t of ['metrics_raw', 'metrics_hourly', 'metrics_daily', 'metrics_monthly']) {
      assert.equal(reads.filter((q) => q.includes(`FROM ${t} `)).length, t === 'metrics_raw' ? 7 : 6, `${t}:\n${reads.join('\n---\n')}`);
    }
    assert.equal(reads.filter((q) => q.includes('FROM device_latest')).length, 1);
    for (const s of reads) {
      const params = { serial: 'X', lo: 0, hi: NOW, buckets: '[1,2,3]', ts: NOW };
      const stmt = prepare(`EXPLAIN QUERY PLAN ${s}`);
      const plan = (s.includes('@') ? stmt.all(params) : stmt.all('X')) as { detail: string }[];
      const details = plan.map((p) => p.detail);
      const scans = details.filter((d) => /^SCAN (metrics_|device_latest|r\b|l\b)/.test(d));
      assert.deepEqual(scans, [], `${s}\n${details.join('\n')}`);
      assert.ok(details.some((d) => /^SEARCH .*USING (COVERING )?INDEX|PRIMARY KEY/.test(d)), `${s}\n${details.join('\n')}`);
    }
    // downsampling's input from raw (the most rows) comes from the key alone (migration 5), and
    // daily's (a row a day among all devices': as many table pages as rows) from its second key
    // (migration 13)
    for (const [t, index] of [['metrics_raw', 'metrics_raw_bucket'], ['metrics_daily', 'metrics_daily_points']]) {
      const points = reads.find((q) => q.startsWith(`SELECT id, ${t === 'metrics_raw' ? 'page_count' : 'page_count_max'} FROM ${t} INDEXED BY`))!;
      const plan = (prepare(`EXPLAIN QUERY PLAN ${points}`).all({ serial: 'X', lo: 0, hi: NOW, buckets: '[1]' }) as { detail: string }[]);
      assert.ok(plan.some((p) => p.detail.startsWith(`SEARCH ${t} USING COVERING INDEX ${index}`)), plan.map((p) => p.detail).join('\n'));
    }
    // a forecast's levels (three columns) through each bucketed tier's key, never a scan
    for (const t of ['metrics_raw', 'metrics_hourly', 'metrics_daily']) {
      const q = reads.find((r) => r.startsWith(`SELECT ts, ${t === 'metrics_raw' ? 'page_count, toner_levels' : 'page_count_max, toner_last'} FROM ${t} INDEXED BY`))!;
      assert.ok(q, `${t}: the supply read`);
      const plan = (prepare(`EXPLAIN QUERY PLAN ${q}`).all({ serial: 'X', lo: 0, hi: NOW, buckets: '[1]' }) as { detail: string }[]).map((p) => p.detail);
      assert.ok(plan.some((d) => d.startsWith(`SEARCH ${t} USING INDEX ${t}_bucket`)), `${q}\n${plan.join('\n')}`);
    }
    // the rows downsampling kept, read whole by id: one rowid lookup each
    const byIds = sql.filter((q) => /WHERE id IN \(SELECT value FROM json_each/.test(q));
    assert.equal(byIds.length, 4, byIds.join('\n'));
    for (const s of byIds) {
      const details = (prepare(`EXPLAIN QUERY PLAN ${s}`).all('[1,2]') as { detail: string }[]).map((p) => p.detail);
      assert.ok(details.some((d) => /^SEARCH metrics_\w+ USING INTEGER PRIMARY KEY \(rowid=\?\)/.test(d)), `${s}\n${details.join('\n')}`);
      assert.ok(!details.some((d) => /^SCAN metrics_/.test(d)), `${s}\n${details.join('\n')}`);
    }
  });
});

test('supplyHistory: each tier inside its window, three columns, oldest first', () => {
  withDb((db) => {
    const store = new MetricsStore(db);
    const agg = (ts: number, black: number) => ({ serial: 'S', ts, sample_count: 1, counters: { page_count: { min: 1, max: ts / HOUR, avg: 1 } }, toner_last: { black }, toner_avg: { black: 0 } });
    store.upsertAggregate('daily', agg(NOW - 100 * DAY, 99)); // older than the 90 days asked
    store.upsertAggregate('daily', agg(NOW - 60 * DAY, 80));
    store.upsertAggregate('daily', agg(NOW - 10 * DAY, 1)); // inside hourly's window: hourly serves it
    store.upsertAggregate('hourly', agg(NOW - 10 * DAY, 70));
    store.upsertAggregate('hourly', agg(NOW - 2 * DAY, 2)); // inside raw's window: raw serves it
    store.insertRaw({ serial: 'S', ts: NOW - DAY, page_count: 5, toner_levels: { black: 60 } });
    store.insertRaw({ serial: 'T', ts: NOW - DAY, page_count: 5, toner_levels: { black: 10 } });
    assert.deepEqual(store.supplyHistory('S', NOW - 90 * DAY, NOW, NOW), [
      { ts: NOW - 60 * DAY, page_count: (NOW - 60 * DAY) / HOUR, toner_levels: { black: 80 } },
      { ts: NOW - 10 * DAY, page_count: (NOW - 10 * DAY) / HOUR, toner_levels: { black: 70 } },
      { ts: NOW - DAY, page_count: 5, toner_levels: { black: 60 } },
    ]);
  });
});

// A joined statement that compares a column with a bare bound parameter is prepared again by
// SQLite at every call (constant propagation; src/store/bound.ts): 85 against 13 µs for a device.
// Every joined statement the device and metrics stores prepare binds its serial as BOUND_SERIAL.
test('joined statements of the stores never compare a column with a bare bound parameter', () => {
  withDb((db) => {
    const { sql, prepare } = capturePrepared(db);
    const store = new DeviceStore(db);
    store.get('A');
    store.latestPageCount('A');
    store.listSaved();
    (db as unknown as { prepare: unknown }).prepare = prepare;
    const joined = sql.filter((s) => /\bJOIN\b/.test(s));
    assert.ok(joined.some((s) => s.includes(`serial = ${BOUND_SERIAL}`)), joined.join('\n---\n'));
    for (const s of joined) assert.doesNotMatch(s, /=\s*(\?|[@:$]\w+)(?!\w)/, s);
  });
});
