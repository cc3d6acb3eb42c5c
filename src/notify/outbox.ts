// The notification outbox (migration 12): one row per message to one recipient. Rows are written
// before anything is sent, so a message outlives a restart (or a kill) and a mail server that is
// down; the dispatcher (dispatcher.ts) sends due rows and records each attempt here.
import type { DB } from '../store/db.js';
import type { AlertJson } from '../alerts/service.js';
import type { Attachment } from './email.js';

/** A message made before it is queued (the weekly order list), sent as it is at every attempt. */
export interface PreparedMessage {
  subject: string;
  text: string;
  attachments?: Attachment[];
}

export type Channel = 'email' | 'webhook';
export type OutboxState = 'pending' | 'sent' | 'failed';

export interface OutboxRow {
  id: number;
  channel: Channel;
  target: string;
  alerts: AlertJson[];
  /** Set for a prepared message (migration 20); alerts is empty then. */
  message?: PreparedMessage;
  state: OutboxState;
  attempts: number;
  created_at: number;
  collect_until: number;
  next_attempt_at: number;
  sent_at: number | null;
  last_error: string | null;
}

/** Delivered rows kept (newest); older ones are pruned. */
export const KEEP_SENT = 200;
/** Failed rows kept (newest): enough to see what went wrong, bounded all the same. */
export const KEEP_FAILED = 200;
/** Alerts one message carries at most; a digest that reaches it closes and the next alert starts another. */
export const MAX_ALERTS_PER_MESSAGE = 200;

type RawRow = Omit<OutboxRow, 'alerts' | 'message'> & { alerts: string; message: string | null };
const rowOf = (r: RawRow | undefined): OutboxRow | undefined => {
  if (!r) return undefined;
  const { message, ...rest } = r;
  return { ...rest, alerts: JSON.parse(r.alerts) as AlertJson[], ...(message ? { message: JSON.parse(message) as PreparedMessage } : {}) };
};

export class OutboxStore {
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

  /**
   * Adds an alert for a recipient: to the row still collecting for it (the digest window), else to
   * a new row that collects until `now + digestMs` (0: sent at once). Returns the row's id.
   */
  add(channel: Channel, target: string, alert: AlertJson, now: number, digestMs: number): number {
    return this.db.transaction(() => {
      const open = rowOf(this.s.collecting.get(channel, target, now) as RawRow | undefined);
      if (open && open.alerts.length < MAX_ALERTS_PER_MESSAGE) {
        if (!open.alerts.some((a) => a.id === alert.id)) this.s.setAlerts.run(JSON.stringify([...open.alerts, alert]), open.id);
        return open.id;
      }
      const until = now + digestMs;
      return Number(this.s.insert.run(channel, target, JSON.stringify([alert]), now, until, until).lastInsertRowid);
    })();
  }

  /** Whether the scheduled mail `key` (one week's order list) was made already. */
  scheduledDone(key: string): boolean {
    return this.s.scheduledDone.get(key) !== undefined;
  }

  /**
   * Records the scheduled mail `key` as done and queues `message` (null: nothing to send, an empty
   * list) to each address, all in one transaction: false, and nothing written, when it was done
   * already (a second check, another process).
   */
  addScheduled(key: string, dueAt: number, emails: string[], message: PreparedMessage | null, items: number, now: number): boolean {
    return this.db.transaction(() => {
      if (this.scheduledDone(key)) return false;
      const to = message ? emails : [];
      this.s.markScheduled.run(key, dueAt, now, items, to.length);
      for (const e of to) this.s.insertMessage.run('email', e, JSON.stringify(message), now, now, now);
      return true;
    }).immediate();
  }

  get(id: number): OutboxRow | undefined {
    return rowOf(this.s.get.get(id) as RawRow | undefined);
  }

  /** Pending rows whose time has come, oldest first. */
  due(now: number, limit = 20): OutboxRow[] {
    return (this.s.due.all(now, limit) as RawRow[]).map((r) => rowOf(r)!);
  }

  /** When the next pending row is due (epoch ms), or undefined when none is pending. */
  nextDue(): number | undefined {
    return (this.s.nextDue.get() as number | null) ?? undefined;
  }

  markSent(id: number, now: number): void {
    this.s.sent.run(now, id);
    this.s.pruneState.run('sent', 'sent', KEEP_SENT);
  }

  markRetry(id: number, nextAttemptAt: number, error: string): void {
    this.s.retry.run(nextAttemptAt, error.slice(0, 1000), id);
  }

  markFailed(id: number, error: string): void {
    this.s.failed.run(error.slice(0, 1000), id);
    this.s.pruneState.run('failed', 'failed', KEEP_FAILED);
  }

  /** Newest first. */
  list(limit: number): OutboxRow[] {
    return (this.s.list.all(limit) as RawRow[]).map((r) => rowOf(r)!);
  }

  counts(): { pending: number; sent: number; failed: number } {
    return this.s.counts.get() as { pending: number; sent: number; failed: number };
  }
}
