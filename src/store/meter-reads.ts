// Billing meter reads (migration 17): one row per saved printer and billing period,
// written by billing/schedule.ts, listed per period with the delta against the printer's previous
// read (GET /api/billing/reads). Roll-ups and retention never touch this table.
import type { Statement } from 'better-sqlite3';
import type { DB } from './db.js';

export const READ_SOURCES = ['poll', 'nearest', 'missing'] as const;
export type ReadSource = (typeof READ_SOURCES)[number];

/** The counters a meter read keeps as columns (the rest of a reading's counters go to `extra`). */
export const READ_COUNTERS = ['page_count', 'mono_pages', 'color_pages', 'scan_count'] as const;
export type ReadCounter = (typeof READ_COUNTERS)[number];

export interface MeterRead {
  serial: string;
  period: string;
  due_at: number;
  read_at: number | null;
  source: ReadSource;
  counters: Partial<Record<ReadCounter, number>>;
  extra?: Record<string, number>;
  attempts: number;
}

/** A read as listed: the printer's identity beside it, and its previous read's counters. */
export interface ListedRead extends MeterRead {
  manufacturer: string | null;
  model: string | null;
  location: string | null;
  asset_number: string | null;
  previous: { period: string; read_at: number | null; counters: Partial<Record<ReadCounter, number>> } | null;
}

type Row = Record<string, unknown>;

const countersOf = (row: Row, prefix = ''): Partial<Record<ReadCounter, number>> => {
  const out: Partial<Record<ReadCounter, number>> = {};
  for (const c of READ_COUNTERS) if (typeof row[prefix + c] === 'number') out[c] = row[prefix + c] as number;
  return out;
};

// The previous read is the printer's newest earlier period that has counters (a `missing` one says
// nothing): one seek of meter_reads_serial_period per read.
const LIST_SQL = `
  SELECT m.*, d.manufacturer, d.model, d.location, d.asset_number,
    p.period AS p_period, p.read_at AS p_read_at, ${READ_COUNTERS.map((c) => `p.${c} AS p_${c}`).join(', ')}
  FROM meter_reads m
  LEFT JOIN devices d ON d.serial = m.serial
  LEFT JOIN meter_reads p ON p.id = (
    SELECT q.id FROM meter_reads q WHERE q.serial = m.serial AND q.period < m.period AND q.source <> 'missing'
    ORDER BY q.period DESC LIMIT 1)
  WHERE m.period = ?
  ORDER BY m.serial`;

export class MeterReadStore {
  private readonly insertStmt: Statement;
  private readonly readSerialsStmt: Statement;
  private readonly periodsStmt: Statement;
  private readonly listStmt: Statement;
  private readonly allStmt: Statement;

  constructor(db: DB) {
    const columns = ['serial', 'period', 'due_at', 'read_at', 'source', ...READ_COUNTERS, 'extra', 'attempts', 'created_at'];
    // The first read kept for a period stays: a read is never replaced by a later one.
    this.insertStmt = db.prepare(`INSERT OR IGNORE INTO meter_reads (${columns.join(', ')}) VALUES (${columns.map((c) => '@' + c).join(', ')})`);
    this.readSerialsStmt = db.prepare('SELECT serial FROM meter_reads WHERE period = ?').pluck();
    this.periodsStmt = db.prepare(
      `SELECT period, min(due_at) AS due_at, count(*) AS printers, sum(source = 'nearest') AS nearest, sum(source = 'missing') AS missing
       FROM meter_reads GROUP BY period ORDER BY period DESC`,
    );
    this.listStmt = db.prepare(LIST_SQL);
    this.allStmt = db.prepare('SELECT * FROM meter_reads ORDER BY period, serial');
  }

  /** Stores a read unless the printer has one for the period already; true when stored. */
  insert(r: MeterRead, now: number): boolean {
    const row: Row = {
      serial: r.serial, period: r.period, due_at: r.due_at, read_at: r.read_at, source: r.source,
      extra: r.extra && Object.keys(r.extra).length ? JSON.stringify(r.extra) : null, attempts: r.attempts, created_at: now,
    };
    for (const c of READ_COUNTERS) row[c] = r.counters[c] ?? null;
    return this.insertStmt.run(row).changes > 0;
  }

  /** The printers that have a read for `period`. */
  readSerials(period: string): Set<string> {
    return new Set(this.readSerialsStmt.all(period) as string[]);
  }

  /** Every period with reads, newest first, with how many reads and how many were not polled. */
  periods(): { period: string; due_at: number; printers: number; nearest: number; missing: number }[] {
    return this.periodsStmt.all() as { period: string; due_at: number; printers: number; nearest: number; missing: number }[];
  }

  /** Every read, by period then serial, one row at a time (the backup writes them: store/ndjson.ts). */
  *iterateAll(): Generator<MeterRead> {
    for (const row of this.allStmt.iterate() as IterableIterator<Row>) {
      yield {
        serial: row.serial as string,
        period: row.period as string,
        due_at: row.due_at as number,
        read_at: row.read_at as number | null,
        source: row.source as ReadSource,
        counters: countersOf(row),
        ...(row.extra ? { extra: JSON.parse(row.extra as string) as Record<string, number> } : {}),
        attempts: row.attempts as number,
      };
    }
  }

  /** The reads of `period`, in serial order, one row at a time (a CSV streams them). */
  *iterate(period: string): Generator<ListedRead> {
    for (const row of this.listStmt.iterate(period) as IterableIterator<Row>) {
      yield {
        serial: row.serial as string,
        period: row.period as string,
        due_at: row.due_at as number,
        read_at: row.read_at as number | null,
        source: row.source as ReadSource,
        counters: countersOf(row),
        ...(row.extra ? { extra: JSON.parse(row.extra as string) as Record<string, number> } : {}),
        attempts: row.attempts as number,
        manufacturer: row.manufacturer as string | null,
        model: row.model as string | null,
        location: row.location as string | null,
        asset_number: row.asset_number as string | null,
        previous: row.p_period === null ? null : { period: row.p_period as string, read_at: row.p_read_at as number | null, counters: countersOf(row, 'p_') },
      };
    }
  }
}

/**
 * The billed total of a read: page_count, else mono + colour (some printers report only those
 * two), as the Printers page shows it; undefined without either.
 */
export function totalOf(c: Partial<Record<ReadCounter, number>>): number | undefined {
  if (c.page_count !== undefined) return c.page_count;
  if (c.mono_pages !== undefined || c.color_pages !== undefined) return (c.mono_pages ?? 0) + (c.color_pages ?? 0);
  return undefined;
}

/** Each counter's growth since the previous read, where both reads have it. */
export function deltaOf(read: ListedRead): Partial<Record<ReadCounter | 'total', number>> {
  const out: Partial<Record<ReadCounter | 'total', number>> = {};
  if (!read.previous) return out;
  for (const c of READ_COUNTERS) {
    const now = read.counters[c];
    const before = read.previous.counters[c];
    if (now !== undefined && before !== undefined) out[c] = now - before;
  }
  const a = totalOf(read.counters);
  const b = totalOf(read.previous.counters);
  if (a !== undefined && b !== undefined) out.total = a - b;
  return out;
}
