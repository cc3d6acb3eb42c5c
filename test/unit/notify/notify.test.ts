// Notifications' pure parts and the outbox on a real SQLite file: who gets an alert, the webhook
// signature (against a vector computed by Python's hmac module), the digest's joining rules,
// the bounded outbox, and the settings section's write-only secrets and cross-field checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../src/store/db.js';
import { OutboxStore, KEEP_SENT, MAX_ALERTS_PER_MESSAGE } from '../../../src/notify/outbox.js';
import { recipientsOf, DEFAULT_NOTIFICATIONS, type NotificationSettings } from '../../../src/settings/notifications.js';
import { webhookSignature } from '../../../src/notify/webhook.js';
import { emailSubject, emailText } from '../../../src/notify/message.js';
import { defaultSettings, mergeSettings, publicSettings, SettingsError } from '../../../src/settings/settings.js';
import type { AlertJson } from '../../../src/events/payloads.js';

const alert = (id: number, over: Partial<AlertJson> = {}): AlertJson => ({
  id, serial: `S-${id}`, kind: 'supply_low', supply: 'black', severity: 'warning', message: 'black at 9% (below 15%)',
  opened_at: '2026-11-26T07:00:00Z', cleared_at: null, acknowledged_at: null, ...over,
});

function withOutbox(fn: (o: OutboxStore) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-outbox-'));
  const db = openDatabase(join(dir, 'a.db'));
  try {
    fn(new OutboxStore(db));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('recipients: a rule with no kinds or severities takes any; filters narrow; each recipient once', () => {
  const n: NotificationSettings = {
    ...DEFAULT_NOTIFICATIONS,
    recipients: [
      { kinds: [], severities: [], emails: ['all@x.test'], webhooks: [] },
      { kinds: ['jam', 'offline'], severities: ['critical'], emails: ['all@x.test', 'desk@x.test'], webhooks: ['https://h.test/a'] },
      { kinds: ['supply_low'], severities: [], emails: ['stores@x.test'], webhooks: [] },
    ],
  };
  assert.deepEqual(recipientsOf(n, { kind: 'jam', severity: 'critical' }), { emails: ['all@x.test', 'desk@x.test'], webhooks: ['https://h.test/a'] });
  assert.deepEqual(recipientsOf(n, { kind: 'jam', severity: 'warning' }), { emails: ['all@x.test'], webhooks: [] });
  assert.deepEqual(recipientsOf(n, { kind: 'supply_low', severity: 'warning' }), { emails: ['all@x.test', 'stores@x.test'], webhooks: [] });
  assert.deepEqual(recipientsOf(DEFAULT_NOTIFICATIONS, { kind: 'jam', severity: 'critical' }), { emails: [], webhooks: [] });
});

test('webhook signature: sha256= HMAC-SHA256 over "<timestamp>.<body>" (a vector from Python hmac)', () => {
  assert.equal(webhookSignature('k3y', 1_700_000_000, '{"a":1}'), 'sha256=fd5a70e965043f7df6309c2c3b5ff5a8ffa99b1f5175e9a311459e73c4634d4a');
  assert.notEqual(webhookSignature('k3y', 1_700_000_001, '{"a":1}'), webhookSignature('k3y', 1_700_000_000, '{"a":1}'), 'the timestamp is signed');
});

test('messages: one alert names it in the subject; a digest counts them and lists each (rows queued without words too)', () => {
  const box = { box: 'box1', zone: 'UTC' };
  assert.equal(emailSubject(box, [alert(1)]), '[PrintBox box1] supply_low (black): black at 9% (below 15%) (printer S-1)');
  const many = [alert(1), alert(2, { severity: 'critical', kind: 'jam', supply: null, message: 'paper jam' }), alert(3)];
  assert.equal(emailSubject(box, many), '[PrintBox box1] 3 alerts (1 critical) on 3 printers');
  const text = emailText(box, many);
  for (const a of many) assert.ok(text.includes(a.serial));
  assert.match(text, /^PrintBox box1 opened 3 alerts:/);
});

test('outbox: alerts join the recipient\'s row while its window is open; not after it, nor after an attempt', () => {
  withOutbox((o) => {
    const t = 1_000_000;
    const a = o.add('email', 'ops@x.test', alert(1), t, 60_000);
    assert.equal(o.add('email', 'ops@x.test', alert(2), t + 59_999, 60_000), a, 'inside the window: the same message');
    assert.equal(o.add('email', 'ops@x.test', alert(2), t + 1, 60_000), a, 'the same alert twice: once');
    assert.notEqual(o.add('email', 'other@x.test', alert(3), t + 2, 60_000), a, 'another recipient: its own');
    assert.notEqual(o.add('webhook', 'ops@x.test', alert(3), t + 2, 60_000), a, 'another channel: its own');
    assert.deepEqual(o.get(a)!.alerts.map((x) => x.id), [1, 2]);
    assert.deepEqual(o.due(t + 59_999), [], 'nothing due before the window ends');
    assert.deepEqual(o.due(t + 60_000).map((r) => r.id), [a], 'the first window ended');
    assert.deepEqual(o.due(t + 60_002).map((r) => r.id).sort(), [a, a + 1, a + 2]);
    const b = o.add('email', 'ops@x.test', alert(4), t + 60_000, 60_000);
    assert.notEqual(b, a, 'the window has ended: a new message');
    o.markRetry(b, t + 200_000, 'ECONNREFUSED');
    assert.notEqual(o.add('email', 'ops@x.test', alert(5), t + 60_001, 60_000), b, 'a message already tried takes no more alerts');
    const zero = o.add('email', 'z@x.test', alert(6), t, 0);
    assert.notEqual(o.add('email', 'z@x.test', alert(7), t, 0), zero, 'digest 0: each alert its own message');
  });
});

test('outbox: a digest is capped; delivered and failed rows are pruned to the newest', () => {
  withOutbox((o) => {
    const first = o.add('email', 'ops@x.test', alert(1), 0, 60_000);
    for (let i = 2; i <= MAX_ALERTS_PER_MESSAGE; i++) o.add('email', 'ops@x.test', alert(i), 1, 60_000);
    assert.equal(o.get(first)!.alerts.length, MAX_ALERTS_PER_MESSAGE);
    assert.notEqual(o.add('email', 'ops@x.test', alert(MAX_ALERTS_PER_MESSAGE + 1), 2, 60_000), first, 'a full message closes');
    const ids: number[] = [];
    for (let i = 0; i < KEEP_SENT + 25; i++) ids.push(o.add('webhook', `https://h.test/${i}`, alert(1000 + i), 10, 0));
    for (const id of ids) o.markSent(id, 20);
    assert.equal(o.counts().sent, KEEP_SENT);
    assert.equal(o.get(ids[0]), undefined, 'the oldest delivered row is gone');
    assert.ok(o.get(ids.at(-1)!));
    assert.equal(o.counts().pending, 2, 'pending rows are never pruned');
    o.markFailed(first, 'HTTP 500');
    assert.equal(o.get(first)!.state, 'failed');
    assert.equal(o.get(first)!.last_error, 'HTTP 500');
    assert.equal(o.nextDue(), 60_002);
  });
});

test('settings: secrets write-only ("" keeps them, GET shows set/not set); cross-field problems named', () => {
  const base = defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: [] });
  const s = mergeSettings(base, {
    notifications: { smtp_host: 'mail.x.test', smtp_from: 'box@x.test', smtp_user: 'u', smtp_password: 'pw-1', webhook_secret: 'sec-1', recipients: [{ emails: ['a@x.test'], webhooks: ['https://h.test/'] }] },
  });
  const shown = publicSettings(s).notifications as unknown as Record<string, unknown>;
  assert.equal(shown.smtp_password, '');
  assert.equal(shown.webhook_secret, '');
  assert.equal(shown.smtp_password_set, true);
  assert.equal(shown.webhook_secret_set, true);
  const back = mergeSettings(s, { notifications: shown });
  assert.equal(back.notifications.smtp_password, 'pw-1', 'the shown form sent back keeps the password');
  assert.equal(back.notifications.webhook_secret, 'sec-1');
  assert.equal(mergeSettings(s, { notifications: { smtp_password: 'pw-2' } }).notifications.smtp_password, 'pw-2');
  assert.equal((publicSettings(base).notifications as unknown as Record<string, unknown>).smtp_password_set, false);
  assert.throws(() => mergeSettings(s, { notifications: { smtp_host: '' } }), new SettingsError('notifications.smtp_host must be set: a rule names e-mail addresses'));
  assert.throws(() => mergeSettings(s, { notifications: { smtp_from: '' } }), new SettingsError('notifications.smtp_from must be set: a rule names e-mail addresses'));
  assert.throws(() => mergeSettings(s, { notifications: { smtp_security: 'none' } }), /smtp_security must be starttls or tls when smtp_user is set/);
  assert.equal(s.notifications.smtp_host, 'mail.x.test', 'a refused change leaves the settings as they were');
});
