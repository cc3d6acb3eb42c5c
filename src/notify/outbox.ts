// The notification outbox (migration 12): one row per message to one recipient. Rows are written
// before anything is sent, so a message outlives a restart (or a kill) and a mail server that is
// down; the dispatcher (dispatcher.ts) sends due rows and records each attempt here. The table's
// statements are store/notification-outbox.ts's.
import type { DB } from '../store/db.js';
import type { AlertJson } from '../events/payloads.js';
import { OutboxRows, type OutboxRowText } from '../store/notification-outbox.js';
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

type RawRow = OutboxRowText;
const rowOf = (r: RawRow | undefined): OutboxRow | undefined => {
  if (!r) return undefined;
  const { message, ...rest } = r;
  return {
    ...(rest as Omit<OutboxRow, 'alerts' | 'message'> & { alerts: string }),
    alerts: JSON.parse(r.alerts) as AlertJson[],
    ...(message ? { message: JSON.parse(message) as PreparedMessage } : {}),
  };
};

export class OutboxStore {
  private readonly rows: OutboxRows;
  constructor(db: DB) {
    this.rows = new OutboxRows(db);
  }

  /**
   * Adds an alert for a recipient: to the row still collecting for it (the digest window), else to
   * a new row that collects until `now + digestMs` (0: sent at once). Returns the row's id.
   */
  add(channel: Channel, target: string, alert: AlertJson, now: number, digestMs: number): number {
    return this.rows.transaction(() => {
      const open = rowOf(this.rows.collecting(channel, target, now));
      if (open && open.alerts.length < MAX_ALERTS_PER_MESSAGE) {
        if (!open.alerts.some((a) => a.id === alert.id)) this.rows.setAlerts(open.id, JSON.stringify([...open.alerts, alert]));
        return open.id;
      }
      return this.rows.insert(channel, target, JSON.stringify([alert]), now, now + digestMs);
    });
  }

  /** Whether the scheduled mail `key` (one week's order list) was made already. */
  scheduledDone(key: string): boolean {
    return this.rows.scheduledDone(key);
  }

  /**
   * Records the scheduled mail `key` as done and queues `message` (null: nothing to send, an empty
   * list) to each address, all in one transaction: false, and nothing written, when it was done
   * already (a second check, another process).
   */
  addScheduled(key: string, dueAt: number, emails: string[], message: PreparedMessage | null, items: number, now: number): boolean {
    return this.rows.transaction(() => {
      if (this.scheduledDone(key)) return false;
      const to = message ? emails : [];
      this.rows.markScheduled(key, dueAt, now, items, to.length);
      for (const e of to) this.rows.insertMessage(e, JSON.stringify(message), now);
      return true;
    }, true);
  }

  get(id: number): OutboxRow | undefined {
    return rowOf(this.rows.get(id));
  }

  /** Pending rows whose time has come, oldest first. */
  due(now: number, limit = 20): OutboxRow[] {
    return this.rows.due(now, limit).map((r) => rowOf(r)!);
  }

  /** When the next pending row is due (epoch ms), or undefined when none is pending. */
  nextDue(): number | undefined {
    return this.rows.nextDue();
  }

  markSent(id: number, now: number): void {
    this.rows.markSent(id, now, KEEP_SENT);
  }

  markRetry(id: number, nextAttemptAt: number, error: string): void {
    this.rows.markRetry(id, nextAttemptAt, error.slice(0, 1000));
  }

  markFailed(id: number, error: string): void {
    this.rows.markFailed(id, error.slice(0, 1000), KEEP_FAILED);
  }

  /** Newest first. */
  list(limit: number): OutboxRow[] {
    return this.rows.list(limit).map((r) => rowOf(r)!);
  }

  counts(): { pending: number; sent: number; failed: number } {
    return this.rows.counts();
  }
}
