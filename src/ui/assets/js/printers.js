// @ts-check
// Printers (#/printers): the saved printers.
// One request a page (GET /api/printers): the box searches, filters and pages, and each
// printer comes with its newest reading and, when asked, the supply that empties first. A page
// with forecasts is at most 100 printers (the box fits each on 90 days of history), so pages are 50.
// The list is windowed: the table holds only the rows in view and a margin, and the space of the
// others is padding around it, so any printer is a scroll away and the browser lays out tens of
// rows, not thousands (2,000 rows appended 50 at a time took 18 s, one changed row a layout of the
// whole table). A page is asked when the view first reaches it. A refresh on events re-asks only the
// rows in view, without the forecasts (kept from the last ask): a polling round sends events all
// the time.
import { csvLink } from './csv-link.js';
import { get, post } from './api.js';
import { ago, errorText, fmtInt, h, when } from './dom.js';
import { onEvent } from './live.js';
import { daysText, statusBadges, supplyBars, webPageLink } from './printer-parts.js';
import { sortableHead } from './sortable.js';
import { focusHeading, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas['PrinterPage']['printers'][number]} Printer */

/** @typedef {import('./types').Schemas} S */

const PRINTERS_PAGE = 50;
// Rows drawn beyond each edge of the view: Tab, arrow keys and a short scroll find them drawn.
const MARGIN = 10;
// A row's height before one is measured (px); the window then uses the drawn rows' average.
const FIRST_ROW_HEIGHT = 80;
/**
 * The filter's choices as the box names them.
 * @type {Record<string, import('./types').GetQuery<'/api/printers'>['filter']>}
 */
const PRINTER_FILTER = { visible: 'shown', alerts: 'alerts', hidden: 'hidden', all: 'all' };
// The box sorts (GET /api/printers `sort`): the list is paged, so a sort of the rows drawn would
// sort only them. Meters and the time seen sort largest and newest first.
/** @type {import('./sortable.js').Column[]} */
const COLUMNS = [{ label: 'Printer', key: 'name' }, 'Status', { label: 'Last seen', key: 'last_seen', first: 'desc' },
  { label: 'Total', key: 'total', first: 'desc' }, { label: 'Mono', key: 'mono', first: 'desc' },
  { label: 'Colour', key: 'colour', first: 'desc' }, 'Supplies', 'Empties soonest', ''];
// The sort chosen, kept for the page's life (refreshes on events and coming back keep it).
/** @type {import('./sortable.js').SortState} */
const sortState = { dir: 'asc' };

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
  const table = h('table', { id: 'saved', class: 'cards sortable' });
  // The rows above and below the window are this box's padding (set through the CSSOM, which the
  // page's Content-Security-Policy allows).
  const pane = h('div', { id: 'saved-window', class: 'window' }, table);
  const msg = h('p', { class: 'error', role: 'alert' });
  const count = h('p', { id: 'printer-count', class: 'muted', role: 'status' });
  // The whole list as the search and filter show it (not the page drawn), as a CSV file.
  const download = csvLink('printers-csv', '/api/printers', { filter: 'shown' }, 'the printers list');
  view().replaceChildren(h('section', {}, h('h2', { text: 'Printers' }),
    h('div', { class: 'toolbar' }, search, filter, download.a), msg, pane, h('div', { class: 'toolbar' }, count)));
  /** The printers by their place in the list; a place not asked yet is empty. @type {(Printer | undefined)[]} */
  let rows = [];
  let total = 0;
  let anySaved = true;
  /** @type {Map<string, Printer['soonest_empty']>} */
  const forecasts = new Map();
  // A search, a filter or a refresh starts a generation: answers asked in an older one are dropped.
  let gen = 0;
  // The window drawn (places first..last) and the height it assumes for each row not drawn.
  let first = 0;
  let last = -1;
  let rowHeight = FIRST_ROW_HEIGHT;
  /** @param {number} offset @param {number} limit @param {boolean} withForecast */
  async function ask(offset, limit, withForecast) {
    const page = await get('/api/printers', {
      search: search.value.trim(), filter: PRINTER_FILTER[filter.value], offset, limit,
      forecast: withForecast ? 'true' : undefined,
      sort: /** @type {import('./types').GetQuery<'/api/printers'>['sort']} */ (sortState.key), order: sortState.key ? sortState.dir : undefined,
    });
    if (withForecast) for (const p of page.printers) forecasts.set(p.serial, p.soonest_empty);
    return page;
  }
  /** @param {S['PrinterPage']} page */
  function keep(page) {
    total = page.total;
    page.printers.forEach((p, j) => {
      rows[page.offset + j] = p;
    });
  }
  // The first page of the current search and filter.
  async function load() {
    const n = ++gen;
    download.set({ search: search.value.trim(), filter: PRINTER_FILTER[filter.value] });
    const page = await ask(0, PRINTERS_PAGE, true);
    if (n !== gen) return;
    let saved = true;
    if (!page.total && !search.value.trim() && filter.value === 'visible') {
      saved = (await get('/api/printers', { filter: 'all', limit: 1 })).total > 0;
      if (n !== gen) return;
    }
    anySaved = saved;
    rows = [];
    keep(page);
    // A new answer starts at its top: back to the list if the view was below its start.
    if (pane.getBoundingClientRect().top < 0) pane.scrollIntoView();
    draw();
  }
  // The pages the window shows and nobody has asked yet, one request at a time: a fast scroll asks
  // only for where it stops, not for every page it passed.
  let asking = false;
  async function askMissing() {
    if (asking) return;
    let i = first;
    while (i <= last && rows[i]) i++;
    if (i > last) return;
    const n = gen;
    const offset = i - (i % PRINTERS_PAGE);
    asking = true;
    try {
      const page = await ask(offset, PRINTERS_PAGE, true);
      if (n === gen) keep(page);
    } catch (err) {
      msg.textContent = errorText(err); // asked again at the next scroll
      return;
    } finally {
      asking = false;
    }
    draw();
  }
  // The rows in view read again (one request, with a margin: a list grown by the event moves the
  // window a little); the rest of the list is forgotten and asked again when the view reaches it,
  // so a refresh costs the same at 50 printers as at 2,000.
  async function refresh() {
    const n = ++gen;
    const offset = last >= first ? Math.max(0, first - MARGIN) : 0;
    const limit = Math.min(1000, last >= first ? last - offset + 1 + MARGIN : PRINTERS_PAGE);
    const page = await ask(offset, limit, false);
    if (n !== gen) return;
    rows = [];
    keep(page);
    draw();
  }
  /** @type {HTMLTableSectionElement | null} */
  let tbody = null;
  // Built once: the focus stays on the sort button pressed while the rows change under it.
  const head = sortableHead(COLUMNS, sortState, () => reload());
  head.row.setAttribute('aria-rowindex', '1');
  /** Each row drawn, by serial (a place not yet answered by '#' and its place): what it shows (`key`) and its element. @type {Map<string, {key: string, tr: HTMLElement}>} */
  let built = new Map();
  /** @param {Printer} p */
  function row(p) {
    const soonestSupply = forecasts.get(p.serial);
    const m = p.meters;
    const visible = !p.hidden;
    const soonest = soonestSupply === undefined ? h('span', { class: 'muted', text: '…' })
      : soonestSupply ? soonestSupply.name.replace(/_/g, ' ') + ' ' + daysText(soonestSupply).text : h('span', { class: 'muted', text: '–' });
    const name = p.description || p.model || p.serial;
    const hide = h('button', {
      type: 'button', 'data-hide': p.serial, 'data-write': true, 'aria-label': (visible ? 'Hide ' : 'Show ') + name,
      text: visible ? 'Hide' : 'Show',
      onclick: async () => {
        hide.disabled = true;
        try {
          await post('/devices/update', { serial: p.serial, visible: !visible });
          await refresh();
        } catch (err) {
          msg.textContent = errorText(err);
          hide.disabled = false;
        }
      },
    });
    return h('tr', { 'data-serial': p.serial },
      h('td', { 'data-label': 'Printer' },
        h('a', { href: '#/printer/' + encodeURIComponent(p.serial) }, h('b', { class: 'printer-name', text: name })),
        h('div', { class: 'muted', text: [p.description ? p.model : null, p.manufacturer, p.serial, p.ip, p.location].filter(Boolean).join(' · ') }),
        p.asset_number ? h('div', { class: 'muted', text: 'Asset ' + p.asset_number }) : null,
        visible ? null : h('span', { class: 'badge', text: 'hidden' }),
        p.web_page ? h('div', {}, webPageLink(p.serial, name)) : null),
      h('td', { 'data-label': 'Status' }, statusBadges(p)),
      h('td', { 'data-label': 'Last seen', title: when(p.last_seen), text: ago(p.last_reading || p.last_seen) }),
      h('td', { class: 'num meter-total', 'data-label': 'Total', text: fmtInt(m.total) }),
      h('td', { class: 'num', 'data-label': 'Mono', text: fmtInt(m.mono) }),
      h('td', { class: 'num', 'data-label': 'Colour', text: fmtInt(m.colour) }),
      h('td', { 'data-label': 'Supplies' }, supplyBars(p.toner_levels)),
      h('td', {
        class: 'soonest', 'data-label': 'Empties soonest', title: soonestSupply ? daysText(soonestSupply).title : undefined,
      }, soonest),
      h('td', {}, hide));
  }
  /** A place whose printer is still being asked for, as tall as a row. */
  const waiting = () => h('tr', { class: 'waiting', 'aria-busy': 'true' },
    h('td', { colspan: 9, class: 'muted', text: 'Loading…', style: `height: ${rowHeight}px` }));
  /** The places in view and a margin, from where the list's first place would be in the viewport. */
  function placesInView() {
    const zero = (tbody ? tbody.getBoundingClientRect().top : 0) - first * rowHeight;
    const from = Math.max(0, Math.floor(-zero / rowHeight) - MARGIN);
    const to = Math.ceil((innerHeight - zero) / rowHeight) + MARGIN;
    const a = Math.min(from, Math.max(0, total - 1));
    return [a, Math.min(total - 1, Math.max(to, a + 2 * MARGIN))];
  }
  function draw() {
    // An answer that comes after the view was left has nothing to draw (and nothing to measure).
    if (!table.isConnected) return;
    table.dataset.loaded = 'true';
    table.setAttribute('aria-rowcount', String(total + 1));
    // Set only when it changes: the count is a live region, and a scroll draws many times.
    const counted = total ? fmtInt(total) + (total === 1 ? ' printer' : ' printers') : '';
    if (count.textContent !== counted) count.textContent = counted;
    if (!total) {
      tbody = null;
      built = new Map();
      first = 0;
      last = -1;
      pane.style.padding = '0';
      const text = anySaved ? [h('td', { class: 'empty', colspan: 9, text: 'No printer matches this search or filter.' })]
        : [h('td', { class: 'empty', colspan: 9 }, 'No saved printers yet. Go to ',
          h('a', { href: '#/discovered', text: 'Discovered' }), ' to scan the network and save the printers found.')];
      table.replaceChildren(h('tbody', {}, h('tr', {}, text)));
      return;
    }
    if (!tbody || tbody.parentNode !== table) {
      tbody = h('tbody');
      table.replaceChildren(head.el, tbody);
    }
    [first, last] = placesInView();
    // A row is built again only when what it shows changed; the others stay in place, and only the
    // rows in the window exist at all. The rows leaving the window go first, so that the ones
    // staying are never moved (a moved element loses the keyboard's focus).
    /** @type {typeof built} */
    const drawn = new Map();
    /** @type {HTMLElement[]} */
    const want = [];
    for (let i = first; i <= last; i++) {
      const p = rows[i];
      const id = p ? p.serial : '#' + i;
      const key = p ? JSON.stringify(p) + JSON.stringify(forecasts.get(p.serial)) + ago(p.last_reading || p.last_seen) : '';
      let r = built.get(id);
      if (!r || r.key !== key || drawn.has(id)) r = { key, tr: p ? row(p) : waiting() };
      drawn.set(id, r);
      want.push(r.tr);
      const place = String(i + 2); // the header is row 1
      if (r.tr.getAttribute('aria-rowindex') !== place) r.tr.setAttribute('aria-rowindex', place);
    }
    const body = tbody;
    const staying = new Set(want);
    for (const tr of [...body.children]) {
      if (!staying.has(/** @type {HTMLElement} */ (tr))) {
        const serial = /** @type {HTMLElement} */ (tr).dataset.serial;
        // The same printer's row built again takes its older row's place.
        const again = serial && drawn.get(serial);
        if (again && !again.tr.isConnected) tr.replaceWith(again.tr);
        else tr.remove();
      }
    }
    const kids = body.children;
    want.forEach((tr, j) => {
      if (kids[j] !== tr) body.insertBefore(tr, kids[j] || null);
    });
    const n = want.length;
    built = drawn;
    // The window's own height gives the height assumed for the rows not drawn; a change of more
    // than a pixel or two draws the window again (rows alike in height settle at once).
    const measured = body.getBoundingClientRect().height / n;
    const settled = !(measured > 0) || Math.abs(measured - rowHeight) <= 2;
    if (!settled) rowHeight = measured;
    pane.style.paddingTop = first * rowHeight + 'px';
    pane.style.paddingBottom = (total - 1 - last) * rowHeight + 'px';
    if (!settled) soon();
    askMissing();
  }
  // Scrolling and resizing draw the window again, once a frame.
  let frame = 0;
  function soon() {
    if (!frame) {
      frame = requestAnimationFrame(() => {
        frame = 0;
        if (tbody) draw();
      });
    }
  }
  addEventListener('scroll', soon, { passive: true });
  addEventListener('resize', soon);
  onLeave(() => {
    removeEventListener('scroll', soon);
    removeEventListener('resize', soon);
    cancelAnimationFrame(frame);
  });
  const reload = () => load().then(() => {
    msg.textContent = '';
  }, (err) => {
    msg.textContent = err.message;
  });
  // Typing asks the box once the typing pauses, not at every key.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typing;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(reload, 250);
  });
  onLeave(() => clearTimeout(typing));
  filter.addEventListener('change', reload);
  onLeave(onEvent((name) => {
    if (name === 'device_change' || name === 'poll') scheduleRefresh(() => refresh().catch(() => {}));
  }));
  await load();
  focusHeading();
}
