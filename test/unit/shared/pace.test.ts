// Paced starts (src/shared/pace.ts): a burst is started a few per turn of the event loop, and a timer
// due meanwhile runs between turns instead of after the whole burst.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { paced, STARTS_PER_TURN } from '../../../src/shared/pace.js';
import { limiter } from '../../../src/discovery/limiter.js';

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

test('paced: at most STARTS_PER_TURN start in a turn, the rest on later turns, in order', async () => {
  const n = 3 * STARTS_PER_TURN + 5;
  const started: number[] = [];
  const all = Array.from({ length: n }, (_, i) => paced().then(() => started.push(i)));
  await Promise.resolve();
  const counts = [started.length];
  while (started.length < n) {
    await nextTurn();
    counts.push(started.length);
  }
  await Promise.all(all);
  assert.equal(counts[0], STARTS_PER_TURN, `this turn: ${counts}`);
  for (let i = 1; i < counts.length; i++) assert.ok(counts[i] - counts[i - 1] <= STARTS_PER_TURN, `per turn: ${counts}`);
  assert.deepEqual(started, [...started].sort((a, b) => a - b), 'first come, first started');
});

test('a timer due during a burst of 256 starts runs before the burst has all started', async () => {
  const run = limiter(256);
  // Each start costs 0.1 ms of CPU, as opening a socket does: a turn of 16 outlasts the timer's 1 ms.
  const spin = () => {
    const end = performance.now() + 0.1;
    while (performance.now() < end);
  };
  let started = 0;
  let startedWhenTimerRan = -1;
  const timer = new Promise<void>((r) => setTimeout(() => ((startedWhenTimerRan = started), r()), 0));
  const tasks = Array.from({ length: 256 }, () => run(async () => void (spin(), started++)));
  await Promise.all([...tasks, timer]);
  assert.equal(started, 256);
  assert.ok(startedWhenTimerRan >= 0 && startedWhenTimerRan <= 2 * STARTS_PER_TURN, `started before the timer ran: ${startedWhenTimerRan}`);
});
