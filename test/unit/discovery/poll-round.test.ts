// A scheduled polling round reports what it cost, and a round that took longer than the polling
// interval is reported as late (a large site's round may outlast its interval; the
// next round waits for it, and the log says so rather than the fleet silently being read less
// often). The clock is the test's: no timing is measured.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runPollingRound } from '../../../src/discovery/schedule.js';
import type { Snapshot } from '../../../src/model/device.js';

function recorder() {
  const lines: { level: 'info' | 'warn'; obj: Record<string, unknown>; msg: string }[] = [];
  const log = {
    info: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', obj, msg }),
  };
  return { lines, log: log as unknown as Parameters<typeof runPollingRound>[2] };
}

/** A discovery whose round takes `minutes` on the test's clock and yields `n` snapshots. */
function discoveryTaking(clock: { t: number }, minutes: number, n: number, stopped = false) {
  return {
    stopped,
    collectSaved: async () => {
      clock.t += minutes * 60_000;
      return Array.from({ length: n }, (_, i) => ({ serial: `P${i}`, ts: clock.t, id: i + 1 }) as Snapshot);
    },
  };
}

test('a round within its interval is reported done, with its duration, CPU and snapshots, and not late', async () => {
  const clock = { t: 1_000_000 };
  const { lines, log } = recorder();
  const report = await runPollingRound(discoveryTaking(clock, 3, 7), 15, log, () => clock.t);
  assert.equal(report?.late, false);
  assert.equal(report?.duration_ms, 3 * 60_000);
  assert.deepEqual(lines.map((l) => [l.level, l.msg]), [['info', 'polling round done']]);
  assert.equal(lines[0].obj.snapshots, 7);
  assert.equal(lines[0].obj.duration_ms, 180_000);
  assert.equal(typeof lines[0].obj.cpu_ms, 'number');
  if (process.platform === 'linux') assert.equal(typeof lines[0].obj.write_bytes, 'number', 'bytes written come from /proc/self/io');
});

test('a round longer than its interval is reported late, naming its duration and the interval', async () => {
  const clock = { t: 1_000_000 };
  const { lines, log } = recorder();
  const report = await runPollingRound(discoveryTaking(clock, 16, 2000), 15, log, () => clock.t);
  assert.equal(report?.late, true);
  assert.deepEqual(lines.map((l) => [l.level, l.msg.split(':')[0]]), [
    ['info', 'polling round done'],
    ['warn', 'polling round ran late'],
  ]);
  assert.equal(lines[0].obj.late, true);
  assert.deepEqual(lines[1].obj, { duration_ms: 16 * 60_000, interval_minutes: 15 });
});

test('a round exactly as long as its interval is not late', async () => {
  const clock = { t: 0 };
  const { lines, log } = recorder();
  const report = await runPollingRound(discoveryTaking(clock, 15, 1), 15, log, () => clock.t);
  assert.equal(report?.late, false);
  assert.equal(lines.filter((l) => l.level === 'warn').length, 0);
});

test('a round stopped by shutdown reports nothing (it has logged "polling round stopped" itself)', async () => {
  const clock = { t: 0 };
  const { lines, log } = recorder();
  const report = await runPollingRound(discoveryTaking(clock, 20, 0, true), 15, log, () => clock.t);
  assert.equal(report, undefined);
  assert.deepEqual(lines, []);
});

// Under the unit's --expose-gc a round ends with a collection that gives back the pages its
// garbage grew the heap into (a real V8 in a child process; without the flag nothing happens).
test("a round's end gives back the heap pages its garbage took (the unit's --expose-gc)", async () => {
  const { spawnSync } = await import('node:child_process');
  const schedule = new URL('../../../src/discovery/schedule.js', import.meta.url).href;
  const child = (flags: string[]) => {
    const script = `
      const { runPollingRound } = await import(${JSON.stringify(schedule)});
      let before = 0;
      // A round whose work leaves 100,000s of objects behind, still held when it ends.
      let held = [];
      const discovery = { stopped: false, collectSaved: async () => {
        for (let r = 0; r < 6; r++) { const a = []; for (let i = 0; i < 200000; i++) a.push({ i, s: 'v' + i }); held.push(a); }
        held = held.slice(-1).map((a) => a.slice(0, 1000));
        before = process.memoryUsage().heapTotal;
        return [];
      } };
      await runPollingRound(discovery, 15, { info() {}, warn() {} }, Date.now);
      console.log(JSON.stringify({ before, after: process.memoryUsage().heapTotal }));`;
    const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { before: number; after: number };
  };
  const withGc = child(['--max-semi-space-size=1', '--expose-gc']);
  assert.ok(withGc.after < withGc.before / 2, `heap ${(withGc.before / 2 ** 20).toFixed(1)} -> ${(withGc.after / 2 ** 20).toFixed(1)} MiB`);
  const without = child(['--max-semi-space-size=1']);
  assert.ok(without.after > without.before / 2, 'without the flag the round leaves the heap as it was');
});
