// What a notification says (pure): the e-mail's subject and text, and the webhook's JSON body, made
// from the alerts an outbox row carries (one alert, or a digest of several).
import type { AlertJson } from '../alerts/service.js';

export interface WebhookBody {
  event: 'alerts' | 'test';
  /** The box's host name: which box is speaking, when several post to one receiver. */
  box: string;
  /** The outbox row's id: the same for every retry of one message, so a receiver can ignore repeats. */
  delivery_id: number;
  alerts: AlertJson[];
}

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

export function emailSubject(box: string, alerts: AlertJson[]): string {
  if (alerts.length === 1) {
    const a = alerts[0];
    return `[PrintBox ${box}] ${a.severity}: ${a.serial} ${a.message}`.slice(0, 200);
  }
  const critical = alerts.filter((a) => a.severity === 'critical').length;
  return `[PrintBox ${box}] ${count(alerts.length, 'alert')}${critical ? ` (${critical} critical)` : ''}`;
}

export function emailText(box: string, alerts: AlertJson[]): string {
  const lines = alerts.map((a) => `- ${a.opened_at}  ${a.severity.padEnd(8)} ${a.serial}  ${a.kind}${a.supply ? ` (${a.supply})` : ''}: ${a.message}`);
  return [
    `PrintBox ${box} opened ${count(alerts.length, 'alert')}:`,
    '',
    ...lines,
    '',
    'The Alerts page of the box lists them with their state; an alert closes by itself when its condition ends.',
    '',
  ].join('\n');
}

export const TEST_SUBJECT = (box: string) => `[PrintBox ${box}] test message`;
export const TEST_TEXT = (box: string) => `This is a test message from PrintBox ${box}: alerts will reach this address.\n`;
