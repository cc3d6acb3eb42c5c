// The warnings-and-errors store on the data partition (src/log/persistent-log.ts, log-files.ts):
// real files in a temporary directory, a simulated clock and timers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PersistentLog, DEFAULT_LIMITS } from '../../../src/log/persistent-log.js';
import { CURRENT, PREVIOUS } from '../../../src/log/log-files.js';
import { simClock as sim } from '../../kit/sim-clock.js';
import { cannotMount, fill, mountCard, unfill, unmountCards } from '../../kit/card.js';

const DAY = 86_400_000;
const START = Date.parse('2026-11-23T08:00:00Z');
const simClock = (start = START) => sim(start);

const tmp = () => mkdtempSync(join(tmpdir(), 'printbox-plog-'));
const line = (level: number, t: number, msg: string, extra: Record<string, unknown> = {}) => JSON.stringify({ level, time: t, ...extra, msg }) + '\n';
const fileLines = (dir: string, name = CURRENT) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean) : []);
const parsed = (dir: string) => [...fileLines(dir, PREVIOUS), ...fileLines(dir, CURRENT)].map((l) => JSON.parse(l));

test('warnings wait for the batch delay, then go out as one write; info and debug are not kept', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = simClock();
  const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
  for (let i = 0; i < 10; i++) store.write(line(40 + (i % 2) * 10, clock.now(), `w${i}`));
  store.write(line(30, clock.now(), 'info'));
  store.write(line(20, clock.now(), 'debug'));
  assert.equal(store.stats().writes, 0, 'nothing written before the delay');
  clock.advance(DEFAULT_LIMITS.flushDelayMs - 1);
  assert.equal(store.stats().writes, 0);
  clock.advance(1);
  assert.equal(store.stats().writes, 1);
  const recs = parsed(dir);
  assert.deepEqual(recs.map((r) => r.msg), Array.from({ length: 10 }, (_, i) => `w${i}`));
  assert.deepEqual([...new Set(recs.map((r) => r.level))].sort(), ['error', 'warn']);
  assert.equal(recs[0].time, new Date(START).toISOString());
});

test('a full batch and a fatal record are written at once', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = simClock();
  const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
  for (let i = 0; i < DEFAULT_LIMITS.flushRecords; i++) store.write(line(40, clock.now(), `w${i}`));
  assert.equal(store.stats().writes, 1);
  store.write(line(60, clock.now(), 'dying'));
  assert.equal(store.stats().writes, 2);
  assert.equal(parsed(dir).at(-1).msg, 'dying');
});

test('a flood is capped per day: 1000 records, one summary line with the count, a bounded number of writes', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = simClock();
  const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
  for (let i = 0; i < 20_000; i++) {
    store.write(line(50, clock.now(), `e${i}`));
    if (i % 100 === 0) clock.advance(1000);
  }
  store.close();
  const recs = parsed(dir);
  assert.equal(recs.length, DEFAULT_LIMITS.dailyRecords + 1);
  const summary = recs.at(-1);
  assert.equal(summary.dropped, 20_000 - DEFAULT_LIMITS.dailyRecords);
  assert.equal(summary.dropped_day, '2026-11-23');
  assert.match(summary.msg, /^19000 records dropped: the log store's daily cap \(1000 records, 256 KiB\) was reached$/);
  const s = store.stats();
  assert.ok(s.writes <= DEFAULT_LIMITS.dailyRecords / DEFAULT_LIMITS.flushRecords + 1, `writes ${s.writes}`);
  assert.equal(s.dropped, 19_000);

  // The next day takes records again.
  const next = new PersistentLog(dir, { now: () => START + DAY, setTimer: clock.setTimer });
  next.write(line(40, START + DAY, 'tomorrow'));
  next.close();
  assert.equal(parsed(dir).at(-1).msg, 'tomorrow');
});

test('the cap holds across restarts: a crash loop writes nothing more once the day is full, and one summary only', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = simClock();
  let writesAfterFull = 0;
  for (let run = 0; run < 1500; run++) {
    const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
    const full = run >= DEFAULT_LIMITS.dailyRecords + 1; // the run after the one that dropped first
    store.write(line(60, clock.now(), `uncaught exception ${run}`));
    store.close();
    if (full) writesAfterFull += store.stats().writes;
    clock.advance(2000); // RestartSec=2s
  }
  const recs = parsed(dir);
  assert.equal(recs.filter((r) => r.level === 'fatal').length, DEFAULT_LIMITS.dailyRecords);
  assert.equal(recs.filter((r) => r.dropped_day).length, 1);
  assert.equal(writesAfterFull, 0);
});

test('the bytes are capped too: two files of 256 KiB at most, rotation keeps the newest, long records are shortened', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = simClock();
  const big = 'x'.repeat(20_000);
  for (let day = 0; day < 6; day++) {
    const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
    for (let i = 0; i < 2000; i++) store.write(line(50, clock.now(), `d${day} r${i}`, { err: i % 10 === 0 ? big : 'short' }));
    store.close();
    clock.advance(DAY);
  }
  const sizes = [CURRENT, PREVIOUS].map((f) => statSync(join(dir, f)).size);
  for (const size of sizes) assert.ok(size <= DEFAULT_LIMITS.fileBytes, `file of ${size} bytes`);
  for (const l of [...fileLines(dir, PREVIOUS), ...fileLines(dir, CURRENT)]) assert.ok(Buffer.byteLength(l) + 1 <= DEFAULT_LIMITS.maxLineBytes);
  const recs = parsed(dir);
  const shortened = recs.filter((r) => r.truncated);
  assert.ok(shortened.length > 0);
  assert.ok(shortened.every((r) => r.err.length < 2000 && r.err.endsWith('…')));
  // The newest day is there whole (its records and its summary), in order.
  const last = recs.filter((r) => String(r.msg).startsWith('d5 '));
  assert.ok(last.length > 500, `${last.length} records of the last day`);
  assert.deepEqual(last.map((r) => Number(/r(\d+)/.exec(r.msg)![1])), [...last.keys()]);
  assert.equal(recs.at(-1).dropped_day, '2026-11-28');
});

test('a torn last line (power cut mid-batch) is skipped on reading and cut off before the next write', (t) => {
  const dir = tmp();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = simClock();
  const first = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
  first.write(line(40, clock.now(), 'one'));
  first.write(line(50, clock.now(), 'two'));
  first.close();
  appendFileSync(join(dir, CURRENT), '{"level":"error","time":"2026-11-23T08:00:01.000Z","msg":"thr');

  const second = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
  assert.deepEqual(second.earlier.map((r) => [r.msg, r.previous_run]), [['one', true], ['two', true]]);
  second.write(line(40, clock.now(), 'four'));
  second.close();
  assert.deepEqual(fileLines(dir).map((l) => JSON.parse(l).msg), ['one', 'two', 'four']);
});

test('a card that refuses the write: no throw, reported once, written when it takes writes again', async (t) => {
  const root = tmp();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'log');
  writeFileSync(dir, 'a file where the directory should be'); // every write fails (ENOTDIR / EEXIST)
  const clock = simClock();
  const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
  const reports: string[] = [];
  store.onProblem = (m) => reports.push(m);
  store.write(line(60, clock.now(), 'fatal while the card is bad'));
  store.write(line(60, clock.now(), 'again'));
  await new Promise((r) => setImmediate(r));
  assert.equal(reports.length, 1);
  assert.ok(store.problem);
  assert.equal(store.stats().pending, 2);

  rmSync(dir);
  clock.advance(DEFAULT_LIMITS.flushDelayMs);
  assert.equal(store.problem, undefined);
  assert.deepEqual(fileLines(dir).map((l) => JSON.parse(l).msg), ['fatal while the card is bad', 'again']);
});

test('a card that fills up mid-batch: the part written is taken back, the batch goes out whole once there is room', { skip: cannotMount }, (t) => {
  const card = mountCard(1);
  t.after(unmountCards);
  const dir = join(card, 'log');
  const clock = simClock();
  const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer });
  store.write(line(40, clock.now(), 'before the card filled'));
  store.flush();
  fill(card);
  const filler = join(card, 'filler');
  truncateSync(filler, statSync(filler).size - 4096); // room for one page: part of the next batch
  const msgs = Array.from({ length: DEFAULT_LIMITS.flushRecords }, (_, i) => `record ${i} ${'.'.repeat(120)}`);
  for (const m of msgs) store.write(line(50, clock.now(), m));
  assert.match(String(store.problem), /ENOSPC|no space/i);
  assert.deepEqual(fileLines(dir).map((l) => JSON.parse(l).msg), ['before the card filled'], 'nothing of the failed batch is left');

  unfill(card);
  clock.advance(DEFAULT_LIMITS.flushDelayMs);
  assert.equal(store.problem, undefined);
  assert.deepEqual(fileLines(dir).map((l) => JSON.parse(l).msg), ['before the card filled', ...msgs]);
});
