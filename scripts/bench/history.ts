// Meter history benchmark. See scripts/bench/README, section "history".
//
//   node dist/scripts/bench/history.js [--devices 500] [--days 730] [--cache /var/tmp/printbox-bench]
//        [--fresh] [--iterations 300] [--agent https://127.0.0.1:8443] [--gen-only] [--latency-only]
//        [--old-step-min 60] [--write-days 4] [--fast] [--full-days 35] [--writes-only]
//
// 1. Generate (or top up) a fleet: `devices` printers polled every 15 minutes for `days` days up to
//    now, inserted day by day on a simulated clock, rolled up and pruned THROUGH THE REAL CODE
//    (rollupOnce + applyRetention after each simulated day, as a box that runs them would).
//    The result is cached under --cache and reused; a later run only simulates the days since.
// 2. Roll-up of one day of raw on fresh copies, as the start-up catch-up and as the scheduled pass,
//    with the longest hold of the event loop between yields.
// 3. Flash writes: on a copy, --write-days simulated days as the box runs them: each 15-minute
//    round of `devices` snapshots in one transaction (synchronous=FULL, WAL), the scheduled pass
//    (roll-up in day batches + retention + checkpoint) 5 minutes past each hour. Bytes written are
//    read from /proc/self/io (wchar: bytes handed to write()/pwrite(), i.e. WAL frames + checkpoint
//    pages + file growth; write_bytes: what the kernel accounted to the block layer for this
//    process). The first day starts from an empty WAL; the steady state is the mean of the rest.
// 4. Latency p50/p99 of history (each period, default maxPoints=200 and raw=true) and bounds, directly
//    on SQLite (the store's prepared statements + LTTB, no HTTP), and, with --agent, over HTTPS.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'node:https';
import Database from 'better-sqlite3';
import { openDatabase, type DB } from '../../src/store/db.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { DeviceStore, type Reading } from '../../src/store/devices.js';
import type { Device } from '../../src/model/device.js';
import { lttb } from '../../src/api/lttb.js';
import { snapshotJson } from '../../src/api/views.js';
import { rollupOnce } from '../../src/rollup/rollup.js';
import { DAY_MS, HOUR_MS } from '../../src/store/tier-buckets.js';
import { RETENTION_DAYS } from '../../src/model/tiers.js';
import { applyRetention, configureWal, maintainFile } from '../../src/rollup/retention.js';
import { rollupPass, SCHEDULED_HOURLY_BATCH } from '../../src/rollup/schedule.js';
import { RAW_INSERT_SQL, benchSerial, fleetRound, writeHourlyDay, type RawRow } from './fleet-history.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const flag = (name: string) => args.includes(`--${name}`);
const DEVICES = Number(opt('devices', '500'));
const DAYS = Number(opt('days', '730'));
const CACHE = opt('cache', '/var/tmp/printbox-bench');
const ITER = Number(opt('iterations', '300'));
const BLOCK = 25; // latency requests per column per turn (measureLatency)
const AGENT = opt('agent', '');
// Days simulated for the flash-write measurement (the first one starts from an empty WAL).
const WRITE_DAYS = Number(opt('write-days', '4'));
const STEP = 15 * 60_000;
// Days older than FULL_DAYS before the end are polled every OLD_STEP (default hourly): they only
// survive as daily and monthly rows, whose row counts do not depend on the poll interval, and it
// keeps a 2-year generation within minutes. --old-step-min 15 gives full fidelity (about 4x longer).
const OLD_STEP = Number(opt('old-step-min', '60')) * 60_000;
const FULL_DAYS = Number(opt('full-days', '35'));
// --fast: days older than FULL_DAYS are written as the hourly rows the hourly roll-up makes of them
// (fleet-history.ts writeHourlyDay), then rolled to daily and monthly and pruned by the real code as
// before; checked against the real roll-up by test/unit/rollup/bench-fleet-shortcut.test.ts. With
// --old-step-min 480 --full-days 8 (3 readings a day before the last 8 days: the raw window is polled
// every 15 minutes, older days leave the same rows per tier, from fewer readings) a 2-year fleet of
// 2,000 printers takes minutes. The old step must be whole hours dividing a day.
const FAST = flag('fast');
// --page-size N: create the database with another page size (db.ts keeps SQLite's default 4096).
const PAGE_SIZE = Number(opt('page-size', '0'));
const now = Date.now();
const endOfData = Math.floor(now / STEP) * STEP; // last poll at or before now

const dir = join(CACHE, `fleet-${DEVICES}x${DAYS}-old${OLD_STEP / 60_000}${PAGE_SIZE ? `-p${PAGE_SIZE}` : ''}${FAST ? `-fast-full${FULL_DAYS}` : ''}`);
const file = join(dir, 'printbox.db');
const metaFile = join(dir, 'meta.json');
const serial = benchSerial;
const makeRound = (ts: number, insert: (row: RawRow) => void) => fleetRound(DEVICES, ts, insert);
const INSERT_SQL = RAW_INSERT_SQL;
const log = (s: string) => process.stdout.write(s + '\n');

interface Meta { start: number; next: number; rollupDayMs: number[]; retentionDayMs: number[] }

function readIo(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync('/proc/self/io', 'utf8').split('\n')) {
    const [k, v] = line.split(':');
    if (v) out[k.trim()] = Number(v);
  }
  return out;
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x: number) => x.toFixed(2);
const fileBytes = (f: string) => (existsSync(f) ? statSync(f).size : 0);

async function generate(): Promise<Meta> {
  if (flag('fresh')) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let meta: Meta;
  if (PAGE_SIZE && !existsSync(file)) {
    const pre = new Database(file);
    pre.pragma(`page_size = ${PAGE_SIZE}`);
    pre.pragma('auto_vacuum = INCREMENTAL');
    pre.pragma('journal_mode = WAL'); // writes the header: the page size is fixed from here on
    pre.close();
  }
  const db = openDatabase(file);
  if (existsSync(metaFile)) meta = JSON.parse(readFileSync(metaFile, 'utf8'));
  else {
    const start = Math.floor((endOfData - DAYS * DAY_MS) / DAY_MS) * DAY_MS;
    meta = { start, next: start, rollupDayMs: [], retentionDayMs: [] };
    const dev = db.prepare(`INSERT OR IGNORE INTO devices (serial, ip, last_seen, created_at, first_seen, device_type, source_type, is_saved, manufacturer, model)
      VALUES (?, ?, ?, ?, ?, 'network', 'snmp', 1, 'Bench', 'Model ' || ?)`);
    db.transaction(() => {
      for (let i = 0; i < DEVICES; i++) dev.run(serial(i), `127.77.${i >> 8}.${i & 255}`, endOfData, start, start, i % 7);
    })();
  }
  // Generation only: durability is not needed here (a cut-off run resumes from meta.next; rows a
  // cut-off run wrote past it are dropped first and written again).
  db.pragma('synchronous = OFF');
  db.prepare('DELETE FROM metrics_raw WHERE ts >= ?').run(meta.next);
  const isOld = (from: number) => from < endOfData - FULL_DAYS * DAY_MS;
  // Inside the hourly tier's window (and 2 days more) an old day is polled at least hourly, so that
  // it leaves 24 hourly rows per device as the box does; older days leave only daily and monthly rows.
  const oldStep = (from: number) => (from >= endOfData - (RETENTION_DAYS.hourly + 2) * DAY_MS ? Math.min(OLD_STEP, HOUR_MS) : OLD_STEP);
  if (FAST && isOld(meta.next)) {
    // Likewise the hourly rows a cut-off run wrote for old days past it (written again below).
    db.prepare('DELETE FROM metrics_hourly WHERE ts >= ?').run(meta.next);
    db.prepare(`UPDATE rollup_state SET done_until = ? WHERE tier = 'hourly'`).run(meta.next);
  }
  const ins = db.prepare(INSERT_SQL);
  const insertDay = db.transaction((from: number, to: number) => {
    const step = isOld(from) ? oldStep(from) : STEP;
    for (let ts = from; ts < to; ts += step) makeRound(ts, (r) => ins.run(...r));
  });
  const t0 = Date.now();
  let days = 0;
  while (meta.next <= endOfData) {
    const to = Math.min(meta.next + DAY_MS, endOfData + 1);
    if (FAST && isOld(meta.next) && to - meta.next === DAY_MS) writeHourlyDay(db, DEVICES, meta.next, oldStep(meta.next));
    else insertDay(meta.next, to);
    const clock = new Date(to + 5 * 60_000);
    const a = performance.now();
    // As the box's scheduled pass rolls (a day of hourly buckets per transaction): the layout of
    // the hourly rows, and so history's page reads, depend on it.
    await rollupOnce(db, clock, { hourlyBatch: SCHEDULED_HOURLY_BATCH });
    const b = performance.now();
    await applyRetention(db, clock, { maintain: false });
    const c = performance.now();
    if (to - meta.next === DAY_MS && meta.next >= endOfData - FULL_DAYS * DAY_MS) {
      meta.rollupDayMs.push(b - a);
      meta.retentionDayMs.push(c - b);
    }
    meta.next = to;
    if (++days % 30 === 0) {
      maintainFile(db);
      writeFileSync(metaFile + '.tmp', JSON.stringify(meta));
      renameSync(metaFile + '.tmp', metaFile);
      log(`  generated ${days} days (${new Date(meta.next).toISOString().slice(0, 10)}), ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  }
  // The generator inserts raw rows directly; note each device's newest one as the agent would.
  db.exec(`INSERT OR REPLACE INTO device_latest (serial, ts, raw_id) SELECT serial, max(ts), id FROM metrics_raw GROUP BY serial`);
  maintainFile(db);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  writeFileSync(metaFile, JSON.stringify(meta));
  log(`generation: ${days} simulated days in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return meta;
}

// A scratch copy of the generated fleet, opened as the agent opens it (a measurement changes it).
function copyFleet(name: string): { wdir: string; wfile: string; db: DB } {
  const wdir = join(CACHE, name);
  rmSync(wdir, { recursive: true, force: true });
  mkdirSync(wdir, { recursive: true });
  const wfile = join(wdir, 'printbox.db');
  copyFileSync(file, wfile);
  const db = openDatabase(wfile);
  configureWal(db);
  return { wdir, wfile, db };
}

async function measureWrites(): Promise<void> {
  const { wdir, wfile, db } = copyFleet('writes');
  const devices = new DeviceStore(db);
  // Device records as discovery leaves them: a PrinterInfo of about 1.5 KB each, whose meters
  // change every poll (mergeObservation replaces it), so the round writes what the agent writes.
  const info = (i: number, ts: number, page: number) => ({
    ip: `127.77.${i >> 8}.${i & 255}`, serial: serial(i), manufacturer: 'Bench', model: `Model ${i % 7}`,
    hostname: `printer-${i}`, firmware: '1.0.0', mac_address: '00:11:22:33:44:55', page_count: page,
    toner_levels: { black: 50, cyan: 60, magenta: 70, yellow: 80 }, last_seen: new Date(ts).toISOString(),
    learned_oids: { page_count_oid: '1.3.6.1.2.1.43.10.2.1.4.1.1', vendor_specific_oids: Object.fromEntries(
      Array.from({ length: 20 }, (_, k) => [`counter_${k}`, `1.3.6.1.4.1.2435.2.3.9.4.2.1.5.5.${k}.0`])) },
    paper_trays: Array.from({ length: 4 }, (_, k) => ({ index: k + 1, name: `Tray ${k + 1}`, max_capacity: 250, level: -3 })),
  });
  const records = new Map<string, Device>();
  db.transaction(() => {
    for (let i = 0; i < DEVICES; i++) {
      const d = { ...devices.get(serial(i))!, printer_info: info(i, endOfData, 0), status_messages: ['ready'] };
      devices.put(d);
      records.set(d.serial, d);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  const per = (x: number) => x / DEVICES / 1024;
  log(`\n## flash writes, ${WRITE_DAYS} simulated days (96 rounds x ${DEVICES} devices a day through DeviceStore.recordReadings, synchronous=FULL, scheduled roll-up pass 5 minutes past each hour)`);
  log('| day | wchar KiB/device | of which in roll-up passes | write_bytes KiB/device | wall s | passes s |');
  log('|---|---|---|---|---|---|');
  const start = Math.floor(endOfData / STEP) * STEP + STEP;
  const sizes0 = fileBytes(wfile) + fileBytes(wfile + '-wal');
  const daily: number[] = [];
  for (let day = 0; day < WRITE_DAYS; day++) {
    const io0 = readIo();
    const t0 = performance.now();
    let rollMs = 0;
    let passWchar = 0;
    for (let r = day * 96; r < (day + 1) * 96; r++) {
      const ts = start + r * STEP;
      const readings: Reading[] = [];
      makeRound(ts, (v) => {
        const t = JSON.parse(v[6] as string);
        const s = v[0] as string;
        const i = Number(s.slice(5));
        const device = { ...records.get(s)!, last_seen: ts, printer_info: info(i, ts, v[2] as number) };
        readings.push({ device, snapshot: { serial: s, ts, page_count: v[2] as number, color_pages: v[3] as number,
          mono_pages: v[4] as number, scan_count: v[5] as number, toner_levels: t } });
      });
      devices.recordReadings(readings);
      if ((r + 1) % 4 === 0) {
        const a = performance.now();
        const w = readIo().wchar;
        await rollupPass(db, new Date(ts + STEP + 5 * 60_000), SCHEDULED_HOURLY_BATCH);
        passWchar += readIo().wchar - w;
        rollMs += performance.now() - a;
      }
    }
    const io1 = readIo();
    daily.push(per(io1.wchar - io0.wchar));
    log(`| ${day + 1} | ${per(io1.wchar - io0.wchar).toFixed(1)} | ${per(passWchar).toFixed(1)} | ${per(io1.write_bytes - io0.write_bytes).toFixed(1)} | ${((performance.now() - t0) / 1000).toFixed(1)} | ${(rollMs / 1000).toFixed(1)} |`);
  }
  const sizes1 = fileBytes(wfile) + fileBytes(wfile + '-wal');
  db.close();
  // Day 1 starts from an empty WAL (the copy was checkpointed), so its checkpoint window is short:
  // the steady state is the mean of the days after it.
  const steady = daily.length > 1 ? daily.slice(1) : daily;
  log(`steady state (days 2-${daily.length}): ${(steady.reduce((a, b) => a + b, 0) / steady.length).toFixed(1)} KiB per device per day at the write calls`);
  log(`db+wal size delta over ${WRITE_DAYS} days: ${((sizes1 - sizes0) / 1e6).toFixed(2)} MB`);
  rmSync(wdir, { recursive: true, force: true });
}

// Roll-up of one day of raw for the fleet, and the longest stretch the event loop was held (time
// between the pass's yields), in both shapes a pass takes: a box that was off for a day catches up
// an hour per batch at start-up; the scheduled pass rolls the day's 24 hours as one batch.
async function measureRollupDay(): Promise<void> {
  log(`\n## roll-up of one day of raw (${DEVICES} devices, ${DEVICES * 96} rows)`);
  await rollupDay('catch-up at start-up, one hour per batch', 1);
  await rollupDay(`scheduled pass, ${SCHEDULED_HOURLY_BATCH} hours per batch`, SCHEDULED_HOURLY_BATCH);
}

async function rollupDay(label: string, hourlyBatch: number): Promise<void> {
  const { wdir, db } = copyFleet('rollday');
  const ins = db.prepare(INSERT_SQL);
  const start = Math.floor(endOfData / DAY_MS) * DAY_MS + DAY_MS;
  db.transaction(() => {
    for (let ts = start; ts < start + DAY_MS; ts += STEP) makeRound(ts, (r) => ins.run(...r));
  })();
  let last = performance.now();
  let longest = 0;
  const yieldFn = async () => {
    longest = Math.max(longest, performance.now() - last);
    await new Promise<void>((r) => setImmediate(r));
    last = performance.now();
  };
  const clock = new Date(start + DAY_MS + 5 * 60_000);
  const a = performance.now();
  last = a;
  const r = await rollupOnce(db, clock, { yieldFn, hourlyBatch });
  const b = performance.now();
  longest = Math.max(longest, b - last);
  const roll = longest;
  longest = 0;
  last = b;
  const ret = await applyRetention(db, clock, { yieldFn });
  const c = performance.now();
  longest = Math.max(longest, c - last);
  db.close();
  rmSync(wdir, { recursive: true, force: true });
  log(`${label}: roll-up ${ms(b - a)} ms (${r.hourly} hourly + ${r.daily} daily + ${r.monthly} monthly rows, ${r.batches} transactions), longest hold of the event loop ${ms(roll)} ms`);
  log(`  retention afterwards ${ms(c - b)} ms (${ret.raw} raw + ${ret.hourly} hourly + ${ret.daily} daily rows deleted, ${ret.batches} transactions), longest hold ${ms(longest)} ms`);
}

function httpsGet(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, headers: { Accept: 'application/json' }, agent: keepAlive }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });

// This machine is shared: the p50 and p99 of a fixed CPU loop put each run's latencies in context
// (on a quiet machine both are the loop's own time).
function cpuJitter(): string {
  const t: number[] = [];
  for (let r = 0; r < 200; r++) {
    const a = performance.now();
    let x = 0;
    for (let i = 0; i < 2e6; i++) x += Math.sqrt(i);
    if (x < 0) throw new Error('unreachable'); // keeps the loop from being optimised away
    t.push(performance.now() - a);
  }
  return `a fixed CPU loop takes ${ms(pct(t, 50))} ms p50, ${ms(pct(t, 99))} ms p99`;
}

async function measureLatency(meta: Meta): Promise<void> {
  const db: DB = openDatabase(file, { readonly: true });
  const store = new MetricsStore(db);
  const periods: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };
  const pick = (i: number) => serial((i * 7919) % DEVICES);
  log(`\n## latency, ${ITER} requests each, random device, now = ${new Date(now).toISOString()}`);
  log(`machine noise: ${cpuJitter()}`);
  log('| query | bare p50 ms | bare p99 ms | answer p50 ms | answer p99 ms | rows | API p50 ms | API p99 ms | API/answer p50 / p99 | API/bare p50 / p99 |');
  log('|---|---|---|---|---|---|---|---|---|---|');
  // bare: the store query (+ LTTB); answer: the body the handler sends, built in process by the
  // handler's own code (views + JSON); API: the same over HTTPS. API/answer is what HTTP adds.
  // The three take turns in blocks of BLOCK requests, so a slow spell of this shared machine hits
  // all three columns alike, while within a block each runs warm (request by request turns made
  // the agent, another process, wake cold each time: +1.5 ms a request). Each column asks for
  // other devices than the others at the same moment, so none reads pages another has just cached.
  const report = async (name: string, bare: ((s: string) => number) | undefined, path?: (s: string) => string,
    answer?: (s: string) => number) => {
    const t: number[] = [];
    const ta: number[] = [];
    const u: number[] = [];
    let rows = 0;
    const time = <R>(into: number[], fn: () => R): R => {
      const a = performance.now();
      const r = fn();
      into.push(performance.now() - a);
      return r;
    };
    for (let from = 0; from < ITER; from += BLOCK) {
      const block = Array.from({ length: Math.min(BLOCK, ITER - from) }, (_, k) => from + k);
      if (bare) for (const i of block) rows = time(t, () => bare(pick(i)));
      if (answer) for (const i of block) time(ta, () => answer(pick(i + 101)));
      if (AGENT && path) {
        for (const i of block) {
          const url = AGENT + path(pick(i + 202));
          const a = performance.now();
          await httpsGet(url).catch(() => httpsGet(url)); // a keep-alive socket the server closed: once more
          u.push(performance.now() - a);
        }
      }
    }
    const ansCol = answer ? `${ms(pct(ta, 50))} | ${ms(pct(ta, 99))}` : '- | -';
    let api = '| | | |';
    if (u.length) {
      const ratio = (x: number[]) => (x.length ? `${(pct(u, 50) / pct(x, 50)).toFixed(2)} / ${(pct(u, 99) / pct(x, 99)).toFixed(2)}` : '-');
      api = `| ${ms(pct(u, 50))} | ${ms(pct(u, 99))} | ${ratio(ta)} | ${ratio(t)} |`;
    }
    log(`| ${name} | ${bare ? ms(pct(t, 50)) : '-'} | ${bare ? ms(pct(t, 99)) : '-'} | ${ansCol} | ${bare ? rows : '-'} ${api}`);
  };
  for (const [p, d] of Object.entries(periods)) {
    const q = (s: string, raw: boolean, asAnswer = false) => {
      const n = Date.now();
      // what routes/read.ts does: every row for raw=true, else the two-step downsampled read
      const out = raw ? store.history(s, n - d * DAY_MS, n, n)
        : store.historySampled(s, n - d * DAY_MS, n, n, (points) => lttb(points, 200));
      // bare touches every row once; the answer is what routes/read.ts sends
      JSON.stringify(asAnswer ? out.map(snapshotJson) : out);
      return out.length;
    };
    await report(`history ${p}`, (s) => q(s, false), (s) => `/api/devices/metrics/history?serial=${s}&period=${p}`, (s) => q(s, false, true));
    await report(`history ${p} raw=true`, (s) => q(s, true), (s) => `/api/devices/metrics/history?serial=${s}&period=${p}&raw=true`,
      (s) => q(s, true, true));
  }
  await report('bounds', (s) => (store.bounds(s)?.points ?? 0), (s) => `/api/devices/metrics/bounds?serial=${s}`);
  if (AGENT) await report('devices/discovered (API only)', undefined, () => `/devices/discovered?include_known=true`);
  // The fixed cost of one request (HTTPS on a keep-alive connection, routing, a tiny JSON body):
  // the floor under every API figure above.
  if (AGENT) await report('api/version: the per-request floor (API only)', undefined, () => `/api/version`);
  const pages = db.pragma('page_count', { simple: true }) as number;
  const psize = db.pragma('page_size', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  const counts = ['metrics_raw', 'metrics_hourly', 'metrics_daily', 'metrics_monthly']
    .map((t) => `${t}=${db.prepare(`SELECT count(*) FROM ${t}`).pluck().get()}`).join(' ');
  db.close();
  log(`\n## database`);
  log(`size ${(fileBytes(file) / 1e6).toFixed(1)} MB (${pages} pages of ${psize} B, ${free} free); rows: ${counts}`);
  const steady = meta.rollupDayMs.slice(-60);
  if (steady.length) {
    log(`roll-up of one day of raw (${DEVICES} devices, ${DEVICES * 96} rows) -> hourly/daily/monthly: p50 ${ms(pct(steady, 50))} ms, max ${ms(Math.max(...steady))} ms (last ${steady.length} generated days)`);
    const ret = meta.retentionDayMs.slice(-60);
    log(`retention of one day at steady state: p50 ${ms(pct(ret, 50))} ms, max ${ms(Math.max(...ret))} ms`);
  }
}

async function main(): Promise<void> {
  log(`# history bench: ${DEVICES} devices x ${DAYS} days, 15-min polls, cache ${dir}`);
  const meta = await generate();
  if (flag('gen-only')) return;
  if (flag('writes-only')) return measureWrites();
  if (!flag('latency-only')) {
    await measureRollupDay();
    await measureWrites();
  }
  await measureLatency(meta);
}
main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err) + '\n');
  process.exit(1);
});
