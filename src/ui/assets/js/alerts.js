// @ts-check
// Alerts (#/alerts): the alerts of saved printers with Acknowledge, and the header's
// count of open alerts nobody has acknowledged (GET /api/alerts), again on each `alert`. Each row
// says the alert in the box's words (`text`: "Cyan ink will run out around 3 Dec") and the printer
// as a person knows it (name or model, location, address); a supply's low and empty-soon alerts
// are one row, with the worse severity.
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

/** @typedef {S['Alert'] & { ids: number[] }} AlertRow */
/** Worse first: critical before warning, then low before empty soon. @param {S['Alert']} a */
const rank = (a) => (a.severity === 'critical' ? 0 : 2) + (a.kind === 'supply_low' ? 0 : 1);
/**
 * One row per supply (as the box's e-mails do, alerts/words.ts worstPerSupply): a supply's open
 * low and empty-soon alerts become the worse one, its text saying both; its Acknowledge takes both.
 * @param {S['Alert'][]} list @returns {AlertRow[]}
 */
export function onePerSupply(list) {
  /** @type {Map<string, S['Alert'][]>} */
  const groups = new Map();
  /** @type {(S['Alert'] | string)[]} */
  const order = [];
  for (const a of list) {
    const supplyKind = a.kind === 'supply_low' || a.kind === 'supply_empty_soon';
    // A cleared alert stays a row of its own: the history says what happened when.
    if (!supplyKind || a.supply === null || a.cleared_at) {
      order.push(a);
      continue;
    }
    const key = a.serial + '\u0000' + a.supply;
    const g = groups.get(key);
    if (g) g.push(a);
    else {
      groups.set(key, [a]);
      order.push(key);
    }
  }
  return order.map((x) => {
    if (typeof x !== 'string') return { ...x, ids: [x.id] };
    const g = [...(groups.get(x) || [])].sort((p, q) => rank(p) - rank(q));
    const worst = g[0];
    const more = g.slice(1).map((r) => (r.supply_name && r.text.startsWith(r.supply_name + ' ') ? r.text.slice(r.supply_name.length + 1) : r.text));
    return {
      ...worst, text: [worst.text, ...more].join(', '), ids: g.map((a) => a.id),
      acknowledged_at: g.every((a) => a.acknowledged_at) ? worst.acknowledged_at : null,
    };
  });
}

/** "HP Color LaserJet M553" (or its given name), then location and address. @param {S['Alert']} a */
function printerCell(a) {
  const p = a.printer;
  const who = p.name && p.model && p.name !== p.model ? p.name + ' (' + p.model + ')' : p.name || p.model || a.serial;
  const where = [p.location, p.ip].filter(Boolean).join(', ');
  return [h('a', { href: '#/printer/' + encodeURIComponent(a.serial), text: who }),
    where ? h('span', { class: 'muted where', text: where }) : null];
}

export async function alertsView() {
  setTitle('Alerts');
  const history = h('input', { type: 'checkbox', id: 'alerts-history' });
  const table = h('table', { id: 'alerts', class: 'cards' });
  const msg = h('p', { class: 'error', role: 'alert' });
  view().replaceChildren(h('section', {}, h('h2', { text: 'Alerts' }),
    h('div', { class: 'toolbar' }, h('label', { for: 'alerts-history' }, history, ' Show cleared alerts too'),
      h('a', { href: '#/settings', class: 'muted', text: 'Alert rules' })),
    msg, table));
  /** @param {AlertRow} a */
  function row(a) {
    const what = ALERT_WORDS[a.kind] || a.kind;
    const ack = a.cleared_at || a.acknowledged_at ? null : h('button', {
      type: 'button', class: 'ack', 'data-write': true, text: 'Acknowledge', 'aria-label': 'Acknowledge ' + a.text + ' on ' + (a.printer.name || a.printer.model || a.serial),
      onclick: async () => {
        if (!ack) return; // the button clicked is ack
        ack.disabled = true;
        try {
          for (const id of a.ids) await post('/api/alerts/acknowledge', { id });
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
    return h('tr', { 'data-alert': a.id, 'data-kind': a.kind, 'data-supply': a.supply || undefined, 'data-state': a.cleared_at ? 'cleared' : 'open' },
      h('td', { 'data-label': 'Printer' }, printerCell(a)),
      h('td', { 'data-label': 'Alert', title: what + ': ' + a.message }, a.text),
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
        h('tbody', {}, onePerSupply(list).map(row)));
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
