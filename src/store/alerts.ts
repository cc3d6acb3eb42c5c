// The alerts table (migration 11): alerts opened, cleared and acknowledged (alerts/service.ts).
import type { DB } from './db.js';
import type { AlertKind, AlertSeverity, Condition, OpenAlertKey } from '../model/alert-rules.js';

export interface AlertRow {
  id: number;
  serial: string;
  kind: AlertKind;
  supply: string;
  severity: AlertSeverity;
  message: string;
  opened_at: number;
  cleared_at: number | null;
  acknowledged_at: number | null;
}

export class AlertStore {
  private readonly s;
  constructor(private readonly db: DB) {
    this.s = {
      openOf: db.prepare('SELECT id, kind, supply FROM alerts WHERE serial = ? AND cleared_at IS NULL'),
      // OR IGNORE: the partial unique index keeps one open alert per key, whoever got there first.
      insert: db.prepare('INSERT OR IGNORE INTO alerts (serial, kind, supply, severity, message, opened_at) VALUES (?, ?, ?, ?, ?, ?)'),
      clear: db.prepare('UPDATE alerts SET cleared_at = ? WHERE id = ? AND cleared_at IS NULL'),
      get: db.prepare('SELECT * FROM alerts WHERE id = ?'),
      acknowledge: db.prepare('UPDATE alerts SET acknowledged_at = ? WHERE id = ? AND acknowledged_at IS NULL'),
      open: db.prepare('SELECT * FROM alerts WHERE cleared_at IS NULL ORDER BY opened_at DESC, id DESC LIMIT ?'),
      cleared: db.prepare('SELECT * FROM alerts WHERE cleared_at IS NOT NULL ORDER BY opened_at DESC, id DESC LIMIT ?'),
      openSerials: db.prepare('SELECT DISTINCT serial FROM alerts WHERE cleared_at IS NULL').pluck(),
      counts: db.prepare('SELECT count(*) AS open, count(*) FILTER (WHERE acknowledged_at IS NULL) AS unacknowledged FROM alerts WHERE cleared_at IS NULL'),
    };
  }

  openKeysOf(serial: string): OpenAlertKey[] {
    return this.s.openOf.all(serial) as OpenAlertKey[];
  }

  /** Opens and clears in one transaction; returns the rows that changed. */
  apply(serial: string, open: Condition[], clear: number[], now: number): { opened: AlertRow[]; cleared: AlertRow[] } {
    return this.db.transaction(() => {
      const cleared: AlertRow[] = [];
      for (const id of clear) if (this.s.clear.run(now, id).changes) cleared.push(this.get(id)!);
      const opened: AlertRow[] = [];
      for (const c of open) {
        const r = this.s.insert.run(serial, c.kind, c.supply, c.severity, c.message, now);
        if (r.changes) opened.push(this.get(Number(r.lastInsertRowid))!);
      }
      return { opened, cleared };
    })();
  }

  get(id: number): AlertRow | undefined {
    return this.s.get.get(id) as AlertRow | undefined;
  }

  /** Marks an alert acknowledged (the first time counts); undefined for an unknown id. */
  acknowledge(id: number, now: number): { row: AlertRow; changed: boolean } | undefined {
    const changed = this.s.acknowledge.run(now, id).changes > 0;
    const row = this.get(id);
    return row && { row, changed };
  }

  /** Open alerts newest first, then (with `history`) cleared ones newest first; at most `limit` in all. */
  list(history: boolean, limit: number): AlertRow[] {
    const open = this.s.open.all(limit) as AlertRow[];
    if (!history || open.length >= limit) return open;
    return [...open, ...(this.s.cleared.all(limit - open.length) as AlertRow[])];
  }

  serialsWithOpenAlerts(): string[] {
    return this.s.openSerials.all() as string[];
  }

  counts(): { open: number; unacknowledged: number } {
    return this.s.counts.get() as { open: number; unacknowledged: number };
  }
}
