// Temporary databases and readings for the roll-up tests and benches (not a test file itself).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type DB } from '../../src/store/db.js';

export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

export function tempDbFile(prefix = 'rollup-'): string {
  return join(mkdtempSync(join(tmpdir(), prefix)), 'printbox.db');
}

export function openTemp(prefix?: string): { db: DB; file: string } {
  const file = tempDbFile(prefix);
  return { db: openDatabase(file), file };
}

export interface RawIn {
  serial: string;
  ts: number;
  page_count?: number | null;
  color_pages?: number | null;
  mono_pages?: number | null;
  scan_count?: number | null;
  toner?: Record<string, unknown> | string | null;
}

export function inserter(db: DB): (rows: RawIn[]) => number[] {
  const st = db.prepare(
    `INSERT INTO metrics_raw (serial, ts, page_count, color_pages, mono_pages, scan_count, toner_levels)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  return db.transaction((rows: RawIn[]) =>
    rows.map((r) =>
      Number(
        st.run(
          r.serial, r.ts, r.page_count ?? null, r.color_pages ?? null, r.mono_pages ?? null, r.scan_count ?? null,
          r.toner == null ? null : typeof r.toner === 'string' ? r.toner : JSON.stringify(r.toner),
        ).lastInsertRowid,
      ),
    ),
  );
}

/** A deterministic fleet reading: counters grow with time, toner falls. */
export function reading(serial: string, idx: number, ts: number): RawIn {
  const k = Math.floor(ts / (15 * MIN));
  const base = (idx + 1) * 1000;
  const page = base + k * 3 + (k % 7);
  return {
    serial, ts, page_count: page, color_pages: Math.floor(page / 3), mono_pages: page - Math.floor(page / 3),
    scan_count: base + k, toner: { black: 100 - (k % 100), cyan: 50 + (k % 3) },
  };
}

/** Every table the roll-up touches, as one comparable string. */
export function dump(db: DB): string {
  const out: Record<string, unknown[]> = {};
  for (const t of ['metrics_raw', 'metrics_hourly', 'metrics_daily', 'metrics_monthly', 'rollup_state']) {
    out[t] = db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all();
  }
  return JSON.stringify(out);
}
