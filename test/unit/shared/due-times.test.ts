// The polling schedule's clock (src/shared/due-times.ts), on simulated time: a minute tick checks
// whether a run is due. The next run is due one interval after the previous one was due, so a
// 1-minute interval gives a run every minute whatever the ticks' drift; a round longer than the
// interval, a suspended VM and a clock step cost the runs they cover, never more, and never a burst.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DueTimes } from '../../../src/shared/due-times.js';

const MIN = 60_000;
const T0 = Date.parse('2026-11-28T12:32:00Z');

/** Minute ticks from `from` for `minutes`, each `jitter(i)` ms off the minute; the times runs were taken. */
function ticks(d: DueTimes, from: number, minutes: number, intervalMs: number, jitter: (i: number) => number): number[] {
  const runs: number[] = [];
  for (let i = 1; i <= minutes; i++) {
    const t = from + i * MIN + jitter(i);
    if (d.take(t, intervalMs)) runs.push(t);
  }
  return runs;
}

test('drift: a 1-minute interval runs every minute for ten hours, whichever side of the minute the ticks land', () => {
  const d = new DueTimes();
  d.start(T0 + 5, MIN); // the first round ran 5 ms after its tick
  // Ticks up to 400 ms late or 3 ms early (node-cron's timer): the old rule skipped every other one.
  const runs = ticks(d, T0, 600, MIN, (i) => (i % 3 === 0 ? -3 : (i * 37) % 400));
  assert.equal(runs.length, 600);
  for (let i = 1; i < runs.length; i++) assert.ok(Math.abs(runs[i] - runs[i - 1] - MIN) < 1000, `run ${i} is ${runs[i] - runs[i - 1]} ms after the one before`);
});

test('a 2-minute interval runs every second tick; 15 minutes, every fifteenth', () => {
  for (const n of [2, 15]) {
    const d = new DueTimes();
    d.start(T0 + 2, n * MIN);
    const runs = ticks(d, T0, 120, n * MIN, (i) => (i % 2 ? 250 : -1));
    assert.equal(runs.length, 120 / n, `${n}-minute interval`);
    for (let i = 1; i < runs.length; i++) assert.ok(Math.abs(runs[i] - runs[i - 1] - n * MIN) < 1000);
  }
});

test('a round longer than the interval: the next runs at the first check after it, then on the grid again, no burst', () => {
  const d = new DueTimes();
  d.start(T0, MIN);
  assert.equal(d.take(T0 + MIN, MIN), true);
  // The round took 3.5 minutes: the ticks meanwhile were skipped (noOverlap); the next tick is at +5.
  assert.equal(d.take(T0 + 5 * MIN, MIN), true, 'due at once after the long round');
  assert.equal(d.take(T0 + 5 * MIN + 10, MIN), false, 'the missed runs are not made up');
  assert.equal(d.take(T0 + 6 * MIN, MIN), true, 'back on the minute');
});

test('a suspended VM: thirty minutes asleep cost thirty runs, and the first tick after it runs once', () => {
  const d = new DueTimes();
  d.start(T0, MIN);
  assert.equal(d.take(T0 + MIN, MIN), true);
  const woke = T0 + 31 * MIN + 20_000;
  assert.equal(d.take(woke, MIN), true);
  assert.equal(d.take(woke + 1000, MIN), false);
  assert.ok(d.dueAt! > woke && d.dueAt! - woke <= MIN, 'the next is the first due time ahead');
  assert.equal(d.take(T0 + 32 * MIN, MIN), true);
});

test('the clock stepped: an hour forward runs once then keeps the grid; an hour back plans afresh, within one interval', () => {
  const fwd = new DueTimes();
  fwd.start(T0, 15 * MIN);
  assert.equal(fwd.take(T0 + 60 * MIN + 5 * MIN, 15 * MIN), true);
  assert.equal(fwd.take(T0 + 66 * MIN, 15 * MIN), false);
  assert.equal(fwd.take(T0 + 75 * MIN, 15 * MIN), true, 'on the old grid: 12:32 + 75 min');
  const back = new DueTimes();
  back.start(T0, 15 * MIN);
  const stepped = T0 - 60 * MIN;
  assert.equal(back.take(stepped, 15 * MIN), false, 'nothing runs twice for the hour lived again');
  const runs = ticks(back, stepped, 60, 15 * MIN, () => 0);
  assert.equal(runs.length, 4, 'then every fifteen minutes');
  assert.equal(runs[0], stepped + 15 * MIN);
});

test('an interval shortened runs within the new interval; lengthened, the next is one old interval away, then the new one', () => {
  const d = new DueTimes();
  d.start(T0, 60 * MIN);
  assert.equal(d.take(T0 + MIN, MIN), false, 'replanned from now');
  assert.equal(d.take(T0 + 2 * MIN, MIN), true);
  assert.equal(d.take(T0 + 3 * MIN, 15 * MIN), true);
  assert.equal(d.take(T0 + 4 * MIN, 15 * MIN), false);
  assert.equal(d.take(T0 + 18 * MIN, 15 * MIN), true);
});
