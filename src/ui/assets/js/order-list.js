// @ts-check
// Order list (#/order-list): every saved printer's supplies forecast to run out within
// Settings `order_list.within_days` or already below the low mark, soonest first, with the part
// number to order (GET /api/supplies/order-list), and the same list as a CSV file.
import { get } from './api.js';
import { h } from './dom.js';
import { csvLink } from './csv-link.js';
import { onEvent } from './live.js';
import { focusHeading, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').GetAnswer<'/api/supplies/order-list'>['items'][number]} OrderItem */

const COLUMNS = ['Expected empty', 'Part number', 'Supply', 'Level', 'Printer', 'Location'];
/** @type {Record<string, string>} */
const REASON_WORDS = { low: 'below the low mark', forecast: 'runs out soon' };

/** @param {OrderItem} i */
function row(i) {
  const name = [i.manufacturer, i.model].filter(Boolean).join(' ') || i.serial;
  const expected = i.expected_empty_on
    ? i.expected_empty_on + (i.days_to_empty !== null ? ' (in ' + Math.round(i.days_to_empty) + ' days)' : '')
    : 'no forecast';
  return h('tr', { 'data-serial': i.serial, 'data-supply': i.supply },
    h('td', { 'data-label': 'Expected empty', text: expected }),
    h('td', { 'data-label': 'Part number', class: i.part_number ? 'part' : 'muted', text: i.part_number || 'not reported' }),
    h('td', { 'data-label': 'Supply', text: i.supply }),
    h('td', { 'data-label': 'Level' },
      i.level === null ? 'unknown' : Math.round(i.level) + ' %', ' ',
      h('span', { class: 'muted', text: i.reasons.map((r) => REASON_WORDS[r] || r).join(', ') })),
    h('td', { 'data-label': 'Printer' },
      h('a', { href: '#/printer/' + encodeURIComponent(i.serial), text: name }),
      h('div', { class: 'muted', text: i.serial })),
    h('td', { 'data-label': 'Location', text: i.location || '' }));
}

export async function orderListView() {
  setTitle('Order list');
  const intro = h('p', { class: 'muted', id: 'order-list-intro' });
  const table = h('table', { id: 'order-list', class: 'cards' });
  const msg = h('p', { class: 'error', role: 'alert' });
  const download = csvLink('order-list-csv', '/api/supplies/order-list', {}, 'the order list');
  view().replaceChildren(h('section', {}, h('h2', { text: 'Order list' }),
    h('div', { class: 'toolbar' }, intro, download.a), msg, table));
  async function load() {
    const list = await get('/api/supplies/order-list');
    msg.textContent = '';
    intro.textContent = 'Supplies forecast to run out within ' + list.within_days + ' days, or below ' +
      list.low_mark_percent + ' % now (Settings: Order list, Alerts).';
    if (!list.items.length) {
      table.replaceChildren(h('caption', { class: 'empty', text: 'Nothing to order: no supply runs out within ' + list.within_days + ' days.' }));
    } else {
      table.replaceChildren(h('caption', { class: 'sr-only', text: list.items.length + ' supplies to order, soonest first' }),
        h('thead', {}, h('tr', {}, COLUMNS.map((t) => h('th', { scope: 'col', text: t })))),
        h('tbody', {}, list.items.map(row)));
    }
    table.dataset.loaded = 'true';
  }
  onLeave(onEvent((name) => {
    if (name === 'poll') scheduleRefresh(() => load().catch(() => {}));
  }));
  await load();
  focusHeading();
}
