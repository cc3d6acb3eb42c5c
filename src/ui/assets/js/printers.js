// @ts-check
// Printers (#/printers): the saved printers.
// One request a page (GET /api/printers, issue 35): the box searches, filters and pages, and each
// printer comes with its newest reading and, when asked, the supply that empties first. A page
// with forecasts is at most 100 printers (the box fits each on 90 days of history), so pages are
// 50 and "Show more" appends the next. A refresh on events re-asks the rows shown, without the
// forecasts (kept from the last ask): a polling round sends events all the time.
import { get, post } from './api.js';
import { ago, fmtInt, h, when } from './dom.js';
import { onEvent } from './live.js';
import { daysText, statusBadges, supplyBars } from './printer-parts.js';
import { focusHeading, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas} S */

const PRINTERS_PAGE = 50;
/**
 * The filter's choices as the box names them.
 * @type {Record<string, import('./types').GetQuery<'/api/printers'>['filter']>}
 */
const PRINTER_FILTER = { visible: 'shown', alerts: 'alerts', hidden: 'hidden', all: 'all' };
const COLUMNS = ['Printer', 'Status', 'Last seen', 'Total', 'Mono', 'Colour', 'Supplies', 'Empties soonest', ''];

export async function printersView() {
  setTitle('Printers');
  const search = h('input', {
    type: 'search', id: 'printer-search', placeholder: 'Model, serial, address, location, asset…',
    'aria-label': 'Search printers',
  });
  const filter = h('select', { id: 'printer-filter', 'aria-label': 'Show' },
    h('option', { value: 'visible', text: 'Shown printers' }),
    h('option', { value: 'alerts', text: 'With alerts or low supplies' }),
    h('option', { value: 'hidden', text: 'Hidden printers' }),
    h('option', { value: 'all', text: 'All saved printers' }));
  const table = h('table', { id: 'saved', class: 'cards' });
  const msg = h('p', { class: 'error', role: 'alert' });
  const count = h('p', { id: 'printer-count', class: 'muted', role: 'status' });
  const more = h('button', { type: 'button', id: 'printer-more', hidden: true });
  view().replaceChildren(h('section', {}, h('h2', { text: 'Printers' }),
    h('div', { class: 'toolbar' }, search, filter), msg, table, h('div', { class: 'toolbar' }, count, more)));
  /** @type {S['PrinterPage']['printers']} */
  let rows = [];
  let total = 0;
  let anySaved = true;
  /** @type {Map<string, S['PrinterPage']['printers'][number]['soonest_empty']>} */
  const forecasts = new Map();
  // Answers for an older search or filter are dropped: a first page (newAsk) starts a new one.
  let asked = 0;
  /** @param {number} offset @param {number} limit @param {boolean} withForecast @param {boolean} newAsk */
  async function ask(offset, limit, withForecast, newAsk) {
    const n = newAsk ? ++asked : asked;
    const page = await get('/api/printers', {
      search: search.value.trim(), filter: PRINTER_FILTER[filter.value], offset, limit,
      forecast: withForecast ? 'true' : undefined,
    });
    if (n !== asked) return null;
    if (withForecast) for (const p of page.printers) forecasts.set(p.serial, p.soonest_empty);
    total = page.total;
    return page.printers;
  }
  // The first page of the current search and filter.
  async function load() {
    const got = await ask(0, PRINTERS_PAGE, true, true);
    if (!got) return;
    rows = got;
    if (!rows.length && !search.value.trim() && filter.value === 'visible') {
      anySaved = (await get('/api/printers', { filter: 'all', limit: 1 })).total > 0;
    } else anySaved = true;
    draw();
  }
  async function loadMore() {
    more.disabled = true;
    try {
      const got = await ask(rows.length, PRINTERS_PAGE, true, false);
      if (got) {
        rows = rows.concat(got);
        draw();
      }
    } catch (err) {
      msg.textContent = err.message;
    } finally {
      more.disabled = false;
    }
  }
  // The rows shown, read again, in the box's pages of at most 1,000 (more may be shown).
  async function refresh() {
    const want = Math.max(PRINTERS_PAGE, rows.length);
    /** @type {S['PrinterPage']['printers']} */
    let got = [];
    for (let offset = 0; offset < want; offset += 1000) {
      const part = await ask(offset, Math.min(1000, want - offset), false, false);
      if (!part) return;
      got = got.concat(part);
      if (part.length < Math.min(1000, want - offset)) break;
    }
    rows = got;
    draw();
  }
  /** @type {HTMLTableSectionElement | null} */
  let tbody = null;
  /** Each row drawn, by serial: what it shows (`key`) and its element. @type {Map<string, {key: string, tr: HTMLElement}>} */
  let built = new Map();
  /** @param {S['PrinterPage']['printers'][number]} p */
  function row(p) {
    const first = forecasts.get(p.serial);
    const m = p.meters;
    const visible = !p.hidden;
    const soonest = first === undefined ? h('span', { class: 'muted', text: '…' })
      : first ? first.name.replace(/_/g, ' ') + ' ' + daysText(first).text : h('span', { class: 'muted', text: '–' });
    const hide = h('button', {
      type: 'button', 'data-hide': p.serial, 'aria-label': (visible ? 'Hide ' : 'Show ') + (p.model || p.serial),
      text: visible ? 'Hide' : 'Show',
      onclick: async () => {
        hide.disabled = true;
        try {
          await post('/devices/update', { serial: p.serial, visible: !visible });
          await refresh();
        } catch (err) {
          msg.textContent = err.message;
          hide.disabled = false;
        }
      },
    });
    return h('tr', { 'data-serial': p.serial },
      h('td', { 'data-label': 'Printer' },
        h('a', { href: '#/printer/' + encodeURIComponent(p.serial) }, h('b', { text: p.model || p.serial })),
        h('div', { class: 'muted', text: [p.manufacturer, p.serial, p.ip, p.location].filter(Boolean).join(' · ') }),
        p.asset_number ? h('div', { class: 'muted', text: 'Asset ' + p.asset_number }) : null,
        visible ? null : h('span', { class: 'badge', text: 'hidden' })),
      h('td', { 'data-label': 'Status' }, statusBadges(p)),
      h('td', { 'data-label': 'Last seen', title: when(p.last_seen), text: ago(p.last_reading || p.last_seen) }),
      h('td', { class: 'num meter-total', 'data-label': 'Total', text: fmtInt(m.total) }),
      h('td', { class: 'num', 'data-label': 'Mono', text: fmtInt(m.mono) }),
      h('td', { class: 'num', 'data-label': 'Colour', text: fmtInt(m.colour) }),
      h('td', { 'data-label': 'Supplies' }, supplyBars(p.toner_levels)),
      h('td', {
        class: 'soonest', 'data-label': 'Empties soonest', title: first ? daysText(first).title : undefined,
      }, soonest),
      h('td', {}, hide));
  }
  function draw() {
    table.dataset.loaded = 'true';
    count.textContent = rows.length ? 'Showing ' + fmtInt(rows.length) + ' of ' + fmtInt(total) : '';
    more.hidden = rows.length >= total;
    more.textContent = 'Show ' + fmtInt(Math.min(PRINTERS_PAGE, total - rows.length)) + ' more';
    if (!rows.length && !anySaved) {
      tbody = null;
      table.replaceChildren(h('tbody', {}, h('tr', {}, h('td', { class: 'empty', colspan: 9 },
        'No saved printers yet. Go to ', h('a', { href: '#/discovered', text: 'Discovered' }),
        ' to scan the network and save the printers found.'))));
      return;
    }
    if (!rows.length) {
      tbody = null;
      const none = h('td', { class: 'empty', colspan: 9, text: 'No printer matches this search or filter.' });
      table.replaceChildren(h('tbody', {}, h('tr', {}, none)));
      return;
    }
    if (!tbody || tbody.parentNode !== table) {
      tbody = h('tbody');
      table.replaceChildren(h('thead', {}, h('tr', {}, COLUMNS.map((t) => h('th', { scope: 'col', text: t })))), tbody);
    }
    // A row is built again only when what it shows changed; the others stay in place (at 2,000
    // rows, building them all again took seconds: "Show more" and each event's refresh did).
    const body = tbody;
    const kids = body.children;
    /** @type {typeof built} */
    const drawn = new Map();
    rows.forEach((p, i) => {
      const key = JSON.stringify(p) + JSON.stringify(forecasts.get(p.serial)) + ago(p.last_reading || p.last_seen);
      let r = built.get(p.serial);
      if (!r || r.key !== key || drawn.has(p.serial)) r = { key, tr: row(p) };
      drawn.set(p.serial, r);
      const at = /** @type {HTMLElement | undefined} */ (kids[i]);
      if (at === r.tr) return;
      // The same printer's older row is replaced where it stands; a row from elsewhere moves here.
      if (at && at.dataset.serial === p.serial) at.replaceWith(r.tr);
      else body.insertBefore(r.tr, at || null);
    });
    while (kids.length > rows.length) kids[rows.length].remove();
    built = drawn;
  }
  const reload = () => load().then(() => {
    msg.textContent = '';
  }, (err) => {
    msg.textContent = err.message;
  });
  // Typing asks the box once the typing pauses, not at every key.
  /** @type {ReturnType<typeof setTimeout>} */
  let typing = null;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(reload, 250);
  });
  onLeave(() => clearTimeout(typing));
  filter.addEventListener('change', reload);
  more.addEventListener('click', loadMore);
  onLeave(onEvent((name) => {
    if (name === 'device_change' || name === 'poll') scheduleRefresh(() => refresh().catch(() => {}));
  }));
  await load();
  focusHeading();
}
