// @ts-check
// Alerts (#/alerts, issue 36): the alerts of saved printers with Acknowledge, and the header's
// count of open alerts nobody has acknowledged (GET /api/alerts), again on each `alert`.
import { get, post } from './api.js';
import { $, ago, errorText, h, when } from './dom.js';
import { onEvent } from './live.js';
import { focusHeading, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas} S */

async function refreshAlertCount() {
  const open = await get('/api/alerts');
  const n = open.filter((a) => !a.acknowledged_at).length;
  const c = $('alert-count');
  c.hidden = n === 0;
  c.textContent = String(n);
  c.setAttribute('aria-label', n + ' unacknowledged alert' + (n === 1 ? '' : 's'));
}
/** @type {ReturnType<typeof setTimeout> | undefined} */
let alertCountTimer;
function scheduleAlertCount() {
  clearTimeout(alertCountTimer);
  alertCountTimer = setTimeout(() => refreshAlertCount().catch(() => {}), 300);
}
/** The header's count, now and on each change. */
export function watchAlertCount() {
  onEvent((name) => {
    if (name === 'alert' || name === 'poll') scheduleAlertCount();
  });
  void refreshAlertCount().catch(() => {});
}

/** @type {Record<string, string>} */
const ALERT_WORDS = {
  supply_low: 'Supply low', supply_empty_soon: 'Supply empty soon', jam: 'Paper jam', door_open: 'Door open',
  paper_out: 'Out of paper', service_requested: 'Service requested', offline: 'Not answering',
  counter_backwards: 'Counter went backwards',
};
const COLUMNS = ['Printer', 'Alert', 'Severity', 'Opened', 'State', ''];

export async function alertsView() {
  setTitle('Alerts');
  const history = h('input', { type: 'checkbox', id: 'alerts-history' });
  const table = h('table', { id: 'alerts', class: 'cards' });
  const msg = h('p', { class: 'error', role: 'alert' });
  view().replaceChildren(h('section', {}, h('h2', { text: 'Alerts' }),
    h('div', { class: 'toolbar' }, h('label', { for: 'alerts-history' }, history, ' Show cleared alerts too'),
      h('a', { href: '#/settings', class: 'muted', text: 'Alert rules' })),
    msg, table));
  /** @param {S['Alert']} a */
  function row(a) {
    const what = ALERT_WORDS[a.kind] || a.kind;
    const ack = a.cleared_at || a.acknowledged_at ? null : h('button', {
      type: 'button', class: 'ack', 'data-write': true, text: 'Acknowledge', 'aria-label': 'Acknowledge ' + what + ' on ' + a.serial,
      onclick: async () => {
        if (!ack) return; // the button clicked is ack
        ack.disabled = true;
        try {
          await post('/api/alerts/acknowledge', { id: a.id });
          await load();
          scheduleAlertCount();
        } catch (err) {
          msg.textContent = errorText(err);
          ack.disabled = false;
        }
      },
    });
    const state = a.cleared_at ? 'cleared ' + when(a.cleared_at)
      : a.acknowledged_at ? 'open, acknowledged ' + ago(a.acknowledged_at) : 'open';
    return h('tr', { 'data-alert': a.id, 'data-kind': a.kind, 'data-state': a.cleared_at ? 'cleared' : 'open' },
      h('td', { 'data-label': 'Printer' },
        h('a', { href: '#/printer/' + encodeURIComponent(a.serial), text: a.serial })),
      h('td', { 'data-label': 'Alert' }, h('b', { text: what }), ' ', a.message),
      h('td', { 'data-label': 'Severity' },
        h('span', { class: 'badge' + (a.severity === 'critical' ? ' bad' : ''), text: a.severity })),
      h('td', { 'data-label': 'Opened', title: when(a.opened_at), text: ago(a.opened_at) }),
      h('td', { 'data-label': 'State', text: state }),
      h('td', {}, ack));
  }
  async function load() {
    const list = await get('/api/alerts', { all: history.checked ? 'true' : undefined });
    msg.textContent = '';
    if (!list.length) {
      const none = history.checked ? 'No alerts yet.' : 'No open alerts.';
      table.replaceChildren(h('caption', { class: 'empty', text: none }));
    } else {
      table.replaceChildren(h('thead', {}, h('tr', {}, COLUMNS.map((t) => h('th', { text: t })))),
        h('tbody', {}, list.map(row)));
    }
    table.dataset.loaded = 'true';
  }
  history.onchange = () => load().catch((err) => {
    msg.textContent = err.message;
  });
  onLeave(onEvent((name) => {
    if (name === 'alert' || name === 'poll') scheduleRefresh(() => load().catch(() => {}));
  }));
  await load();
  focusHeading();
}
