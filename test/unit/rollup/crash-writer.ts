// Test-only child for the durability test: writes polling rounds (one transaction each) and runs
// roll-up + retention on a simulated clock, forever, until killed. After each commit it prints
// `C <id>:<serial>:<ts> ...` on one line; a printed line means the round is durable.
// Usage: node crash-writer.js DBFILE START_MS DEVICES STEP_MS
import { openDatabase } from '../../../src/store/db.js';
import { rollupPass } from '../../../src/rollup/schedule.js';
import { configureWal } from '../../../src/rollup/retention.js';
import { writeSync } from 'node:fs';
import { inserter, reading } from '../../kit/rollup-db.js';

const [file, startArg, devArg, stepArg] = process.argv.slice(2);
const db = openDatabase(file);
configureWal(db);
const devices = Number(devArg);
const step = Number(stepArg);
const insert = inserter(db);
const last = db.prepare('SELECT max(ts) FROM metrics_raw').pluck().get() as number | null;
let clock = last === null ? Number(startArg) : last + step;
let round = 0;

async function main(): Promise<void> {
  for (;;) {
    const rows = Array.from({ length: devices }, (_, i) => reading(`SN${i}`, i, clock));
    const ids = insert(rows);
    writeSync(1, 'C ' + ids.map((id, i) => `${id}:${rows[i].serial}:${clock}`).join(' ') + '\n');
    clock += step;
    if (++round % 3 === 0) await rollupPass(db, new Date(clock));
  }
}
main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err) + '\n');
  process.exit(1);
});
