import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRollupSchedule } from '../../../src/rollup/schedule.js';
import { openDatabase } from '../../../src/store/db.js';
import { getWatermark } from '../../../src/rollup/rollup.js';
import { inserter, openTemp, reading, tempDbFile, DAY, MIN } from '../../kit/rollup-db.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

test('startRollupSchedule catches up at start-up, runs on its schedule without overlap, and stops', async () => {
  const { db } = openTemp();
  const ins = inserter(db);
  const t0 = Date.now() - 3 * DAY;
  const rows = [];
  for (let ts = t0; ts < t0 + DAY; ts += 15 * MIN) rows.push(reading('S', 0, ts));
  ins(rows);
  const lines: string[] = [];
  const log = { info: (o: object, m?: string) => lines.push(`${m} ${JSON.stringify(o)}`), error: (o: object, m?: string) => lines.push(`ERR ${m} ${JSON.stringify(o)}`) };
  const { stop } = startRollupSchedule(db, log, '* * * * * *'); // every second
  // Until a scheduled pass has run (on a loaded machine the first ticks can be late), 15 s at most.
  for (let waited = 0; waited < 15_000 && !lines.some((l) => l.includes('"reason":"schedule"')); waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  const n = lines.length;
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal(lines.length, n, 'no pass after stop');
  assert.ok(lines[0].includes('"reason":"startup"'), lines[0]);
  assert.ok(lines.some((l) => l.includes('"reason":"schedule"')), lines.join('\n'));
  assert.ok(!lines.some((l) => l.startsWith('ERR')), lines.join('\n'));
  assert.ok((getWatermark(db, 'hourly') ?? 0) > t0 + DAY);
  assert.equal(db.prepare('SELECT sum(sample_count) FROM metrics_hourly').pluck().get(), rows.length);
  db.close();
});

test('printbox-agent rollup runs one pass against the configured database', () => {
  const file = tempDbFile('cmd-');
  const db = openDatabase(file);
  const ins = inserter(db);
  const t0 = Date.UTC(2026, 2, 1);
  ins([reading('S', 0, t0), reading('S', 0, t0 + 20 * MIN)]);
  db.close();
  const cfg = join(dirname(file), 'agent.toml');
  writeFileSync(cfg, `data_dir = ${JSON.stringify(dirname(file))}\n`);
  const out = execFileSync(process.execPath, [join(root, 'dist/src/cli.js'), '--config', cfg, 'rollup', '--now', '2026-03-02T00:05:00Z'], { encoding: 'utf8' });
  const r = JSON.parse(out);
  assert.equal(r.rollup.hourly, 1);
  assert.equal(r.rollup.daily, 1);
  const db2 = openDatabase(file);
  assert.equal(db2.prepare('SELECT sample_count FROM metrics_daily').pluck().get(), 2);
  db2.close();
});
