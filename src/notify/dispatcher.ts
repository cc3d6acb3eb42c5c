// Alert notifications: each alert opened (the bus's `alert` event) is written to the
// outbox for every recipient its rules name, joining the message still collecting for that
// recipient (settings `digest_minutes`); due messages are sent one at a time, by e-mail or webhook.
// A failed attempt is retried with backoff (retry_first_ms doubling, at most an hour apart) until
// max_attempts, then the message is marked failed: every failure is in the log and in
// GET /api/notifications/outbox, never dropped unseen. Delivery is at least once: a kill between
// the server's acceptance and the row's update sends the message again (webhooks carry a delivery id).
import { hostname } from 'node:os';
import type { EventBus } from '../events/bus.js';
import type { Logger } from '../log/logger.js';
import type { SettingsStore } from '../settings/store.js';
import type { AlertJson } from '../events/payloads.js';
import { type Channel, type OutboxRow, type PreparedMessage, OutboxStore } from './outbox.js';
import { allRecipients, recipientsOf, type NotificationSettings } from '../settings/notifications.js';
import { emailSubject, emailText, TEST_SUBJECT, TEST_TEXT, type QueuedAlert, type Speaker, type WebhookBody } from './message.js';
import { sendEmail } from './email.js';
import { postWebhook } from './webhook.js';
import { errorText } from '../shared/error-text.js';

/** The longest wait between two attempts at one message. */
const MAX_BACKOFF_MS = 3_600_000;
/** The longest the timer sleeps: rows written by another process (an import) are seen within it. */
const MAX_SLEEP_MS = 60_000;

export interface DispatcherDeps {
  outbox: OutboxStore;
  settings: SettingsStore;
  events: EventBus;
  log: Logger;
  now(): number;
  /** The first retry's delay; each next one doubles (config `[notifications] retry_first_ms`). */
  retryFirstMs: number;
  /** Attempts at one message before it is marked failed (config `[notifications] max_attempts`). */
  maxAttempts: number;
  /** The box's name in messages (alerts/box.ts); default the host name. */
  box?: string;
  /** The box's address, said beside its name. */
  boxAddress?: string;
  /**
   * The alerts' plain words as of sending (AlertService.describe): the printer's name, location
   * and address as the box knows them when the message leaves, not when the alert was queued.
   */
  describe?: (alerts: AlertJson[]) => QueuedAlert[];
}

export class NotifyError extends Error {}

export interface TestResult {
  channel: Channel;
  target: string;
  ok: boolean;
  error?: string;
}

export class NotificationDispatcher {
  private readonly box: string;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  /**
   * Rows whose attempt could not be recorded (a card that takes no writes): not tried again before
   * this time in this run (Infinity: delivered), so a failed write never turns into a send loop.
   */
  private readonly held = new Map<number, number>();

  constructor(private readonly deps: DispatcherDeps) {
    this.box = deps.box ?? hostname();
  }

  start(): void {
    this.unsubscribe = this.deps.events.subscribe((name, data) => {
      if (name !== 'alert') return;
      const a = data as AlertJson & { change: string };
      if (a.change !== 'opened') return;
      const { change: _change, ...alert } = a;
      this.enqueue(alert);
    });
    // Messages left pending by the last run (a restart, a kill, a mail server that was down).
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
  }

  /** Writes the alert to the outbox for each recipient its rules name. */
  enqueue(alert: AlertJson): void {
    const n = this.deps.settings.get().notifications;
    const { emails, webhooks } = recipientsOf(n, alert);
    if (!emails.length && !webhooks.length) return;
    const now = this.deps.now();
    const digestMs = n.digest_minutes * 60_000;
    try {
      for (const e of emails) this.deps.outbox.add('email', e, alert, now, digestMs);
      for (const w of webhooks) this.deps.outbox.add('webhook', w, alert, now, digestMs);
    } catch (err) {
      // A card that takes no writes: the alert itself is in the alerts table and on the Alerts page.
      this.deps.log.error({ alert: alert.id, err: errorText(err) }, 'notification not queued: the outbox could not be written');
      return;
    }
    this.schedule();
  }

  /**
   * Queues a scheduled message (the weekly order list, `key` naming its week) to `emails`, unless
   * that week's was made already; null records the week as done with nothing sent (an empty list).
   * Returns whether it was queued now.
   */
  queueScheduled(key: string, dueAt: number, emails: string[], message: PreparedMessage | null, items: number): boolean {
    const queued = this.deps.outbox.addScheduled(key, dueAt, emails, message, items, this.deps.now());
    if (queued && message && emails.length) this.schedule();
    return queued;
  }

  /** Arms the timer for the next due message (now, when one is due). */
  private schedule(): void {
    if (this.stopped || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    let next: number | undefined;
    try {
      next = this.deps.outbox.nextDue();
    } catch (err) {
      this.deps.log.warn({ err: errorText(err) }, 'notifications: reading the outbox failed');
    }
    // A held row stays due in the table: wait the full period rather than wake for it at once.
    const soonest = this.held.size ? Math.max(next ?? 0, this.deps.now() + MAX_SLEEP_MS) : next;
    const wait = soonest === undefined ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, soonest - this.deps.now()));
    this.timer = setTimeout(() => void this.sendDue(), wait);
    this.timer.unref();
  }

  private async sendDue(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      for (;;) {
        const now = this.deps.now();
        const due = this.deps.outbox.due(now).filter((r) => (this.held.get(r.id) ?? 0) <= now);
        if (!due.length || this.stopped) break;
        for (const row of due) {
          if (this.stopped) break;
          await this.deliver(row);
        }
      }
    } catch (err) {
      this.deps.log.warn({ err: errorText(err) }, 'notifications: reading the outbox failed');
    } finally {
      this.running = false;
      this.schedule();
    }
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const { outbox, log, now } = this.deps;
    const what = { outbox_id: row.id, channel: row.channel, target: row.target, alerts: row.alerts.length, ...(row.message ? { subject: row.message.subject } : {}), attempt: row.attempts + 1 };
    try {
      if (row.message) await this.sendPrepared(row.target, row.message);
      else await this.send(row.channel, row.target, row.id, row.alerts);
    } catch (err) {
      const reason = errorText(err);
      if (this.stopped) return; // the database may be closing; the row is tried again at the next start
      const last = row.attempts + 1 >= this.deps.maxAttempts;
      const delay = Math.min(MAX_BACKOFF_MS, this.deps.retryFirstMs * 2 ** row.attempts);
      this.record(row.id, last ? Infinity : now() + delay, () => (last ? outbox.markFailed(row.id, reason) : outbox.markRetry(row.id, now() + delay, reason)));
      if (last) log.error({ ...what, err: reason }, `notification failed after ${row.attempts + 1} attempts: not sent`);
      else log.warn({ ...what, err: reason, retry_in_s: Math.round(delay / 1000) }, 'notification not delivered: retried later');
      return;
    }
    if (this.stopped) return;
    this.record(row.id, Infinity, () => outbox.markSent(row.id, now()));
    log.info(what, 'notification delivered');
  }

  /** Records an attempt; when the write fails, holds the row in memory until `holdUntil`. */
  private record(id: number, holdUntil: number, write: () => void): void {
    try {
      write();
      this.held.delete(id);
    } catch (err) {
      this.held.set(id, holdUntil);
      this.deps.log.error({ outbox_id: id, err: errorText(err) }, 'notification attempt not recorded (the card takes no writes): the message is held in memory for this run');
    }
  }

  /** A prepared message goes by e-mail as it was made (the outbox makes no other kind of row). */
  private async sendPrepared(target: string, m: PreparedMessage): Promise<void> {
    const n = this.deps.settings.get().notifications;
    if (!n.smtp_host || !n.smtp_from) throw new Error('no mail server set (notifications.smtp_host, smtp_from)');
    await sendEmail(n, { to: target, subject: m.subject, text: m.text, attachments: m.attachments });
  }

  private async send(channel: Channel, target: string, id: number, alerts: QueuedAlert[], test = false): Promise<void> {
    const all = this.deps.settings.get();
    const n = all.notifications;
    const speaker: Speaker = { box: this.box, address: this.deps.boxAddress, zone: all.display.time_zone };
    if (this.deps.describe && alerts.length) {
      try {
        alerts = this.deps.describe(alerts);
      } catch (err) {
        // The words queued with the alerts are said instead.
        this.deps.log.warn({ err: errorText(err) }, 'notifications: the alerts could not be described again; sent with the words they were queued with');
      }
    }
    if (channel === 'email') {
      if (!n.smtp_host || !n.smtp_from) throw new Error('no mail server set (notifications.smtp_host, smtp_from)');
      await sendEmail(n, {
        to: target,
        subject: test ? TEST_SUBJECT(this.box) : emailSubject(speaker, alerts),
        text: test ? TEST_TEXT(this.box) : emailText(speaker, alerts),
      });
    } else {
      if (!n.webhook_secret) throw new Error('no webhook secret set (notifications.webhook_secret)');
      const text = test ? TEST_TEXT(this.box) : emailText(speaker, alerts);
      const body: WebhookBody = { event: test ? 'test' : 'alerts', box: this.box, delivery_id: id, text, alerts };
      await postWebhook({ url: target, secret: n.webhook_secret, body: JSON.stringify(body), deliveryId: id, caPem: n.ca_pem, now: this.deps.now() });
    }
  }

  /**
   * Sends a test message now, outside the outbox (its answer is the result): to `target` when
   * given (one of the configured recipients), else to every recipient any rule names.
   */
  async sendTest(target?: string): Promise<TestResult[]> {
    const n: NotificationSettings = this.deps.settings.get().notifications;
    const all = allRecipients(n);
    if (!all.emails.length && !all.webhooks.length) throw new NotifyError('no recipients: add a rule with an e-mail address or webhook to notifications.recipients first');
    let targets: [Channel, string][] = [...all.emails.map((e): [Channel, string] => ['email', e]), ...all.webhooks.map((w): [Channel, string] => ['webhook', w])];
    if (target !== undefined) {
      targets = targets.filter(([, t]) => t === target);
      if (!targets.length) throw new NotifyError('field target must be one of the e-mail addresses or webhooks in notifications.recipients');
    }
    return Promise.all(
      targets.map(async ([channel, t]): Promise<TestResult> => {
        try {
          await this.send(channel, t, 0, [], true);
          this.deps.log.info({ channel, target: t }, 'test notification delivered');
          return { channel, target: t, ok: true };
        } catch (err) {
          const error = errorText(err);
          this.deps.log.warn({ channel, target: t, err: error }, 'test notification not delivered');
          return { channel, target: t, ok: false, error };
        }
      }),
    );
  }
}
