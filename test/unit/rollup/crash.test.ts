// Durability: a writer that commits polling rounds and runs roll-ups + retention is killed with
// SIGKILL at random moments, again and again. Afterwards the file must pass integrity_check, every
// round the writer reported as committed must be there (raw, or counted by a rolled-up bucket), and
// no roll-up may be half-done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { checkMetricsIntegrity, type CommittedSnapshot } from '../../kit/integrity.js';
import { openDatabase } from '../../../src/store/db.js';
import { rollupPass } from '../../../src/rollup/schedule.js';
import { tempDbFile, MIN } from '../../kit/rollup-db.js';

const here = dirname(fileURLToPath(import.meta.url));

function runAndKill(file: string, ms: number, committed: CommittedSnapshot[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'crash-writer.js'), file, String(Date.UTC(2026, 0, 1)), '6', String(30 * MIN)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buf = '';
    let err = '';
    // The kill comes `ms` after the writer's first commit, not after its start: on a busy machine
    // the start alone (Node, the schema) can take longer than any fixed delay.
    let timer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith('C ')) continue;
        timer ??= setTimeout(() => child.kill('SIGKILL'), ms);
        for (const tok of line.slice(2).split(' ')) {
          const [id, serial, ts] = tok.split(':');
          committed.push({ id: Number(id), serial, ts: Number(ts) });
        }
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(); // a partial last line is not a commit: ignored above
      else reject(new Error(`writer exited ${code}: ${err}`));
    });
  });
}

test('kill -9 during polls and roll-ups loses no committed snapshot and leaves no half roll-up', async () => {
  const file = tempDbFile('crash-');
  const committed: CommittedSnapshot[] = [];
  for (let i = 0; i < 14; i++) {
    await runAndKill(file, Math.floor(Math.random() * 900), committed);
    const rep = checkMetricsIntegrity(file, committed);
    assert.deepEqual(rep.problems, [], `after kill ${i + 1}`);
  }
  const span = (committed[committed.length - 1].ts - committed[0].ts) / 86_400_000;
  assert.ok(committed.length > 500, `only ${committed.length} snapshots committed`);
  // A pass after the last crash completes whatever was cut off, and everything still adds up.
  const db = openDatabase(file);
  await rollupPass(db, new Date(committed[committed.length - 1].ts + 30 * MIN));
  db.close();
  const rep = checkMetricsIntegrity(file, committed);
  assert.deepEqual(rep.problems, []);
  process.stdout.write(`# ${committed.length} snapshots over ${span.toFixed(1)} simulated days; ${rep.raw} raw, ${rep.accountedByBucket} in buckets\n`);
});

test('the integrity checker notices a lost snapshot and a half-written bucket', async () => {
  const file = tempDbFile('checker-');
  const db = openDatabase(file);
  const ins = db.prepare('INSERT INTO metrics_raw (serial, ts, page_count) VALUES (?, ?, ?)');
  const t0 = Date.UTC(2026, 0, 1);
  const committed: CommittedSnapshot[] = [];
  for (let k = 0; k < 20 * 24 * 4; k++) {
    const ts = t0 + k * 15 * MIN;
    committed.push({ id: Number(ins.run('A', ts, k).lastInsertRowid), serial: 'A', ts });
  }
  await rollupPass(db, new Date(t0 + 20 * 86_400_000));
  db.close();
  assert.deepEqual(checkMetricsIntegrity(file, committed).problems, []);
  const db2 = openDatabase(file);
  db2.prepare('DELETE FROM metrics_hourly WHERE ts = (SELECT min(ts) FROM metrics_hourly)').run(); // raw already gone
  db2.prepare('UPDATE metrics_hourly SET sample_count = 3 WHERE ts = (SELECT max(ts) FROM metrics_hourly)').run();
  db2.close();
  const problems = checkMetricsIntegrity(file, committed).problems.join('\n');
  assert.match(problems, /has 3 samples, source has 4/);
  // The deleted hour's snapshots are still counted by their day bucket: not lost.
  assert.doesNotMatch(problems, /lost snapshot/);
  const db3 = openDatabase(file);
  db3.prepare('DELETE FROM metrics_daily WHERE ts = ?').run(t0);
  db3.prepare('DELETE FROM metrics_monthly').run();
  db3.close();
  assert.match(checkMetricsIntegrity(file, committed).problems.join('\n'), /lost snapshot/);
});
