// @ts-check
// Settings, Notifications: where alerts are sent, a test message, and the outbox's
// failures. The settings form keeps secrets write-only ("" keeps them; the *_set flags say whether
// one is stored); its rules are fieldsets named as the agent names them
// (notifications.recipients[1].emails), so a 400 lands under the right field.
import { get, post } from './api.js';
import { errorText, h, when } from './dom.js';
import { field, inp, intOf, lines, settingsForm } from './settings-form.js';
import { caField } from './ca-field.js';
import { onLeave } from './view.js';

/** @typedef {import('./types').Schemas['Settings']} Settings */
/** @typedef {Settings['notifications']['recipients'][number]} Rule */

const ALERT_KIND_NAMES = {
  supply_low: 'Supply low', supply_empty_soon: 'Supply empty soon', jam: 'Paper jam', door_open: 'Door open',
  paper_out: 'Out of paper', service_requested: 'Service requested', offline: 'Not answering',
  counter_backwards: 'Counter went backwards',
};
const RULE_FIELDS = /** @type {const} */ (['kinds', 'severities', 'emails', 'webhooks']);
/** The usual port of each encryption choice. @type {Record<string, number>} */
const SMTP_PORTS = { starttls: 587, tls: 465, none: 25 };
const secretHint = (/** @type {boolean} */ set) => (set ? 'set (unchanged)' : 'not set');

/** @param {Settings} s */
export function notificationsSection(s) {
  const n = s.notifications;
  const host = inp('text', n.smtp_host, { autocomplete: 'off', spellcheck: 'false' });
  const port = inp('number', n.smtp_port, { min: 1, max: 65535, inputmode: 'numeric' });
  const security = h('select', {}, [
    ['starttls', 'STARTTLS (port 587)'], ['tls', 'TLS from the start (port 465)'], ['none', 'None (no user; plain text)'],
  ].map(([v, t]) => h('option', { value: v, text: t, selected: v === n.smtp_security })));
  // The port and the hint follow the encryption chosen: a port that was the old choice's usual one
  // (or empty) becomes the new one's; a port a person typed stays.
  const securityHint = (/** @type {string} */ v) => (v === 'none'
    ? 'Plain text: messages cross the network readable, so no user name or password is sent.'
    : "The mail server's certificate is verified (the system's CAs, and the CA below if given).");
  let lastSecurity = /** @type {string} */ (n.smtp_security);
  security.addEventListener('change', () => {
    const v = security.value;
    if (port.value.trim() === '' || Number(port.value) === SMTP_PORTS[lastSecurity]) port.value = String(SMTP_PORTS[v]);
    lastSecurity = v;
    const hint = document.getElementById('s-notifications-smtp_security-hint');
    if (hint) hint.textContent = securityHint(v);
    tlsChoices(v);
  });
  const user = inp('text', n.smtp_user, { autocomplete: 'off' });
  const password = inp('password', '', { autocomplete: 'new-password', placeholder: secretHint(n.smtp_password_set) });
  const from = inp('email', n.smtp_from, { autocomplete: 'off' });
  const caBox = caField('notifications.ca_pem', 'Trusted CA certificate (PEM)', n.ca_pem,
    "Optional: the site's own CA, or the mail server's self-signed certificate. Paste it or upload its file.");
  const ca = caBox.text;
  const selfSigned = h('input', { type: 'checkbox' });
  selfSigned.checked = n.smtp_allow_self_signed;
  const selfSignedField = field('notifications.smtp_allow_self_signed',
    'Accept any certificate from the mail server (not recommended)', selfSigned);
  // Plain text has no certificate to trust: its choices are hidden with it (and kept as they are).
  const tlsChoices = (/** @type {string} */ v) => {
    caBox.node.hidden = v === 'none';
    selfSignedField.hidden = v === 'none';
  };
  tlsChoices(n.smtp_security);
  const secret = inp('password', '', { autocomplete: 'new-password', placeholder: secretHint(n.webhook_secret_set) });
  const digest = inp('number', n.digest_minutes, { min: 0, max: 1440, inputmode: 'numeric' });

  const rulesBox = h('div', { id: 'notify-rules' });
  /** @typedef {{ kinds: HTMLSelectElement, severities: HTMLSelectElement, emails: HTMLTextAreaElement,
   *   webhooks: HTMLTextAreaElement, removed?: boolean }} RuleRow */
  /** @type {RuleRow[]} */
  const rules = [];
  /** @param {Rule | null} r */
  function addRule(r) {
    const i = rules.length;
    // An omitted list is an empty one, as the agent reads it (its answers carry all four).
    const severities = r?.severities ?? [];
    const severity = severities.length === 1 ? severities[0] : '';
    /** @type {RuleRow} */
    const row = {
      kinds: h('select', { multiple: true, size: 8 }, Object.entries(ALERT_KIND_NAMES)
        .map(([v, t]) => h('option', { value: v, text: t, selected: !!r?.kinds?.includes(/** @type {any} */ (v)) }))),
      severities: h('select', {}, [['', 'Any'], ['critical', 'Critical only'], ['warning', 'Warning only']]
        .map(([v, t]) => h('option', { value: v, text: t, selected: v === severity }))),
      emails: h('textarea', { rows: 2, spellcheck: 'false' }),
      webhooks: h('textarea', { rows: 2, spellcheck: 'false' }),
    };
    row.emails.value = (r?.emails ?? []).join('\n');
    row.webhooks.value = (r?.webhooks ?? []).join('\n');
    const p = 'notifications.recipients[' + i + '].';
    const box = h('fieldset', { class: 'v3' }, h('legend', { text: 'Rule ' + (i + 1) }),
      field(p + 'kinds', 'Alert kinds', row.kinds, 'None selected: every kind'),
      field(p + 'severities', 'Severity', row.severities),
      field(p + 'emails', 'E-mail addresses', row.emails, 'One a line'),
      field(p + 'webhooks', 'Webhook URLs', row.webhooks, 'One a line; http:// or https://, signed with the webhook secret'),
      h('button', { type: 'button', text: 'Remove this rule', onclick: () => { row.removed = true; box.hidden = true; } }));
    rules.push(row);
    rulesBox.append(box);
  }
  n.recipients.forEach(addRule);
  // Renamed before each save, so that the agent's index in a message (recipients[1]) is the field's.
  function keptRules() {
    const kept = rules.filter((r) => !r.removed);
    kept.forEach((r, i) => {
      for (const k of RULE_FIELDS) {
        const path = 'notifications.recipients[' + i + '].' + k;
        r[k].dataset.path = path;
        const err = r[k].closest('.field')?.querySelector('[data-error-for]');
        if (err instanceof HTMLElement) err.dataset.errorFor = path;
      }
    });
    return kept;
  }

  const form = settingsForm('settings-notifications', 'Notifications', [
    field('notifications.smtp_host', 'Mail server', host, 'Host name or address; empty: no e-mail'),
    field('notifications.smtp_port', 'Port', port),
    field('notifications.smtp_security', 'Encryption', security, securityHint(n.smtp_security)),
    field('notifications.smtp_user', 'User name', user, 'Empty: no sign-in'),
    field('notifications.smtp_password', 'Password', password, 'Never shown; leave empty to keep it.'),
    field('notifications.smtp_from', 'Sender address', from),
    caBox.node,
    selfSignedField,
    field('notifications.webhook_secret', 'Webhook secret', secret,
      'Signs each webhook call (HMAC-SHA256, see the API document). Never shown; leave empty to keep it.'),
    field('notifications.digest_minutes', 'Gather alerts for (minutes)', digest,
      'Alerts opened within this time go as one message; 0: each at once'),
    h('h3', { text: 'Who gets which alerts' }), rulesBox,
    h('p', {}, h('button', { type: 'button', id: 'notify-add-rule', text: 'Add a rule', onclick: () => addRule(null) })),
  ], () => ({
    notifications: {
      smtp_host: host.value.trim(), smtp_port: intOf(port),
      smtp_security: /** @type {Settings['notifications']['smtp_security']} */ (security.value),
      smtp_user: user.value, smtp_password: password.value, smtp_from: from.value.trim(), ca_pem: ca.value.trim(),
      smtp_allow_self_signed: selfSigned.checked, webhook_secret: secret.value, digest_minutes: intOf(digest),
      recipients: keptRules().map((r) => ({
        kinds: /** @type {Rule['kinds']} */ ([...r.kinds.selectedOptions].map((o) => o.value)),
        severities: /** @type {Rule['severities']} */ (r.severities.value ? [r.severities.value] : []),
        emails: lines(r.emails.value), webhooks: lines(r.webhooks.value),
      })),
    },
  }), (saved) => {
    password.value = '';
    secret.value = '';
    password.placeholder = secretHint(saved.notifications.smtp_password_set);
    secret.placeholder = secretHint(saved.notifications.webhook_secret_set);
  });

  // Send a test, and the outbox: what is waiting, and every message that failed, with why.
  const testBtn = h('button', { type: 'button', id: 'notify-test', text: 'Send a test' });
  const testOut = h('div', { id: 'notify-test-result', role: 'status', 'aria-live': 'polite' });
  const outbox = h('div', { id: 'notify-outbox' });
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let again;
  onLeave(() => clearTimeout(again));
  async function drawOutbox() {
    clearTimeout(again);
    try {
      const o = await get('/api/notifications/outbox', { limit: 50 });
      const shown = o.messages.filter((m) => m.state !== 'sent');
      outbox.replaceChildren(
        h('p', {}, h('span', { class: 'badge' + (o.counts.failed ? ' bad' : ' ok'), text: o.counts.failed + ' failed' }), ' ',
          h('span', { class: 'badge', text: o.counts.pending + ' waiting' }), ' ',
          h('span', { class: 'badge', text: o.counts.sent + ' delivered' })),
        shown.length
          ? h('table', {}, h('thead', {}, h('tr', {}, ['State', 'To', 'Alerts', 'Attempts', 'Next attempt', 'Last error']
            .map((t) => h('th', { text: t })))),
          h('tbody', {}, shown.map((m) => h('tr', { 'data-outbox': m.id, class: m.state === 'failed' ? 'failed' : '' },
            h('td', {}, h('span', { class: 'badge' + (m.state === 'failed' ? ' bad' : ''),
              text: m.state === 'failed' ? 'failed' : 'waiting' })),
            h('td', { text: m.target }), h('td', { text: m.subject || String(m.alert_ids.length) }), h('td', { text: String(m.attempts) }),
            h('td', m.state === 'failed' || !m.next_attempt_at ? { text: '–' } : { text: when(m.next_attempt_at) }),
            h('td', { text: m.last_error || '' })))))
          : h('p', { class: 'muted', text: 'Nothing waiting or failed.' }));
    } catch (err) {
      outbox.replaceChildren(h('p', { class: 'error', text: 'Could not read the outbox: ' + errorText(err) }));
    }
    // Read again every 10 s while the view shows it: attempts and errors change without an event.
    again = setTimeout(() => { if (section.isConnected) void drawOutbox(); }, 10000);
  }
  testBtn.addEventListener('click', async () => {
    testBtn.disabled = true;
    testOut.replaceChildren(h('p', { class: 'muted', text: 'Sending… (save first: the test uses the saved settings)' }));
    try {
      const r = await post('/api/notifications/test', {});
      testOut.replaceChildren(h('ul', {}, r.results.map((x) => h('li', { class: x.ok ? 'okmsg' : 'error',
        text: (x.ok ? 'Delivered to ' : 'Not delivered to ') + x.target + (x.ok ? '' : ': ' + x.error) }))));
    } catch (err) {
      testOut.replaceChildren(h('p', { class: 'error', text: errorText(err) }));
    }
    testBtn.disabled = false;
  });
  void drawOutbox();
  const section = h('section', { id: 'notifications' }, form.firstChild, h('h3', { text: 'Test and outbox' }),
    h('p', {}, testBtn), testOut, outbox);
  return { node: section };
}
