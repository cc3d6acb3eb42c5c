// Warnings, errors and fatal records kept on the data partition, so that /logs still shows them
// after a restart or a power cut (the journal is in memory only on the box: journald.conf.d).
// A pino stream (logger.ts gives it records of level warn and up). Bounded for a flash card:
// - batches: records wait up to `flushDelayMs` (or until `flushRecords` wait, or a fatal one
//   comes, or the process exits) and then go out as one write and one fdatasync;
// - a daily cap (UTC days) on records and bytes, counted from the files at start so that a crash
//   loop (systemd restarts the agent every 2 s, forever) cannot get around it; past the cap
//   records are counted, not written, and the day gets one summary line with that count when the
//   dropping ends (the day changes or the process exits);
// - two files of `fileBytes` at most (log-files.ts); `dailyBytes` <= `fileBytes` so a whole day
//   stays readable, which is what makes the count at start right.
// A write the card refuses (full, read-only, I/O error) never reaches the logger's caller: the
// batch waits for the next timer (bounded), and the failure is reported once through onProblem.
import { join } from 'node:path';
import { LogFiles, type FileStats } from './log-files.js';
import { parseLogLine, type LogRecord } from './log-record.js';
import { errorText } from '../shared/error-text.js';

export interface PersistentLogLimits {
  fileBytes: number;
  dailyRecords: number;
  dailyBytes: number;
  flushDelayMs: number;
  flushRecords: number;
  /** A longer record (a stack trace, a long message) is shortened to fit, and marked truncated. */
  maxLineBytes: number;
  /** How many stored records /logs is given at start (the newest). */
  keepEarlier: number;
}

// Figures and their cost: docs/performance.md, "Warnings and errors on the card".
export const DEFAULT_LIMITS: PersistentLogLimits = {
  fileBytes: 256 * 1024,
  dailyRecords: 1000,
  dailyBytes: 256 * 1024,
  flushDelayMs: 60_000,
  flushRecords: 50,
  maxLineBytes: 4096,
  keepEarlier: 2000,
};

export interface PersistentLogOptions extends Partial<PersistentLogLimits> {
  /** Clock and timer: the benchmark runs a simulated day through them. */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => () => void;
}

export interface PersistentLogStats extends FileStats {
  /** Records not written: over the daily cap, or lost with a batch the card refused. */
  dropped: number;
  pending: number;
}

const KEPT_LEVELS = new Set(['warn', 'error', 'fatal']);
/** Most records a refused batch may hold while it waits for the card (then the oldest go). */
const MAX_PENDING = 500;

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const byteLength = (s: string) => Buffer.byteLength(s, 'utf8') + 1; // with its "\n"

function unrefTimer(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms);
  t.unref(); // a waiting batch never keeps the process alive: exit flushes it
  return () => clearTimeout(t);
}

export class PersistentLog {
  /** Records stored before this start (oldest first), marked `previous_run: true`. */
  readonly earlier: LogRecord[];
  /** The last write failure, until a write succeeds again. */
  problem: string | undefined;
  /** Told when writes start failing (once per failing spell), outside any logger call. */
  onProblem?: (message: string) => void;

  private readonly files: LogFiles;
  private readonly limits: PersistentLogLimits;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => () => void;
  private pending: string[] = [];
  private cancelTimer: (() => void) | undefined;
  private retryAfter = 0;
  private droppedTotal = 0;
  // The current UTC day's accounting.
  private day: string;
  private dayRecords = 0;
  private dayBytes = 0;
  private daySummarized = false;
  private dayDropped = 0;
  private firstDropped = 0;

  constructor(dir: string, opts: PersistentLogOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS };
    for (const k of Object.keys(DEFAULT_LIMITS) as (keyof PersistentLogLimits)[]) this.limits[k] = opts[k] ?? DEFAULT_LIMITS[k];
    this.now = opts.now ?? Date.now;
    this.setTimer = opts.setTimer ?? unrefTimer;
    this.files = new LogFiles(dir, this.limits.fileBytes);
    this.day = utcDay(this.now());
    const stored: LogRecord[] = [];
    let lines: string[] = [];
    try {
      lines = this.files.readLines();
    } catch (err) {
      // An unreadable card must not stop the agent: it starts without the earlier records.
      this.problem = errorText(err);
    }
    for (const line of lines) {
      const rec = storedRecord(line);
      if (!rec) continue; // a line torn by a power cut, or not ours
      stored.push(rec);
      if (rec.dropped_day === this.day) this.daySummarized = true;
      else if (rec.time.startsWith(this.day)) {
        this.dayRecords++;
        this.dayBytes += byteLength(line);
      }
    }
    this.earlier = stored.slice(-this.limits.keepEarlier).map((r) => ({ ...r, previous_run: true }));
  }

  /** pino's stream interface: one serialized record (numeric level, epoch ms). */
  write(line: string): void {
    const rec = parseLogLine(line.trimEnd());
    if (!rec || !KEPT_LEVELS.has(rec.level)) return;
    this.rollDay();
    const text = fitLine(rec, this.limits.maxLineBytes);
    const bytes = byteLength(text);
    if (this.dayRecords >= this.limits.dailyRecords || this.dayBytes + bytes > this.limits.dailyBytes) {
      if (this.dayDropped === 0) this.firstDropped = this.now();
      this.dayDropped++;
      this.droppedTotal++;
      return;
    }
    this.dayRecords++;
    this.dayBytes += bytes;
    this.enqueue(text);
    // A fatal record comes just before the process dies: it goes out now.
    if (rec.level === 'fatal' || (this.pending.length >= this.limits.flushRecords && this.now() >= this.retryAfter)) this.flush();
    else this.arm();
  }

  /** Writes what waits (one write, one fdatasync). Never throws. */
  flush(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.pending.length === 0) return;
    try {
      this.files.append(this.pending.join('\n') + '\n');
      this.pending = [];
      this.problem = undefined;
      this.retryAfter = 0;
    } catch (err) {
      const first = this.problem === undefined;
      this.problem = errorText(err);
      this.retryAfter = this.now() + this.limits.flushDelayMs;
      this.arm();
      if (first && this.onProblem) {
        const report = this.onProblem;
        const message = this.problem;
        // Not from inside this write: the logger may be in the middle of a record.
        setImmediate(() => report(message));
      }
    }
  }

  /** Process exit: the day's summary if records were dropped, then what waits. */
  close(): void {
    this.summarizeDay();
    this.flush();
    try {
      this.files.close();
    } catch {
      // the process is ending: what was flushed is on the card, what failed was reported
    }
  }

  stats(): PersistentLogStats {
    return { ...this.files.stats, dropped: this.droppedTotal, pending: this.pending.length };
  }

  private enqueue(text: string): void {
    this.pending.push(text);
    if (this.pending.length > MAX_PENDING) {
      this.pending.shift();
      this.droppedTotal++;
    }
  }

  private arm(): void {
    if (this.cancelTimer || this.pending.length === 0) return;
    this.cancelTimer = this.setTimer(() => {
      this.cancelTimer = undefined;
      this.flush();
    }, this.limits.flushDelayMs);
  }

  private rollDay(): void {
    const today = utcDay(this.now());
    if (today === this.day) return;
    this.summarizeDay();
    this.day = today;
    this.dayRecords = 0;
    this.dayBytes = 0;
    this.daySummarized = false;
  }

  // One line a day at most (a restarted agent finds it in the files): a crash loop that keeps
  // hitting the cap writes nothing more that day. Its count is what the run that wrote it dropped.
  private summarizeDay(): void {
    if (this.dayDropped === 0) return;
    const n = this.dayDropped;
    this.dayDropped = 0;
    if (this.daySummarized) return;
    this.daySummarized = true;
    const { dailyRecords, dailyBytes } = this.limits;
    this.enqueue(
      JSON.stringify({
        time: new Date(this.now()).toISOString(),
        level: 'warn',
        msg: `${n} records dropped: the log store's daily cap (${dailyRecords} records, ${Math.round(dailyBytes / 1024)} KiB) was reached`,
        dropped: n,
        dropped_day: this.day,
        first_dropped: new Date(this.firstDropped).toISOString(),
      }),
    );
    this.arm();
  }
}

/** The store of `<dataDir>/log`, flushed when the process exits (SIGTERM's exit, a fatal error's). */
export function openPersistentLog(dataDir: string, opts: PersistentLogOptions = {}): PersistentLog {
  const store = new PersistentLog(join(dataDir, 'log'), opts);
  process.on('exit', () => store.close());
  return store;
}

function storedRecord(line: string): LogRecord | undefined {
  try {
    const rec = JSON.parse(line);
    const ok =
      typeof rec === 'object' && rec !== null && typeof rec.level === 'string' && typeof rec.time === 'string' && !Number.isNaN(Date.parse(rec.time));
    return ok ? rec : undefined;
  } catch {
    return undefined;
  }
}

/** The record as one line of at most `max` bytes: long strings are cut first, then every field but
 * time, level and msg goes. */
function fitLine(rec: LogRecord, max: number): string {
  const whole = JSON.stringify(rec);
  if (byteLength(whole) <= max) return whole;
  const room = Math.floor(max / 4); // most of a stack trace's useful frames
  const cut = (v: unknown) => {
    const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
    return s.length > room ? `${s.slice(0, room)}…` : v;
  };
  const short: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rec)) short[k] = k === 'time' || k === 'level' ? v : cut(v);
  short.truncated = true;
  const text = JSON.stringify(short);
  if (byteLength(text) <= max) return text;
  return JSON.stringify({ time: rec.time, level: rec.level, msg: String(rec.msg ?? '').slice(0, 512), truncated: true });
}
