// The `notification_outbox` table (migration 12; `message` migration 20) and the `scheduled_mail`
// table beside it: the statements behind notify/outbox.ts, which owns what a row means (its
// alerts, its prepared message, the digest window, how many rows are kept). Rows here carry their
// JSON columns as text.
import type { DB } from './db.js';

/** A notification_outbox row as stored: `alerts` and `message` are JSON text. */
export interface OutboxRowText {
  id: number;
  channel: string;
  target: string;
  alerts: string;
  message: string | null;
  state: string;
  attempts: number;
  created_at: number;
  collect_until: number;
  next_attempt_at: number;
  sent_at: number | null;
  last_error: string | null;
}

export class OutboxRows {
  private readonly s;

  constructor(private readonly db: DB) {
    this.s = {
      // The row still collecting for this recipient: pending, never tried, window still open.
      collecting: db.prepare(
        "SELECT * FROM notification_outbox WHERE channel = ? AND target = ? AND state = 'pending' AND attempts = 0 AND collect_until > ? AND message IS NULL ORDER BY id DESC LIMIT 1",
      ),
      insertMessage: db.prepare("INSERT INTO notification_outbox (channel, target, alerts, message, created_at, collect_until, next_attempt_at) VALUES (?, ?, '[]', ?, ?, ?, ?)"),
      scheduledDone: db.prepare('SELECT 1 FROM scheduled_mail WHERE key = ?').pluck(),
      markScheduled: db.prepare('INSERT INTO scheduled_mail (key, due_at, done_at, items, recipients) VALUES (?, ?, ?, ?, ?)'),
      insert: db.prepare('INSERT INTO notification_outbox (channel, target, alerts, created_at, collect_until, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)'),
      setAlerts: db.prepare('UPDATE notification_outbox SET alerts = ? WHERE id = ?'),
      get: db.prepare('SELECT * FROM notification_outbox WHERE id = ?'),
      due: db.prepare("SELECT * FROM notification_outbox WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"),
      nextDue: db.prepare("SELECT min(next_attempt_at) FROM notification_outbox WHERE state = 'pending'").pluck(),
      sent: db.prepare("UPDATE notification_outbox SET state = 'sent', attempts = attempts + 1, sent_at = ?, last_error = NULL WHERE id = ?"),
      retry: db.prepare('UPDATE notification_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?'),
      failed: db.prepare("UPDATE notification_outbox SET state = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?"),
      pruneState: db.prepare('DELETE FROM notification_outbox WHERE state = ? AND id NOT IN (SELECT id FROM notification_outbox WHERE state = ? ORDER BY id DESC LIMIT ?)'),
      list: db.prepare('SELECT * FROM notification_outbox ORDER BY id DESC LIMIT ?'),
      counts: db.prepare("SELECT count(*) FILTER (WHERE state = 'pending') AS pending, count(*) FILTER (WHERE state = 'sent') AS sent, count(*) FILTER (WHERE state = 'failed') AS failed FROM notification_outbox"),
    };
  }

  /** Runs `fn` in one transaction (IMMEDIATE when `immediate`: another process may be writing). */
  transaction<T>(fn: () => T, immediate = false): T {
    const t = this.db.transaction(fn);
    return immediate ? t.immediate() : t();
  }

  /** The row still collecting alerts for this recipient at `now`, if any. */
  collecting(channel: string, target: string, now: number): OutboxRowText | undefined {
    return this.s.collecting.get(channel, target, now) as OutboxRowText | undefined;
  }

  setAlerts(id: number, alerts: string): void {
    this.s.setAlerts.run(alerts, id);
  }

  /** A new row of alerts, collecting (and first due) until `until`; returns its id. */
  insert(channel: string, target: string, alerts: string, now: number, until: number): number {
    return Number(this.s.insert.run(channel, target, alerts, now, until, until).lastInsertRowid);
  }

  /** A new e-mail row carrying a prepared message, due at once. */
  insertMessage(target: string, message: string, now: number): void {
    this.s.insertMessage.run('email', target, message, now, now, now);
  }

  scheduledDone(key: string): boolean {
    return this.s.scheduledDone.get(key) !== undefined;
  }

  markScheduled(key: string, dueAt: number, now: number, items: number, recipients: number): void {
    this.s.markScheduled.run(key, dueAt, now, items, recipients);
  }

  get(id: number): OutboxRowText | undefined {
    return this.s.get.get(id) as OutboxRowText | undefined;
  }

  due(now: number, limit: number): OutboxRowText[] {
    return this.s.due.all(now, limit) as OutboxRowText[];
  }

  nextDue(): number | undefined {
    return (this.s.nextDue.get() as number | null) ?? undefined;
  }

  /** Marks a row sent and keeps the newest `keep` sent rows. */
  markSent(id: number, now: number, keep: number): void {
    this.s.sent.run(now, id);
    this.s.pruneState.run('sent', 'sent', keep);
  }

  markRetry(id: number, nextAttemptAt: number, error: string): void {
    this.s.retry.run(nextAttemptAt, error, id);
  }

  /** Marks a row failed and keeps the newest `keep` failed rows. */
  markFailed(id: number, error: string, keep: number): void {
    this.s.failed.run(error, id);
    this.s.pruneState.run('failed', 'failed', keep);
  }

  /** Newest first. */
  list(limit: number): OutboxRowText[] {
    return this.s.list.all(limit) as OutboxRowText[];
  }

  counts(): { pending: number; sent: number; failed: number } {
    return this.s.counts.get() as { pending: number; sent: number; failed: number };
  }
}
