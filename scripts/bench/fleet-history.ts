// The history bench's simulated fleet (scripts/bench/history.ts), and its shortcut for old days.
//
// A printer: cumulative counters with a per-device rate and a working-hours profile; toner falls and
// is replaced now and then. `fleetRound` gives one polling round of every device as raw rows.
//
// The shortcut (`writeHourlyDay`, history.ts --fast): a day polled once an hour (or every few hours) becomes, through the
// real hourly roll-up, one hourly row per reading (sample_count 1, min = max = avg), and those rows
// are all that the daily roll-up and retention ever read of it: the day's raw rows are gone after 7
// days. So a day older than the raw window can be written as its hourly rows directly, in the order
// the scheduled pass writes them (a day of all devices in one transaction, device by device), and
// the real roll-up (daily, monthly) and retention take it from there. That skips the raw inserts and
// the hourly roll-up's JSON work, most of a simulated day's time: a 2-year fleet of 2,000 printers in
// minutes instead of about an hour. test/unit/rollup/bench-fleet-shortcut.test.ts compares what it leaves in
// every tier with the real roll-up of the same readings, so the two cannot drift apart.
import type { Database } from 'better-sqlite3';
import { AGGREGATE_COLUMNS } from '../../src/store/metrics.js';
import { DAY_MS, HOUR_MS } from '../../src/store/tier-buckets.js';

export const POLL_MS = 15 * 60_000;

export const benchSerial = (i: number) => `BENCH${String(i).padStart(5, '0')}`;

/** One raw reading: serial, ts, page_count, color_pages, mono_pages, scan_count, toner_levels (JSON text). */
export type RawRow = [string, number, number, number, number, number, string];

/** The four toner levels of device `i` at poll number `k`, in key order (json_each's, and so the roll-up's). */
function toner(k: number, i: number): [string, number][] {
  const t = 100 - ((k + i * 37) % 2000) / 20;
  return [['black', Math.round(t)], ['cyan', Math.round((t + 30) % 100)], ['magenta', Math.round((t + 60) % 100)], ['yellow', Math.round((t + 10) % 100)]];
}

/** Device `i`'s reading at `ts`. */
export function fleetReading(i: number, ts: number): RawRow {
  const k = Math.floor(ts / POLL_MS);
  const hour = new Date(ts).getUTCHours();
  const busy = hour >= 7 && hour < 18 ? 1 : 0.1;
  const rate = 1 + (i % 17);
  const page = Math.floor(k * rate * 0.4 + (busy * rate * (k % 4)) / 4) + i * 1000;
  const color = Math.floor(page * ((i % 3) / 5));
  const levels = toner(k, i).map(([key, v]) => `"${key}":${v}`).join(',');
  return [benchSerial(i), ts, page, color, page - color, Math.floor(page / 10), `{${levels}}`];
}

/** One polling round at `ts`: every device's reading, in device order. */
export function fleetRound(devices: number, ts: number, insert: (row: RawRow) => void): void {
  for (let i = 0; i < devices; i++) insert(fleetReading(i, ts));
}

export const RAW_INSERT_SQL = `INSERT INTO metrics_raw (serial, ts, page_count, color_pages, mono_pages, scan_count, toner_levels) VALUES (?, ?, ?, ?, ?, ?, ?)`;

/**
 * The hourly row the roll-up makes of an hour holding the one reading `r` (rollup.ts bucketRows):
 * count 1; each counter's min and max the integer, its avg the same as REAL; toner_last the reading's
 * JSON text as stored; toner_avg each level's average, a REAL, which SQLite's JSON writes as `50.0`.
 */
export function hourlyOfOneReading(r: RawRow, i: number): Record<string, unknown> {
  const [serial, ts, page, color, mono, scan, levels] = r;
  // The bench fleet reports no category counters: none in any tier (extra_max NULL).
  const row: Record<string, unknown> = { serial, ts, sample_count: 1, toner_last: levels, extra_max: null };
  for (const [c, v] of [['page_count', page], ['color_pages', color], ['mono_pages', mono], ['scan_count', scan]] as const) {
    row[`${c}_min`] = v;
    row[`${c}_max`] = v;
    row[`${c}_avg`] = v;
  }
  row.toner_avg = `{${toner(Math.floor(ts / POLL_MS), i).map(([key, v]) => `"${key}":${v}.0`).join(',')}}`;
  return row;
}

/**
 * Writes the day starting at `dayStart` (UTC midnight) of a fleet polled every `stepMs` (an hour or
 * several) as its hourly rows,
 * and advances the hourly watermark to the day's end, in one transaction: what the scheduled pass
 * (24 hours a batch, rows sorted device by device) writes for it. The caller then runs the real
 * roll-up (daily, monthly) and retention, as for a simulated day.
 */
export function writeHourlyDay(db: Database, devices: number, dayStart: number, stepMs = HOUR_MS): void {
  if (stepMs % HOUR_MS !== 0 || DAY_MS % stepMs !== 0) throw new Error('one reading an hour at most, whole hours dividing a day');
  const insert = hourlyInsert(db);
  db.transaction(() => {
    for (let i = 0; i < devices; i++) {
      for (let ts = dayStart; ts < dayStart + DAY_MS; ts += stepMs) insert.run(hourlyOfOneReading(fleetReading(i, ts), i));
    }
    db.prepare(`INSERT INTO rollup_state (tier, done_until) VALUES ('hourly', ?)
      ON CONFLICT (tier) DO UPDATE SET done_until = excluded.done_until`).run(dayStart + DAY_MS);
  })();
}

const inserts = new WeakMap<Database, ReturnType<Database['prepare']>>();
function hourlyInsert(db: Database) {
  let st = inserts.get(db);
  if (!st) {
    st = db.prepare(`INSERT INTO metrics_hourly (${AGGREGATE_COLUMNS.join(', ')}) VALUES (${AGGREGATE_COLUMNS.map((c) => '@' + c).join(', ')})`);
    inserts.set(db, st);
  }
  return st;
}
