// Where a polling day's flash writes go, page by page (docs/performance.md "Flash writes and database size").
//
//   node dist/scripts/bench/wal-pages.js [--fleet DIR] [--rounds 96]
//
// On a copy of a fleet the history benchmark generated (default: the 40-day one), with automatic
// checkpoints off, runs polling rounds through DeviceStore.recordReadings and the scheduled roll-up
// pass 5 minutes past each hour, then reads the WAL's frame headers: every frame is one page
// written, and the page number says which b-tree (table or index, from SQLite's dbstat) it belongs
// to. Frames per b-tree are what the WAL wrote; distinct pages per b-tree are what the checkpoint
// will write into the database file. Pages dbstat does not list are the header page, pointer-map
// pages (auto_vacuum) and free-list pages.
import { closeSync, copyFileSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/db.js';
import { DeviceStore, type Reading } from '../../src/store/devices.js';
import { rollupPass, SCHEDULED_HOURLY_BATCH } from '../../src/rollup/schedule.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const FLEET = opt('fleet', '/var/tmp/printbox-bench/fleet-500x40-old60');
const ROUNDS = Number(opt('rounds', '96'));
const STEP = 15 * 60_000;
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

const work = join(FLEET, '..', 'wal-pages');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const file = join(work, 'printbox.db');
copyFileSync(join(FLEET, 'printbox.db'), file);
const db = openDatabase(file);
db.pragma('wal_autocheckpoint = 0');
db.pragma('wal_checkpoint(TRUNCATE)');
const pageSize = db.pragma('page_size', { simple: true }) as number;

const devices = new DeviceStore(db);
const all = devices.listAll();
const last = db.prepare('SELECT max(ts) FROM metrics_raw').pluck().get() as number;
const start = Math.floor(last / STEP) * STEP + STEP;

// Page numbers written to the WAL since `from` (a byte offset), and the offset after them.
function framesSince(from: number): { pages: number[]; end: number } {
  const size = statSync(file + '-wal').size;
  const fd = openSync(file + '-wal', 'r');
  const head = Buffer.alloc(4);
  const pages: number[] = [];
  let off = Math.max(from, WAL_HEADER);
  for (; off + FRAME_HEADER + pageSize <= size; off += FRAME_HEADER + pageSize) {
    readSync(fd, head, 0, 4, off);
    pages.push(head.readUInt32BE(0));
  }
  closeSync(fd);
  return { pages, end: off };
}

const phases = new Map<string, number[]>();
const note = (phase: string, pages: number[]) => phases.set(phase, [...(phases.get(phase) ?? []), ...pages]);

let off = 0;
for (let r = 0; r < ROUNDS; r++) {
  const ts = start + r * STEP;
  const k = ts / STEP;
  const readings: Reading[] = all.map((d, i) => ({
    device: { ...d, last_seen: ts },
    snapshot: {
      serial: d.serial, ts, page_count: k * (1 + (i % 17)) + i * 1000, color_pages: k + i, mono_pages: k * (i % 17),
      scan_count: k >> 2, toner_levels: { black: (k + i) % 100, cyan: (k + 30) % 100, magenta: (k + 60) % 100, yellow: 40 },
    },
  }));
  devices.recordReadings(readings);
  let f = framesSince(off);
  note('poll rounds', f.pages);
  off = f.end;
  if ((r + 1) % 4 === 0) {
    await rollupPassNoCheckpoint(new Date(ts + STEP + 5 * 60_000));
    f = framesSince(off);
    note('roll-up + retention passes', f.pages);
    off = f.end;
  }
}

async function rollupPassNoCheckpoint(now: Date): Promise<void> {
  // The pass's own checkpoint would reset the WAL: wrap the pragma it calls.
  const real = db.pragma.bind(db);
  (db as unknown as { pragma: typeof db.pragma }).pragma = ((sql: string, o?: object) =>
    sql.startsWith('wal_checkpoint') ? [] : real(sql, o as never)) as typeof db.pragma;
  try {
    await rollupPass(db, now, SCHEDULED_HOURLY_BATCH);
  } finally {
    (db as unknown as { pragma: typeof db.pragma }).pragma = real;
  }
}

// Which b-tree each page belongs to, as of now (the WAL included).
const owner = new Map<number, string>();
for (const row of db.prepare('SELECT name, pageno FROM dbstat').iterate() as Iterable<{ name: string; pageno: number }>) {
  owner.set(row.pageno, row.name);
}
const who = (p: number) => owner.get(p) ?? (p === 1 ? 'header (page 1)' : 'pointer map / free list');
const kib = (pages: number) => (pages * (pageSize + FRAME_HEADER)) / 1024 / all.length;

process.stdout.write(`# WAL frames of ${ROUNDS} polling rounds x ${all.length} devices, ${FLEET}\n`);
for (const [phase, pages] of phases) {
  const by = new Map<string, { frames: number; distinct: Set<number> }>();
  for (const p of pages) {
    const e = by.get(who(p)) ?? { frames: 0, distinct: new Set<number>() };
    e.frames++;
    e.distinct.add(p);
    by.set(who(p), e);
  }
  const distinct = new Set(pages).size;
  process.stdout.write(`\n## ${phase}: ${pages.length} frames = ${kib(pages.length).toFixed(1)} KiB/device/day; `
    + `${distinct} distinct pages = ${kib(distinct).toFixed(1)} KiB/device/day at checkpoint\n`);
  process.stdout.write('| b-tree | frames | KiB/device/day | distinct pages |\n|---|---|---|---|\n');
  for (const [name, e] of [...by].sort((a, b) => b[1].frames - a[1].frames)) {
    process.stdout.write(`| ${name} | ${e.frames} | ${kib(e.frames).toFixed(2)} | ${e.distinct.size} |\n`);
  }
}
const allPages = [...phases.values()].flat();
process.stdout.write(`\nall: ${allPages.length} frames (${kib(allPages.length).toFixed(1)} KiB/device/day), `
  + `${new Set(allPages).size} distinct pages (${kib(new Set(allPages).size).toFixed(1)} KiB/device/day)\n`);
db.close();
rmSync(work, { recursive: true, force: true });
