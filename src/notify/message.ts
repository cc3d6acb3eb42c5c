// What a notification says (pure): the e-mail's subject and text, and the webhook's JSON body, made
// from the alerts an outbox row carries (one alert, or a digest of several). The words are the
// alerts' own (alerts/words.ts: "Cyan ink will run out around 3 Dec"), grouped by printer, one line
// per supply (its worst state), with the printer's model, location and address, a link to its page
// on the box, and times in the box's time zone.
import type { AlertJson } from '../events/payloads.js';
import { localTime, printerLabel, worstPerSupply, type AlertWords, type DescribedAlert } from '../alerts/words.js';
import { parseTime } from '../model/time.js';

/** An alert as an outbox row keeps it: rows queued before the words existed have none. */
export type QueuedAlert = AlertJson & Partial<AlertWords>;

export interface WebhookBody {
  event: 'alerts' | 'test';
  /** The box's host name: which box is speaking, when several post to one receiver. */
  box: string;
  /** The outbox row's id: the same for every retry of one message, so a receiver can ignore repeats. */
  delivery_id: number;
  /** The message in plain words, as the e-mail says it (chat services show a body's `text`). */
  text: string;
  alerts: QueuedAlert[];
}

/** Who speaks: the box's name, and the zone its times are said in. */
export interface Speaker {
  box: string;
  /** The box's address, said beside its name ("" when not known). */
  address?: string;
  zone: string;
}

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Words for every alert, those queued without them made from the machine fields. */
function worded(alerts: QueuedAlert[]): DescribedAlert[] {
  return alerts.map((a) => ({
    ...a,
    text: a.text ?? `${a.kind}${a.supply ? ` (${a.supply})` : ''}: ${a.message}`,
    supply_name: a.supply_name ?? null,
    printer: a.printer ?? { name: null, model: null, location: null, ip: null },
    page_url: a.page_url ?? null,
  }));
}

const label = (a: DescribedAlert) => printerLabel(a.printer, a.serial);

export function emailSubject(s: Speaker, alerts: QueuedAlert[]): string {
  const rows = worstPerSupply(worded(alerts));
  if (rows.length === 1) {
    const a = rows[0];
    return `[PrintBox ${s.box}] ${a.text} (${label(a)})`.slice(0, 200);
  }
  const critical = rows.filter((a) => a.severity === 'critical').length;
  const printers = new Set(rows.map((a) => a.serial)).size;
  return `[PrintBox ${s.box}] ${count(rows.length, 'alert')}${critical ? ` (${critical} critical)` : ''} on ${count(printers, 'printer')}`;
}

export function emailText(s: Speaker, alerts: QueuedAlert[]): string {
  const rows = worstPerSupply(worded(alerts));
  const bySerial = new Map<string, DescribedAlert[]>();
  for (const a of rows) bySerial.set(a.serial, [...(bySerial.get(a.serial) ?? []), a]);
  const blocks: string[] = [];
  for (const [serial, list] of bySerial) {
    const first = list[0];
    const opened = Math.min(...list.map((a) => parseTime(a.opened_at) ?? Infinity));
    blocks.push(
      [
        label(first),
        ...list.map((a) => `  - ${a.text}${a.severity === 'critical' ? ' (critical)' : ''}`),
        `  Serial ${serial}; opened ${Number.isFinite(opened) ? localTime(opened, s.zone) : first.opened_at}`,
        ...(first.page_url ? [`  ${first.page_url}`] : []),
      ].join('\n'),
    );
  }
  const who = s.address ? `${s.box} (${s.address})` : s.box;
  return [
    `PrintBox ${who} opened ${count(rows.length, 'alert')}:`,
    '',
    blocks.join('\n\n'),
    '',
    'The box\'s Alerts page lists them with their state; an alert closes by itself when its condition ends.',
    '',
  ].join('\n');
}

export const TEST_SUBJECT = (box: string) => `[PrintBox ${box}] test message`;
export const TEST_TEXT = (box: string) => `This is a test message from PrintBox ${box}: alerts will reach this address.\n`;
