// One log record as the box keeps it (the ring of recent lines, the card's log files, GET /logs),
// read from the JSON line pino wrote.

export interface LogRecord {
  time: string;
  level: string;
  msg: string;
  [key: string]: unknown;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** A line as pino writes it (numeric level, epoch ms) as a LogRecord (level name, RFC 3339 time). */
export function parseLogLine(line: string): LogRecord | undefined {
  if (!line) return undefined;
  try {
    const rec = JSON.parse(line);
    rec.level = LEVEL_NAMES[rec.level] ?? String(rec.level);
    rec.time = new Date(rec.time).toISOString();
    return rec;
  } catch {
    // a line pino wrote is always JSON (and its time valid); anything else is not ours to keep
    return undefined;
  }
}
