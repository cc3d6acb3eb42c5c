// The announcement gate (src/discovery/announce-gate.ts) on a simulated clock: an address is read
// at most once a minute however often it announces (the newest announcement is read when the
// minute ends), at most `concurrency` reads run at once and the rest wait their turn, a goodbye
// makes the next announcement news, and beyond `maxAddresses` announcements are dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { AnnounceGate } from '../../../src/discovery/announce-gate.js';
import { simClock } from '../../kit/sim-clock.js';

const MINUTE = 60_000;

/** A gate whose reads are held open until released; records each read's address, item and time. */
function harness(opts: { concurrency?: number; maxAddresses?: number } = {}) {
  const clock = simClock(Date.parse('2026-11-28T10:00:00Z'));
  const reads: { address: string; item: number; at: number }[] = [];
  const open = new Map<string, () => void>();
  let inFlight = 0;
  let mostInFlight = 0;
  const gate = new AnnounceGate<number>({
    windowMs: MINUTE,
    concurrency: opts.concurrency ?? 32,
    maxAddresses: opts.maxAddresses ?? 4096,
    clock,
    read: (address, item) => {
      reads.push({ address, item, at: clock.now() });
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      return new Promise<void>((resolve) =>
        open.set(`${address}#${reads.length}`, () => {
          inFlight--;
          resolve();
        }),
      );
    },
  });
  /** Lets the gate's promises and the limiter's turns run. */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await turn();
  };
  const finishAll = async () => {
    for (const [k, done] of [...open]) {
      open.delete(k);
      done();
    }
    await settle();
  };
  return { clock, gate, reads, settle, finishAll, mostInFlight: () => mostInFlight };
}

test('an address announcing every second for five minutes is read once a minute, the newest announcement each time', async () => {
  const h = harness();
  for (let s = 0; s < 300; s++) {
    h.gate.offer('10.0.0.5', s);
    await h.settle();
    await h.finishAll();
    h.clock.advance(1000);
    await h.settle();
  }
  await h.finishAll();
  const minutes = h.reads.map((r) => Math.floor((r.at - h.reads[0].at) / MINUTE));
  assert.ok(h.reads.length >= 5 && h.reads.length <= 6, `${h.reads.length} reads in 5 minutes`);
  assert.equal(new Set(minutes).size, minutes.length, `at most one read a minute: ${minutes}`);
  assert.equal(h.reads[0].item, 0, 'the first announcement is read at once');
  for (let i = 1; i < h.reads.length; i++) {
    assert.ok(h.reads[i].at - h.reads[i - 1].at >= MINUTE, 'a minute apart at least');
    assert.equal(h.reads[i].item, Math.round((h.reads[i].at - h.reads[0].at) / 1000) - 1, 'the newest announcement before the minute ended');
  }
});

test('a flood of 1,000 announcements a minute from one address is one read a minute', async () => {
  const h = harness();
  for (let m = 0; m < 3; m++) {
    for (let i = 0; i < 1000; i++) h.gate.offer('10.0.0.6', m * 1000 + i);
    await h.settle();
    await h.finishAll();
    h.clock.advance(MINUTE);
    await h.settle();
  }
  await h.finishAll();
  assert.ok(h.reads.length <= 4, `${h.reads.length} reads for 3,000 announcements over 3 minutes`);
  assert.equal(h.gate.size <= 1, true);
});

test('many addresses at once: at most `concurrency` reads in flight, every address read, none dropped', async () => {
  const h = harness({ concurrency: 4 });
  for (let i = 0; i < 40; i++) assert.equal(h.gate.offer(`10.0.1.${i}`, i), 'read');
  await h.settle();
  assert.equal(h.reads.length, 4, 'four started, the rest wait their turn');
  while (h.reads.length < 40) await h.finishAll();
  await h.finishAll();
  assert.equal(h.mostInFlight(), 4);
  assert.deepEqual(new Set(h.reads.map((r) => r.address)).size, 40);
});

test('a goodbye makes the next announcement news: read at once, not at the end of the minute; what came before it is dropped', async () => {
  const h = harness();
  h.gate.offer('10.0.0.7', 1);
  await h.settle();
  await h.finishAll();
  h.clock.advance(5000);
  assert.equal(h.gate.offer('10.0.0.7', 2), 'coalesced');
  await h.settle();
  assert.equal(h.reads.length, 1, 'inside the minute: waits');
  h.gate.reset('10.0.0.7');
  await h.settle();
  assert.equal(h.reads.length, 1, 'the announcement from before the goodbye is stale: not read');
  assert.equal(h.gate.offer('10.0.0.7', 3), 'read', 'the next one is read at once');
  await h.settle();
  assert.deepEqual(h.reads.map((r) => r.item), [1, 3]);
  // A goodbye while a read is under way: the announcement after it is read as soon as that read ends.
  h.clock.advance(5000);
  h.gate.reset('10.0.0.7');
  assert.equal(h.gate.offer('10.0.0.7', 4), 'coalesced');
  await h.finishAll();
  assert.deepEqual(h.reads.map((r) => r.item), [1, 3, 4]);
});

test('beyond maxAddresses announcements are dropped and said so; an address forgotten after its minute frees its place', async () => {
  const h = harness({ maxAddresses: 3 });
  for (let i = 0; i < 3; i++) assert.equal(h.gate.offer(`10.0.2.${i}`, i), 'read');
  assert.equal(h.gate.offer('10.0.2.9', 9), 'dropped');
  await h.settle();
  await h.finishAll();
  h.clock.advance(MINUTE);
  await h.settle();
  assert.equal(h.gate.size, 0, 'nothing announced in the minute: forgotten');
  assert.equal(h.gate.offer('10.0.2.9', 9), 'read');
});
