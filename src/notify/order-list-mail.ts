// The weekly order-list e-mail (Settings `order_list.email_*`): on the weekday at the
// time, read in the billing time zone (`billing.time_zone`, the site's civil time: the box's clock
// is UTC), the order list (forecast/order-list.ts) goes through the notification outbox to the
// recipients who take supply alerts, so a mail server that is down is retried like an alert.
//
// - Once a week: the week is recorded as done (store `scheduled_mail`, migration 20) in the same
//   transaction that queues its messages, so a second check, or a restart, never sends it twice.
// - The due time is a target computed from the settings, never "a week since the last one"; a box
//   that was off then sends within SEND_WINDOW_MS after it (the weekday), not later in the week.
// - An empty list sends nothing (a weekly "nothing to order" would teach people to ignore the
//   mail); the week is recorded as done all the same, with 0 items.
// - The message: the list as plain text (readable on a phone, quoted in a reply) and the same CSV
//   file GET /api/supplies/order-list?format=csv gives, attached (what a dealer's ordering imports;
//   an inline HTML table could not be imported and needs an HTML mail).
import { hostname } from 'node:os';
import cron from 'node-cron';
import type { Settings, Weekday } from '../settings/settings.js';
import { WEEKDAYS } from '../settings/settings.js';
import type { OrderItem } from '../forecast/order-list.js';
import { orderList } from '../forecast/order-list.js';
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import type { Logger } from '../log/logger.js';
import { parseTimeOfDay, wallClock, zonedInstant } from '../model/billing-time.js';
import { csvText } from '../shared/csv-file.js';
import { CSV_HEADER, csvRow, orderListFileName } from '../forecast/order-list-csv.js';
import type { PreparedMessage } from './outbox.js';
import type { NotificationSettings } from '../settings/notifications.js';
import { errorText } from '../shared/error-text.js';

const DAY = 86_400_000;
/** How long after its due time a week's list is still sent (a box that was off then): the weekday. */
export const SEND_WINDOW_MS = DAY;

export interface WeeklyDue {
  /** Epoch ms of the weekday and time in the zone. */
  at: number;
  /** `order-list YYYY-MM-DD`: the due day in the zone; a week is sent once under it. */
  key: string;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The newest weekly due time at or before `t` (weekday, "HH:MM" and zone as in the settings). */
export function weeklyDue(t: number, weekday: Weekday, time: string, zone: string): WeeklyDue {
  const [hour, minute] = parseTimeOfDay(time) ?? [0, 0];
  const w = wallClock(t, zone);
  // ISO weekday of the local date: Date.UTC of a civil date has that date's weekday (0 Sunday).
  const today = (new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay() + 6) % 7;
  const back = (today - WEEKDAYS.indexOf(weekday) + 7) % 7;
  const dueOn = (daysBack: number): WeeklyDue => {
    const d = new Date(Date.UTC(w.year, w.month - 1, w.day - daysBack));
    const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
    return { at: zonedInstant(y, m, day, hour, minute, zone), key: `order-list ${pad(y, 4)}-${pad(m)}-${pad(day)}` };
  };
  const due = dueOn(back);
  return due.at <= t ? due : dueOn(back + 7);
}

/** The addresses of the rules that take supply alerts (no kinds named, or a supply kind). */
export function orderListRecipients(n: NotificationSettings): string[] {
  const out = new Set<string>();
  for (const r of n.recipients) {
    if (r.kinds.length && !r.kinds.some((k) => k === 'supply_low' || k === 'supply_empty_soon')) continue;
    for (const e of r.emails) out.add(e);
  }
  return [...out];
}

/** A name as one line of plain text (a printer's location may hold line breaks). */
const oneLine = (v: string | null | undefined) => (v ?? '').replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();

/** The e-mail: subject, the list as text, the CSV attached. `day` is the due day (YYYY-MM-DD). */
export function orderListMessage(box: string, items: OrderItem[], s: Settings, now: number, day: string): PreparedMessage {
  const n = items.length;
  const rows = items.map((i) => [
    i.expected_empty_on ?? 'no date',
    oneLine(i.part_number) || '-',
    oneLine(i.supply),
    i.level === null ? '?' : `${Math.round(i.level)} %`,
    `${oneLine([i.manufacturer, i.model].filter(Boolean).join(' ')) || 'Printer'} (${oneLine(i.serial)})`,
    oneLine(i.location),
  ]);
  const head = ['Expected', 'Part number', 'Supply', 'Level', 'Printer', 'Location'];
  const widths = head.map((h, c) => Math.min(40, Math.max(h.length, ...rows.map((r) => r[c].length))));
  const line = (r: string[]) => r.map((v, c) => (c === r.length - 1 ? v : v.padEnd(widths[c]))).join('  ').trimEnd();
  const file = orderListFileName(now);
  return {
    subject: `[PrintBox ${box}] Order list ${day}: ${n} ${n === 1 ? 'supply' : 'supplies'} to order`.slice(0, 200),
    text: [
      `PrintBox ${box}: ${n} ${n === 1 ? 'supply' : 'supplies'} forecast to run out within ${s.order_list.within_days} days or below ${s.alerts.supply_below_percent} %:`,
      '',
      line(head),
      ...rows.map(line),
      '',
      `The attached ${file} is the same list as a spreadsheet; the box's Order list page shows it as it is now.`,
      '',
    ].join('\n'),
    attachments: [{ filename: file, contentType: 'text/csv; charset=utf-8', content: csvText(CSV_HEADER, items.map(csvRow)) }],
  };
}

export interface OrderListMailDeps {
  settings(): Settings;
  /** The order list now (forecast/order-list.ts orderList over the saved printers). */
  orderList(): Promise<OrderItem[]>;
  /** notify/dispatcher.ts NotificationDispatcher.queueScheduled */
  queueScheduled(key: string, dueAt: number, emails: string[], message: PreparedMessage | null, items: number): boolean;
  /** notify/outbox.ts OutboxStore.scheduledDone */
  scheduledDone(key: string): boolean;
  box?: string;
  now(): number;
  log: Pick<Logger, 'info' | 'warn'>;
}

export class OrderListMail {
  private running?: Promise<void>;
  /** Weeks already said to have no recipients (said once, not every minute). */
  private readonly toldNoRecipients = new Set<string>();

  constructor(private readonly deps: OrderListMailDeps) {}

  /** One check (the minute tick): makes and queues this week's list when it is due; never two at once. */
  check(): Promise<void> {
    this.running ??= this.checkOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async checkOnce(): Promise<void> {
    const { deps } = this;
    const s = deps.settings();
    if (!s.order_list.email_enabled) return;
    const t = deps.now();
    const due = weeklyDue(t, s.order_list.email_weekday, s.order_list.email_time, s.billing.time_zone);
    if (t >= due.at + SEND_WINDOW_MS || deps.scheduledDone(due.key)) return;
    const emails = orderListRecipients(s.notifications);
    if (!emails.length) {
      // Not recorded as done: a recipient added later that day still gets this week's list.
      if (!this.toldNoRecipients.has(due.key)) deps.log.warn({ week: due.key }, 'order list e-mail: no recipient takes supply alerts (notifications.recipients); not sent');
      this.toldNoRecipients.add(due.key);
      return;
    }
    const items = await deps.orderList();
    const day = due.key.slice('order-list '.length);
    const message = items.length ? orderListMessage(deps.box ?? hostname(), items, s, deps.now(), day) : null;
    if (!deps.queueScheduled(due.key, due.at, emails, message, items.length)) return;
    if (message) deps.log.info({ week: due.key, items: items.length, recipients: emails.length }, 'order list e-mail queued');
    else deps.log.info({ week: due.key }, 'order list e-mail: nothing to order this week; not sent');
  }
}

/** The weekly order-list e-mail in the running agent: a minute tick, like the billing reads. */
export function startOrderListMail(deps: {
  settings: { get(): Settings };
  devices: DeviceStore;
  metrics: MetricsStore;
  notifications: { queueScheduled: OrderListMailDeps['queueScheduled'] };
  outbox: { scheduledDone(key: string): boolean };
  log: Logger;
  now: () => number;
}): () => void {
  const mail = new OrderListMail({
    settings: () => deps.settings.get(),
    async orderList() {
      const s = deps.settings.get();
      const printers = [...deps.devices.eachSaved(['serial', 'manufacturer', 'model', 'location', 'asset_number', 'printer_info'] as const)];
      return orderList(printers, deps.metrics, s.order_list.within_days, s.alerts.supply_below_percent, deps.now);
    },
    queueScheduled: (...a) => deps.notifications.queueScheduled(...a),
    scheduledDone: (key) => deps.outbox.scheduledDone(key),
    now: deps.now,
    log: deps.log,
  });
  const tick = () => mail.check().catch((err: unknown) => deps.log.error({ err: errorText(err) }, 'order list e-mail failed'));
  const task = cron.schedule('* * * * *', tick, { name: 'printbox-order-list-mail', noOverlap: true });
  void tick();
  return () => void task.stop();
}
