// Structured, leveled logging: JSON lines on stdout (journald on the box), a ring of recent
// lines in memory for the /logs endpoint, and warnings and up on the card (persistent-log.ts).
// Secrets never reach here: request logging records method, path (without query), status and
// duration only.
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';
import { fstatSync } from 'node:fs';
import type { PersistentLog } from './persistent-log.js';
import { parseLogLine, type LogRecord } from './log-record.js';

export type { Logger };

/** Keeps the last `capacity` log records. */
export class LogRing extends Writable {
  private readonly lines: LogRecord[] = [];
  private earlier: readonly LogRecord[] = [];
  constructor(private readonly capacity = 2000) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      const rec = parseLogLine(line);
      if (!rec) continue;
      this.lines.push(rec);
      if (this.lines.length > this.capacity) this.lines.shift();
    }
    done();
  }
  /** Records kept from before this process started (persistent-log.ts), shown before this run's. */
  setEarlier(records: readonly LogRecord[]): void {
    this.earlier = records;
  }
  /** The earlier runs' records, then this run's: write order, not sorted by time (a box without a
   * real-time clock starts with a wrong one until NTP answers). */
  all(): readonly LogRecord[] {
    return this.earlier.length === 0 ? this.lines : [...this.earlier, ...this.lines];
  }
}


// syslog priorities (RFC 5424) of pino's levels: debug, info, warning, err, crit.
const PRIORITY: Record<number, number> = { 10: 7, 20: 7, 30: 6, 40: 4, 50: 3, 60: 2 };

/**
 * stdout for journald: each line begins with its priority as `<N>`, which journald takes as the
 * line's priority and strips (SyslogLevelPrefix=, on by default), so `journalctl -p err` finds
 * the agent's errors. pino hands a stream marked with its metadata symbol the record's level.
 */
export function journalStdout(out: { write(s: string): unknown } = process.stdout) {
  return {
    [Symbol.for('pino.metadata')]: true,
    lastLevel: 30,
    write(line: string) {
      out.write(`<${PRIORITY[this.lastLevel] ?? 6}>${line}`);
    },
  };
}

/** Whether stdout is the journal: systemd names its stream in JOURNAL_STREAM (device:inode), and a
 * child that inherited the variable but writes elsewhere (a pipe, a terminal) must not match. */
function stdoutIsJournal(): boolean {
  const stream = process.env.JOURNAL_STREAM;
  if (!stream) return false;
  try {
    const st = fstatSync(1);
    return stream === `${st.dev}:${st.ino}`;
  } catch {
    return false;
  }
}

/** The agent's logger. With `store`, warnings and errors also go to the card (persistent-log.ts)
 * and the ring shows what it kept from before this start. */
export function createLogger(level: string, ring: LogRing, store?: PersistentLog): Logger {
  const stdout = stdoutIsJournal() ? journalStdout() : process.stdout;
  const log = pino(
    { level, base: undefined, timestamp: pino.stdTimeFunctions.epochTime },
    pino.multistream([
      { level: 'trace', stream: stdout },
      { level: 'trace', stream: ring },
      ...(store ? [{ level: 'warn' as const, stream: store }] : []),
    ]),
  );
  if (store) {
    ring.setEarlier(store.earlier);
    store.onProblem = (message) => log.warn({ err: message }, 'warnings and errors cannot be written to the data partition: kept in memory only');
    if (store.problem) log.warn({ err: store.problem }, 'warnings and errors stored before this start could not be read');
  }
  return log;
}
