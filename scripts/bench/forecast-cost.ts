// What one supply forecast costs: the uploader sends each device with every reading,
// and each device carries its forecast (forecast/read.ts: a 90-day history read and fit). One
// printer with 90 days of 15-minute readings, rolled up and pruned by the real roll-up and
// retention (so the tiers hold what a box holds), then readForecast timed over many calls.
//   npm run build && node dist/scripts/bench/forecast-cost.js [--calls 500]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/db.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { readForecast } from '../../src/forecast/read.js';
import { rollupOnce } from '../../src/rollup/rollup.js';
import { applyRetention } from '../../src/rollup/retention.js';

const i = process.argv.indexOf('--calls');
const CALLS = i > 0 ? Number(process.argv[i + 1]) : 500;
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'printbox-forecast-cost-'));
try {
  const db = openDatabase(join(dir, 'f.db'));
  const metrics = new MetricsStore(db);
  const now = Date.now();
  db.transaction(() => {
    for (let k = 0; k < 90 * 96; k++) {
      metrics.insertRaw({ serial: 'S', ts: now - 90 * DAY + k * 900_000, page_count: 1000 + k, toner_levels: { black: 100 - Math.floor(k / 100), cyan: 90 - Math.floor(k / 120) } });
    }
  })();
  await rollupOnce(db, new Date(now), {});
  await applyRetention(db, new Date(now), {});
  const raw = db.prepare('SELECT count(*) FROM metrics_raw').pluck().get() as number;
  for (let k = 0; k < 50; k++) readForecast(metrics, 'S', now); // warm-up
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < CALLS; k++) readForecast(metrics, 'S', now);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / CALLS;
  const bytes = JSON.stringify(readForecast(metrics, 'S', now)).length;
  console.log(`${raw} raw rows left after roll-up and retention; readForecast ${ms.toFixed(1)} ms a call (${CALLS} calls); 2,000 printers: ${((ms * 2000) / 1000).toFixed(1)} s a round; its JSON ${bytes} bytes (2 supplies)`);
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
