// What keeping warnings and errors on the card costs per day (docs/performance.md
// "Warnings and errors on the card").
//
//   npm run build && node dist/scripts/bench/log-writes.js [--dir /var/tmp/printbox-bench/log-writes] [--crash-runs 3000]
//     [--flush-delay-s 60] (another batch delay than the store's default, to weigh the trade-off)
//
// The real store (src/log/persistent-log.ts over real files and fdatasync, default limits) is fed
// a simulated UTC day of pino lines shaped like the agent's own warnings, on a simulated clock
// (its batch timers run at their simulated times), so a day takes seconds. For each scenario:
// records offered, written and dropped, write() calls and fsyncs (the store's own counters), bytes
// written, what the kernel sent to the block layer for this process (/proc/self/io write_bytes,
// page-granular; the ext4 journal's own writes are jbd2's, not counted) and the files' sizes.
import { readFileSync, rmSync, mkdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { PersistentLog, DEFAULT_LIMITS } from '../../src/log/persistent-log.js';
import { CURRENT, PREVIOUS } from '../../src/log/log-files.js';
import { simClock, type SimClock } from '../../test/kit/sim-clock.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const ROOT = opt('dir', '/var/tmp/printbox-bench/log-writes');
const CRASH_RUNS = Number(opt('crash-runs', '3000'));
const FLUSH_DELAY_MS = Number(opt('flush-delay-s', String(DEFAULT_LIMITS.flushDelayMs / 1000))) * 1000;
const DAY = 86_400_000;
const MIN = 60_000;
const START = Date.parse('2026-11-23T00:00:00Z');

// Lines as pino writes them (numeric level, epoch ms), with the fields the agent's records carry.
const W = 40;
const E = 50;
const F = 60;
const pinoLine = (level: number, time: number, msg: string, fields: Record<string, unknown>) => JSON.stringify({ level, time, ...fields, msg }) + '\n';
const registrationFailed = (t: number) =>
  pinoLine(W, t, 'server registration failed', { err: 'connect ECONNREFUSED 203.0.113.10:443', retry_s: 300 });
const pollFailed = (t: number, i: number) =>
  pinoLine(W, t, 'poll failed', { serial: `X8G90004${10 + i}`, ip: `192.0.2.${40 + i}`, err: 'address 192.0.2.' + (40 + i) + ' is outside discovery.allowed_ranges' });
const requestFailed = (t: number) =>
  pinoLine(E, t, 'request failed', {
    err: 'Error: SQLITE_BUSY: database is locked\n' + Array.from({ length: 12 }, (_, i) => `    at frame${i} (file:///opt/printbox/dist/src/api/routes/read.js:${40 + i}:17)`).join('\n'),
  });

/** One simulated event: at `at` ms into the day, these lines. */
type Event = { at: number; lines: (t: number) => string[] };

interface Result {
  name: string;
  offered: number;
  written: number;
  dropped: number;
  writes: number;
  syncs: number;
  bytes: number;
  blockBytes: number;
  files: number;
  ms: number;
}

function ioWriteBytes(): number {
  const m = /write_bytes: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

function filesSize(dir: string): number {
  return [CURRENT, PREVIOUS].reduce((n, f) => n + (existsSync(join(dir, f)) ? statSync(join(dir, f)).size : 0), 0);
}

function storedLines(dir: string): number {
  return [CURRENT, PREVIOUS].reduce((n, f) => n + (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean).length : 0), 0);
}

/** A day of one running agent. */
function runDay(name: string, events: Event[]): Result {
  const dir = join(ROOT, name.replace(/\W+/g, '-'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const clock = simClock(START);
  const io0 = ioWriteBytes();
  const t0 = performance.now();
  const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer, flushDelayMs: FLUSH_DELAY_MS });
  let offered = 0;
  for (const e of [...events].sort((a, b) => a.at - b.at)) {
    clock.advance(e.at - (clock.now() - START));
    for (const l of e.lines(clock.now())) {
      store.write(l);
      offered++;
    }
  }
  clock.advance(START + DAY - 1 - clock.now());
  store.close(); // the day ends with a SIGTERM: the summary, if any, is written
  return result(name, dir, store, offered, io0, t0);
}

/** A crash loop: systemd starts the agent every 2 s, each run logs a warning at start and dies
 * with a fatal error. Every run is a new store that counts the day from the files. */
function runCrashLoop(name: string, runs: number): Result & { lastRunsWrites: number } {
  const dir = join(ROOT, 'crash-loop');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const clock: SimClock = simClock(START + 8 * 60 * MIN);
  const io0 = ioWriteBytes();
  const t0 = performance.now();
  const total = { writes: 0, syncs: 0, bytes: 0, dropped: 0 };
  let offered = 0;
  let lastRunsWrites = 0;
  for (let run = 0; run < runs; run++) {
    const store = new PersistentLog(dir, { now: clock.now, setTimer: clock.setTimer, flushDelayMs: FLUSH_DELAY_MS });
    store.write(pinoLine(W, clock.now(), 'no account exists yet: sign in at /login with the setup code', { setup_code_file: '/var/lib/printbox/setup-code' }));
    clock.advance(1500);
    store.write(pinoLine(F, clock.now(), 'uncaught exception', { err: 'TypeError: Cannot read properties of undefined (reading "x")\n    at run (file:///opt/printbox/dist/src/commands/serve.js:80:21)' }));
    store.close();
    offered += 2;
    const s = store.stats();
    total.writes += s.writes;
    total.syncs += s.syncs;
    total.bytes += s.bytes;
    total.dropped += s.dropped;
    if (run >= runs - 1000) lastRunsWrites += s.writes;
    clock.advance(500);
  }
  return {
    name,
    offered,
    written: storedLines(dir),
    ...total,
    blockBytes: ioWriteBytes() - io0,
    files: filesSize(dir),
    ms: performance.now() - t0,
    lastRunsWrites,
  };
}

function result(name: string, dir: string, store: PersistentLog, offered: number, io0: number, t0: number): Result {
  const s = store.stats();
  return { name, offered, written: storedLines(dir), dropped: s.dropped, writes: s.writes, syncs: s.syncs, bytes: s.bytes, blockBytes: ioWriteBytes() - io0, files: filesSize(dir), ms: performance.now() - t0 };
}

const every = (stepMs: number, lines: (t: number) => string[], from = 0): Event[] =>
  Array.from({ length: Math.floor((DAY - from) / stepMs) }, (_, i) => ({ at: from + i * stepMs, lines }));

const results: Result[] = [];
// Quiet: a handful of warnings (a slow event-stream client, a TLS file mid-change, a sign-in rate limit).
results.push(runDay('quiet: 6 warnings', every(4 * 60 * MIN, (t) => [pinoLine(W, t, 'dropping a slow event-stream client', {})])));
// Typical for a troubled site: the central server unreachable all day (registration retried at the
// backoff's 5-minute ceiling) and 2 printers whose reads fail at every 15-minute round. (A printer
// that is simply off logs nothing at warn: it is marked not responding.)
results.push(
  runDay('typical: server down, 2 printers failing', [
    ...every(5 * MIN, (t) => [registrationFailed(t)], 17_000),
    ...every(15 * MIN, (t) => [pollFailed(t, 0), pollFailed(t, 1)]),
  ]),
);
// The most fsyncs the cap allows: one warning a minute, each batch alone (flush delay 60 s).
results.push(runDay('trickle: a warning a minute', every(MIN, (t) => [registrationFailed(t)], 1000)));
// Flood: a request failing 10 times a second all day, with its stack trace.
results.push(runDay('flood: 10 errors/s with stacks', every(100, (t) => [requestFailed(t)])));
const crash = runCrashLoop(`crash loop: ${CRASH_RUNS} runs, 2 s apart`, CRASH_RUNS);
results.push(crash);

const kib = (n: number) => (n / 1024).toFixed(1);
console.log(`limits: ${JSON.stringify({ ...DEFAULT_LIMITS, flushDelayMs: FLUSH_DELAY_MS })}`);
console.log('| scenario (one UTC day) | records offered | stored | dropped | write() calls | fsyncs | KiB written | KiB to block layer | files KiB | run ms |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(`| ${r.name} | ${r.offered} | ${r.written} | ${r.dropped} | ${r.writes} | ${r.syncs} | ${kib(r.bytes)} | ${kib(r.blockBytes)} | ${kib(r.files)} | ${r.ms.toFixed(0)} |`);
}
console.log(`crash loop: write() calls in its last 1000 runs: ${crash.lastRunsWrites}`);
