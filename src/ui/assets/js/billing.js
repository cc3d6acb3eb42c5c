// @ts-check
// Billing (#/billing): the billing meter reads of a period (GET /api/billing/reads), each
// with its growth since the printer's previous read, and a note when the printer was silent all
// billing day and its nearest stored reading was used (how far from the billing time), or none
// was near enough. The period's reads as a CSV file.
import { get } from './api.js';
import { fmtInt, h, localTime } from './dom.js';
import { csvLink } from './csv-link.js';
import { focusHeading, setTitle, view } from './view.js';

/** @typedef {import('./types').GetAnswer<'/api/billing/reads'>} Reads */
/** @typedef {Reads['reads'][number]} Read */

const COLUMNS = ['Printer', 'Location', 'Read at', 'Total', 'Mono', 'Colour', 'Previous', 'Pages since', 'Note'];

/** Minutes as words: "3 h 20 min". @param {number} m */
function duration(m) {
  const a = Math.abs(m);
  const d = Math.floor(a / 1440);
  const hours = Math.floor((a % 1440) / 60);
  const min = a % 60;
  return [d ? d + ' d' : '', hours ? hours + ' h' : '', min || (!d && !hours) ? min + ' min' : ''].filter(Boolean).join(' ');
}

/** What a read's source says, in words. @param {Read} r */
export function readNote(r) {
  if (r.source === 'missing') return 'No reading: the printer was silent all billing day and no stored reading was within 7 days.';
  if (r.source === 'nearest' && r.offset_minutes !== null) {
    return 'Nearest reading, ' + duration(r.offset_minutes) + (r.offset_minutes < 0 ? ' before' : ' after') +
      ' the billing time: the printer was silent all billing day.';
  }
  return '';
}

/** @param {Read} r */
function row(r) {
  const name = [r.manufacturer, r.model].filter(Boolean).join(' ') || r.serial;
  const note = readNote(r);
  return h('tr', { 'data-serial': r.serial, 'data-source': r.source },
    h('td', { 'data-label': 'Printer' },
      h('a', { href: '#/printer/' + encodeURIComponent(r.serial), text: name }), h('div', { class: 'muted', text: r.serial })),
    h('td', { 'data-label': 'Location', text: r.location || '' }),
    h('td', { 'data-label': 'Read at', text: r.read_at ? localTime(r.read_at) : 'none' }),
    h('td', { 'data-label': 'Total', class: 'num', text: fmtInt(r.total) }),
    h('td', { 'data-label': 'Mono', class: 'num', text: fmtInt(r.counters.mono_pages) }),
    h('td', { 'data-label': 'Colour', class: 'num', text: fmtInt(r.counters.color_pages) }),
    h('td', { 'data-label': 'Previous', text: r.previous ? r.previous.period + ': ' + fmtInt(r.previous.total) : 'none' }),
    h('td', { 'data-label': 'Pages since', class: 'num delta', text: fmtInt(r.delta.total) }),
    h('td', { 'data-label': 'Note', class: note ? 'note' : '', text: note }));
}

export async function billingView() {
  setTitle('Billing');
  const period = h('select', { id: 'billing-period' });
  const intro = h('p', { class: 'muted', id: 'billing-intro' });
  const table = h('table', { id: 'billing-reads', class: 'cards' });
  const msg = h('p', { class: 'error', role: 'alert' });
  const download = csvLink('billing-csv', '/api/billing/reads', {}, 'the billing reads of this period');
  view().replaceChildren(h('section', {}, h('h2', { text: 'Billing' }), intro,
    h('div', { class: 'toolbar' }, h('label', { for: 'billing-period', text: 'Period' }), period, download.a), msg, table));
  /** @param {string} [asked] */
  async function load(asked) {
    const data = await get('/api/billing/reads', { period: asked });
    msg.textContent = '';
    const b = data.billing;
    intro.textContent = (b.enabled ? 'Meter reads are taken on day ' + b.day + ' of each month at ' + b.time + ' (' + b.time_zone + ')'
      : 'Billing reads are turned off') + ' (Settings: Billing).';
    period.replaceChildren(...data.periods.map((p) => h('option', {
      value: p.period, selected: p.period === data.period,
      text: p.period + ' (' + p.printers + ' printer' + (p.printers === 1 ? '' : 's') + (p.nearest + p.missing ? ', ' + (p.nearest + p.missing) + ' not polled' : '') + ')',
    })));
    period.disabled = !data.periods.length;
    download.set({ period: data.period ?? undefined });
    if (!data.reads.length) {
      table.replaceChildren(h('caption', { class: 'empty', text: 'No billing reads yet: the first is taken at the next billing time.' }));
    } else {
      table.replaceChildren(h('caption', { class: 'sr-only', text: 'Meter reads of ' + data.period }),
        h('thead', {}, h('tr', {}, COLUMNS.map((t) => h('th', { scope: 'col', text: t })))),
        h('tbody', {}, data.reads.map(row)));
    }
    table.dataset.loaded = 'true';
    table.dataset.period = data.period ?? '';
  }
  period.onchange = () => load(period.value).catch((err) => {
    msg.textContent = err.message;
  });
  await load();
  focusHeading();
}
