// How close supply forecasts come: on the seeded two-year fleet (test/kit/seed.ts
// `supplyFleet`: varying daily volume, weekday-only printers, 10-point steps, "some left"
// readings, replacements), each cartridge life is forecast from its first part and compared with
// the time it really emptied.
//
//   npm run build && node dist/scripts/bench/forecast-accuracy.js [--devices 40] [--seed 36]
//
// At a point `frac` of each life (a third, a half), the forecaster (forecast/supply-forecast.ts)
// gets what the agent reads for GET /api/devices/forecast: the supply's readings of the 90 days
// before (here one every 6 hours; the agent's tiers hold raw, hourly and daily rows, condensed to
// one point per day by the forecaster anyway), and "now" is that point. Printed: the mean absolute
// error in days of the predicted empty time, its median and 90th percentile, the share of lives
// with no forecast, and the same by the kind of printer.
import { forecastSupplies, forecastSupply } from '../../src/forecast/supply-forecast.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readForecast } from '../../src/forecast/read.js';
import { openDatabase } from '../../src/store/db.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { DAY, supplyFleet, type SupplyLife } from '../../test/kit/seed.js';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const WINDOW = 90 * DAY;

const now = Date.UTC(2026, 10, 26);
const { devices, lives } = supplyFleet(now, { devices: opt('devices', 40), seed: opt('seed', 36) });
const bySerial = new Map(devices.map((d) => [d.serial, d]));

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function evaluate(frac: number, filter: (l: SupplyLife) => boolean): { n: number; none: number; errors: number[]; lifeDays: number[] } {
  const errors: number[] = [];
  const lifeDays: number[] = [];
  let none = 0;
  let n = 0;
  for (const life of lives.filter(filter)) {
    n++;
    const at = life.start + frac * (life.empty - life.start);
    const dev = bySerial.get(life.serial)!;
    const readings = dev.readings
      .filter((r) => r.ts > at - WINDOW && r.ts <= at)
      .map((r) => ({ ts: r.ts, level: r.toner_levels[life.supply], pages: r.page_count }));
    const f = forecastSupply(life.supply, readings, at);
    if (f.days_to_empty === null) {
      none++;
      continue;
    }
    errors.push(Math.abs(at + f.days_to_empty * DAY - life.empty) / DAY);
    lifeDays.push((life.empty - life.start) / DAY);
  }
  return { n, none, errors, lifeDays };
}

const kinds: [string, (l: SupplyLife) => boolean][] = [
  ['all lives', () => true],
  ['whole-point levels', (l) => bySerial.get(l.serial)!.step === 1],
  ['10-point steps', (l) => bySerial.get(l.serial)!.step === 10],
  ['weekdays only', (l) => bySerial.get(l.serial)!.weekdaysOnly],
  ['some "-3" readings', (l) => bySerial.get(l.serial)!.unknownShare > 0],
];
const t0 = performance.now();
console.log(`fleet: ${devices.length} printers, 730 days, ${lives.length} complete cartridge lives (median ${pct(lives.map((l) => (l.empty - l.start) / DAY), 0.5).toFixed(0)} days)`);
for (const frac of [1 / 3, 1 / 2]) {
  console.log(`\nforecast at ${frac === 0.5 ? 'half' : 'a third'} of each life:`);
  for (const [name, filter] of kinds) {
    const r = evaluate(frac, filter);
    if (!r.errors.length) continue;
    const rel = r.errors.map((e, i) => e / r.lifeDays[i]);
    console.log(`  ${name.padEnd(20)} ${String(r.n).padStart(4)} lives: MAE ${mean(r.errors).toFixed(1)} d (median ${pct(r.errors, 0.5).toFixed(1)}, p90 ${pct(r.errors, 0.9).toFixed(1)}), ${(100 * mean(rel)).toFixed(1)} % of the life; no forecast ${r.none}`);
  }
}
console.log(`\n(${(performance.now() - t0).toFixed(0)} ms)`);

// The cost of one GET /api/devices/forecast's fit: the rows the tiers hold for 90 days of a printer
// polled every 15 minutes (7 days raw, 23 days hourly, 60 days daily: about 1,100 to 1,300 rows), four supplies.
const dev = devices[1];
const rows = dev.readings.filter((r) => r.ts > now - WINDOW).flatMap((r) => {
  const age = now - r.ts;
  const n = age < 7 * DAY ? 24 : age < 30 * DAY ? 4 : r.ts % DAY === 0 ? 1 : 0; // per 6 h reading
  return Array.from({ length: n }, (_, i) => ({ ts: r.ts + i * (6 * 3_600_000 / Math.max(1, n)), page_count: r.page_count, toner_levels: r.toner_levels }));
});
const times: number[] = [];
for (let i = 0; i < 50; i++) {
  const t = performance.now();
  forecastSupplies(rows, now);
  times.push(performance.now() - t);
}
console.log(`fit of ${rows.length} rows x 4 supplies: median ${pct(times, 0.5).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms (50 runs)`);

// The same through the store: one printer's 90 days in a real SQLite file (raw every 15 minutes for
// 7 days, hourly rows to 30 days, daily rows to 90), then readForecast, as GET /api/devices/forecast
// and each device of an upload run it.
const dir = mkdtempSync(join(tmpdir(), 'printbox-forecast-bench-'));
try {
  const db = openDatabase(join(dir, 'f.db'));
  const store = new MetricsStore(db);
  const real = Date.now();
  const level = (t: number) => ({ black: Math.round(45 + ((real - t) / DAY) * 0.5), cyan: 60, magenta: 40, yellow: 30 }); // 0.5 %/day, 45 % now
  const agg = (t: number) => ({ serial: 'BENCH', ts: t, sample_count: 1, counters: { page_count: { min: 1, max: Math.round(t / 60_000), avg: 1 } }, toner_last: level(t), toner_avg: level(t) });
  db.transaction(() => {
    for (let t = real - 7 * DAY + 60_000; t < real; t += 15 * 60_000) store.insertRaw({ serial: 'BENCH', ts: t, page_count: Math.round(t / 60_000), toner_levels: level(t) });
    for (let t = Math.floor((real - 30 * DAY) / 3_600_000 + 1) * 3_600_000; t < real - 7 * DAY; t += 3_600_000) store.upsertAggregate('hourly', agg(t));
    for (let t = Math.floor((real - 90 * DAY) / DAY + 1) * DAY; t < real - 30 * DAY; t += DAY) store.upsertAggregate('daily', agg(t));
  })();
  const rows = store.supplyHistory('BENCH', real - 90 * DAY, real, real).length;
  const took: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    readForecast(store, 'BENCH', real);
    took.push(performance.now() - t);
  }
  console.log(`readForecast from SQLite (${rows} rows, 4 supplies): median ${pct(took, 0.5).toFixed(2)} ms, max ${Math.max(...took).toFixed(2)} ms (50 runs)`);
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
