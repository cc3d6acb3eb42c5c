// Test-only child: builds a small history across a DST change, a month end and a leap day, rolls it
// up, and prints every table. Run under different TZ values; the output must not change.
import { openDatabase } from '../../../src/store/db.js';
import { rollupOnce } from '../../../src/rollup/rollup.js';
import { applyRetention } from '../../../src/rollup/retention.js';
import { dump, inserter, reading, HOUR, MIN } from '../../kit/rollup-db.js';

const file = process.argv[2];
const db = openDatabase(file);
const insert = inserter(db);
const spans = [
  [Date.UTC(2026, 2, 28, 20), Date.UTC(2026, 2, 30, 4)], // Europe DST start 2026-03-29 01:00Z
  [Date.UTC(2026, 9, 24, 20), Date.UTC(2026, 9, 26, 4)], // Europe DST end 2026-10-25 01:00Z
  [Date.UTC(2028, 1, 28, 20), Date.UTC(2028, 2, 1, 4)], //  leap day 2028-02-29 and month end
];
async function main(): Promise<void> {
  for (const [a, b] of spans) {
    const rows = [];
    for (let ts = a; ts < b; ts += 15 * MIN) for (let i = 0; i < 3; i++) rows.push(reading(`SN${i}`, i, ts));
    insert(rows);
    await rollupOnce(db, new Date(b + 40 * 86_400_000));
    // raw and hourly go, daily stays (not after 2028: the 2026 days would be past 365 days)
    if (a < Date.UTC(2027, 0, 1)) await applyRetention(db, new Date(b + 40 * 86_400_000 + HOUR));
  }
  process.stdout.write(dump(db) + '\n');
}
main();
