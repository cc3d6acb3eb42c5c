// Structured, leveled logging: JSON lines on stdout (journald on the box), and a ring of recent
// lines in memory for the /logs endpoint. Secrets never reach here: request logging records
// method, path (without query), status and duration only.
import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';

export type { Logger };

export interface LogRecord {
  time: string;
  level: string;
  msg: string;
  [key: string]: unknown;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Keeps the last `capacity` log records. */
export class LogRing extends Writable {
  private readonly lines: LogRecord[] = [];
  constructor(private readonly capacity = 2000) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      try {
        const rec = JSON.parse(line);
        rec.level = LEVEL_NAMES[rec.level] ?? String(rec.level);
        rec.time = new Date(rec.time).toISOString();
        this.lines.push(rec);
        if (this.lines.length > this.capacity) this.lines.shift();
      } catch {
        // a line pino wrote is always JSON; anything else is not ours to keep
      }
    }
    done();
  }
  recent(): readonly LogRecord[] {
    return this.lines;
  }
}

export function createLogger(level: string, ring: LogRing): Logger {
  return pino(
    { level, base: undefined, timestamp: pino.stdTimeFunctions.epochTime },
    pino.multistream([
      { level: 'trace', stream: process.stdout },
      { level: 'trace', stream: ring },
    ]),
  );
}
