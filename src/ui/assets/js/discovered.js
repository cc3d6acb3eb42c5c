// @ts-check
// Discovered (#/discovered): printers found and not saved (and saved ones whose identity answered
// from another address: a move a person confirms); Scan now, Save, Save all, Hide, Unhide, Name,
// Confirm move; whether each answers and how it was found; a search, "Show hidden" and sortable
// columns; the printers that answered with nothing to key them by (not stored, and why); then what
// discovery heard that is not a printer: print servers' queues and the other hosts that answered
// (GET /discover/status). The navigation's count of printers awaiting saving comes from there too.
import { get, post } from './api.js';
import { errorText, fmtInt, h, localTime } from './dom.js';
import { onEvent } from './live.js';
import { detection, foundBy, liveness, meters, methodsText, supplyBars, webLink } from './printer-parts.js';
import { sortableHead, sortRows } from './sortable.js';
import { latestScan, mdnsWarnings, noteScan, notPrintersText, scanText } from './status.js';
import { focusHeading, guardLeave, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas} S */
/** @typedef {S['PrinterInfo'] & { serial: string }} Found */

// PrinterInfo's serial is optional in the contract; this agent always sends it, and Save and Hide
// name the printer by it.
/** @param {S['PrinterInfo']} p @returns {p is Found} */
const hasSerial = (p) => !!p.serial;

/** @type {import('./sortable.js').Column[]} */
const COLUMNS = [{ label: 'Printer', key: 'name' }, { label: 'Address', key: 'ip' }, { label: 'Status', key: 'status' },
  { label: 'How it was found', key: 'found' }, { label: 'Meter', key: 'meter', first: 'desc' }, 'Supplies', ''];
/** @type {Record<string, (p: Found) => string | number | undefined>} */
const SORT_VALUES = {
  name: (p) => displayName(p), ip: (p) => p.ip, status: (p) => liveness(p).text, found: (p) => foundBy(p),
  meter: (p) => meters(p).total,
};
// The sort chosen, kept for the page's life: live updates and coming back to the view keep it.
/** @type {import('./sortable.js').SortState} */
const sortState = { dir: 'asc' };
/** A printer as the page names it: a person's name, else its model, else its key. @param {Found} p */
const displayName = (p) => p.name || p.model || p.serial;

/**
 * What a key that is not the printer's own serial is made from (the API's Device.serial): the
 * page says so beside the key. @param {string} serial
 */
function keyNote(serial) {
  if (serial.startsWith('MAC-')) return 'no serial reported: listed by its MAC address';
  if (serial.startsWith('UUID-')) return 'no serial reported: listed by its IPP printer-uuid';
  if (serial.startsWith('USB-')) return 'no serial reported: listed by its USB port';
  return '';
}

/** The navigation's count of discovered printers awaiting saving. @param {number} n */
export function showAwaiting(n) {
  const c = document.getElementById('discovered-count');
  if (!c) return;
  c.hidden = n === 0;
  c.replaceChildren(String(n), h('span', { class: 'sr-only', text: n === 1 ? ' printer awaiting saving' : ' printers awaiting saving' }));
}
/** @type {ReturnType<typeof setTimeout> | undefined} */
let awaitingTimer;
/** The navigation's count, now and after each change of the records (GET /discover/status). */
export function watchAwaiting() {
  const ask = () => get('/discover/status').then((o) => showAwaiting(o.awaiting_save), () => {});
  onEvent((name, d) => {
    if (name !== 'device_change' && name !== 'poll' && !(name === 'discovery_update' && d.state !== 'running')) return;
    // The first event of a burst starts the wait and later ones join it: a wait restarted by each
    // would never end while a scan's events keep coming.
    if (awaitingTimer !== undefined) return;
    awaitingTimer = setTimeout(() => {
      awaitingTimer = undefined;
      void ask();
    }, 700);
  });
  void ask();
}

const QUEUE_COLUMNS = ['Server', 'Queue', 'Prints to', 'Found by', 'Last seen'];
/** @type {Record<string, string>} */
const SERVER_KIND = { cups: 'CUPS', windows: 'Windows', other: 'print server' };

export async function discoveredView() {
  setTitle('Discovered');
  const table = h('table', { id: 'discovered', class: 'cards sortable' });
  const msg = h('p', { class: 'error', role: 'alert' });
  const scanState = h('p', { id: 'scan-state', role: 'status', 'aria-live': 'polite' });
  const scanBtn = h('button', { type: 'button', class: 'primary', id: 'scan', text: 'Scan now', 'data-write': true });
  const saveAll = h('button', { type: 'button', id: 'save-all', text: 'Save all', 'data-write': true });
  const search = h('input', { type: 'search', id: 'discovered-search', placeholder: 'Name, model, serial, address…', 'aria-label': 'Search discovered printers' });
  const showHidden = h('input', { type: 'checkbox', id: 'show-hidden' });
  const tbody = h('tbody');
  const head = sortableHead(COLUMNS, sortState, () => draw());
  const unkeyed = h('table', { id: 'unkeyed', class: 'cards' });
  const unkeyedSection = h('section', { id: 'unkeyed-section', 'aria-labelledby': 'unkeyed-h', hidden: true },
    h('h2', { id: 'unkeyed-h', text: 'Printers that could not be listed' }),
    h('p', { class: 'muted', text: 'They answered as printers but gave no serial and no MAC address, and the box cannot see their MAC '
      + '(they are not on its own network): a record keyed by the address alone would become a second record when the address '
      + 'changes. Give the printer a serial or reach it on the box\'s own network, or add it by USB.' }),
    unkeyed);
  const note = h('div', { id: 'scan-note' });
  const warnings = h('div', { id: 'discovery-warnings' });
  const queues = h('table', { id: 'print-queues', class: 'cards' });
  const queuesSection = h('section', { id: 'queues-section', 'aria-labelledby': 'queues-h', hidden: true },
    h('h2', { id: 'queues-h', text: 'Print queues on print servers' }),
    h('p', { class: 'muted', text: 'A print server shares these queues; they are not printers, and they are not saved. '
      + 'Where a queue names a known printer, it is linked.' }),
    queues);
  const othersSummary = h('summary', { id: 'other-hosts-count' });
  const others = h('table', { id: 'other-hosts', class: 'cards' });
  const othersSection = h('section', { id: 'others-section', 'aria-labelledby': 'others-h', hidden: true },
    h('h2', { id: 'others-h', text: 'Other hosts that answered' }),
    h('details', {}, othersSummary, others));
  view().replaceChildren(h('section', {}, h('h2', { text: 'Discovered printers' }),
    h('div', { class: 'toolbar' }, scanBtn, saveAll,
      h('a', { href: '#/settings', class: 'muted', text: 'Discovery settings' })),
    h('div', { class: 'toolbar' }, search, h('label', { for: 'show-hidden' }, showHidden, ' Show hidden')),
    note, warnings, scanState, msg, table), unkeyedSection, queuesSection, othersSection);
  /** @type {Found[]} */
  let found = [];
  let nothing = false;
  // The name being edited: the list is not drawn again under it (live updates wait for it).
  /** @type {{ serial: string, input: HTMLInputElement, was: string } | null} */
  let editing = null;
  let stale = false;
  let nameFields = 0;
  guardLeave(() => (editing && editing.input.value !== editing.was ? 'The name being edited is not saved.' : null));

  /** The status cell: answering or not, and a pending move with its Confirm. @param {Found} p @param {string} name */
  function status(p, name) {
    const live = liveness(p);
    const move = p.pending_move;
    return h('td', { class: 'status', 'data-label': 'Status' },
      h('span', { class: 'state' + (live.warn ? ' warn' : ''), 'data-state': live.state, text: live.text }),
      live.detail ? h('div', { class: 'muted', text: live.detail }) : null,
      move ? h('div', { class: 'move', 'data-move': p.serial },
        h('span', { class: 'state warn', text: 'Move pending: seen at ' + move.ip }),
        h('div', { class: 'muted', text: move.reason + ' (seen ' + localTime(move.seen_at) + ')' }),
        h('button', {
          type: 'button', 'data-confirm-move': p.serial, 'data-write': true, 'aria-label': 'Confirm move of ' + name + ' to ' + move.ip,
          text: 'Confirm move',
          onclick: (/** @type {MouseEvent} */ e) =>
            act(e, () => post('/devices/confirm-move', { serial: p.serial, ip: move.ip })),
        })) : null);
  }
  /** @param {Found} p */
  function actions(p, /** @type {string} */ name) {
    // A saved printer is listed only for its pending move: nothing to save or hide here.
    if (p.is_saved) return h('td', {}, h('span', { class: 'badge', 'data-saved': p.serial, text: 'Saved' }));
    if (p.hidden) {
      return h('td', {}, h('div', { class: 'toolbar' }, h('button', {
        type: 'button', 'data-unhide': p.serial, 'data-write': true, 'aria-label': 'Unhide ' + name, text: 'Unhide',
        onclick: (/** @type {MouseEvent} */ e) => act(e, () => post('/devices/update', { serial: p.serial, visible: true })),
      })));
    }
    return h('td', {}, h('div', { class: 'toolbar' },
      h('button', {
        type: 'button', class: 'primary', 'data-save': p.serial, 'data-write': true, 'aria-label': 'Save ' + name, text: 'Save',
        onclick: (/** @type {MouseEvent} */ e) => act(e, () => post('/devices/save', { serial: p.serial })),
      }),
      h('button', {
        type: 'button', 'data-hide': p.serial, 'data-write': true, 'aria-label': 'Hide ' + name, text: 'Hide',
        onclick: (/** @type {MouseEvent} */ e) =>
          act(e, () => post('/devices/update', { serial: p.serial, visible: false })),
      })));
  }
  /** The name and its Name button, or the form that edits it. @param {Found} p */
  function nameCell(p) {
    const cell = h('div', { class: 'name-cell' });
    const label = displayName(p);
    const show = () => cell.replaceChildren(h('b', { class: 'printer-name', text: label }),
      p.name && p.model ? h('div', { class: 'muted', text: p.model }) : '',
      h('button', {
        type: 'button', class: 'link', 'data-name-edit': p.serial, 'data-write': true,
        'aria-label': (p.name ? 'Rename ' : 'Name ') + label, text: p.name ? 'Rename' : 'Name',
        onclick: () => edit(),
      }));
    const edit = () => {
      // A serial may hold characters an id may not (spaces): the field's id is a counter's.
      const id = 'name-field-' + ++nameFields;
      const input = h('input', { type: 'text', id, value: p.name || '', maxlength: 1024, autocomplete: 'off' });
      editing = { serial: p.serial, input, was: p.name || '' };
      const done = () => {
        editing = null;
        if (stale) load().catch(() => {});
      };
      const form = h('form', { class: 'name-form', 'data-name-form': p.serial },
        h('label', { for: id, text: 'Name of ' + (p.model || p.serial) }), input,
        h('div', { class: 'toolbar' },
          h('button', { type: 'submit', class: 'primary', text: 'Save name' }),
          h('button', { type: 'button', text: 'Cancel', onclick: () => (show(), done()) })));
      form.onsubmit = (e) => {
        e.preventDefault();
        void act(e, () => post('/devices/update', { serial: p.serial, description: input.value.trim() }), () => (editing = null));
      };
      cell.replaceChildren(form);
      input.focus();
    };
    show();
    return cell;
  }
  /** @param {Found} p */
  function row(p) {
    const name = displayName(p);
    const how = detection(p);
    const note = keyNote(p.serial);
    return h('tr', { 'data-serial': p.serial, class: p.hidden ? 'hidden-entry' : undefined },
      h('td', { 'data-label': 'Printer' }, nameCell(p),
        p.hidden ? h('span', { class: 'badge', 'data-hidden-badge': p.serial, text: 'Hidden' }) : null,
        h('div', { class: 'muted' }, p.manufacturer ? p.manufacturer + ' · ' : '', note ? 'key ' : 'serial ',
          h('code', { class: 'key', text: p.serial })),
        note ? h('div', { class: 'muted key-note', text: note }) : null),
      h('td', { 'data-label': 'Address' }, p.ip,
        h('div', { class: 'muted', text: [p.hostname, p.location].filter(Boolean).join(' · ') }),
        p.web_ui_url ? h('div', {}, webLink(p.web_ui_url)) : null),
      status(p, name),
      h('td', { class: 'how', 'data-label': 'How it was found' }, h('span', { class: 'found-by', text: foundBy(p) }),
        how ? h('div', { class: 'muted', text: how }) : null),
      h('td', { class: 'num', 'data-label': 'Meter', text: fmtInt(meters(p).total) }),
      h('td', { 'data-label': 'Supplies' }, supplyBars(p.toner_levels)),
      actions(p, name));
  }
  /**
   * A print queue; what it prints to is the linked printer (named from this list when it is here,
   * no request a row) or its device URI.
   * @param {S['PrintQueue']} q @param {Map<string, Found>} bySerial
   */
  function queueRow(q, bySerial) {
    const linked = q.printer_serial ? bySerial.get(q.printer_serial) : undefined;
    const target = q.printer_serial
      ? h('a', { href: '#/printer/' + encodeURIComponent(q.printer_serial),
        text: linked?.model ? linked.model + ' (' + q.printer_serial + ')' : 'printer ' + q.printer_serial })
      : h('span', { class: 'uri', text: q.device_uri || '–' });
    return h('tr', { 'data-queue': q.server + ' ' + q.queue },
      h('td', { 'data-label': 'Server' }, q.server, h('div', { class: 'muted', text: SERVER_KIND[q.server_kind] || q.server_kind })),
      h('td', { 'data-label': 'Queue' }, h('b', { text: q.queue + (q.is_class ? ' (class)' : '') }),
        q.make_and_model ? h('div', { class: 'muted', text: q.make_and_model }) : null),
      h('td', { class: 'how', 'data-label': 'Prints to' }, target,
        q.printer_serial && q.link ? h('div', { class: 'muted', text: q.link }) : null),
      h('td', { 'data-label': 'Found by' }, methodsText(q.found_by), h('div', { class: 'muted', text: q.why })),
      h('td', { 'data-label': 'Last seen', text: localTime(q.seen_at) }));
  }
  /** @param {S['DiscoveryOverview']} o @param {Map<string, Found>} bySerial */
  function showOverview(o, bySerial) {
    warnings.replaceChildren(...mdnsWarnings(o.mdns).map((t) => h('p', { class: 'warning', role: 'note', text: t })));
    queuesSection.hidden = !o.print_queues.length;
    queues.replaceChildren(...(o.print_queues.length ? [
      h('thead', {}, h('tr', {}, QUEUE_COLUMNS.map((t) => h('th', { scope: 'col', text: t })))),
      h('tbody', {}, o.print_queues.map((q) => queueRow(q, bySerial)))] : []));
    const hosts = o.not_printer_hosts;
    othersSection.hidden = !hosts.length;
    othersSummary.textContent = notPrintersText(o.scan?.not_printers ?? hosts.length, hosts.length);
    others.replaceChildren(...(hosts.length ? [
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'Address' }), h('th', { scope: 'col', text: 'Why it is not a printer' }))),
      h('tbody', {}, hosts.map((x) => h('tr', { 'data-host': x.ip },
        h('td', { 'data-label': 'Address', text: x.ip }), h('td', { class: 'how', 'data-label': 'Why it is not a printer', text: x.why }))))] : []));
  }
  /** @param {S['DiscoveryOverview']['unkeyed_printers']} list */
  function showUnkeyed(list) {
    unkeyedSection.hidden = !list.length;
    unkeyed.replaceChildren(...(list.length ? [
      h('thead', {}, h('tr', {}, ['Address', 'Printer', 'Why it is not listed'].map((t) => h('th', { scope: 'col', text: t })))),
      h('tbody', {}, list.map((x) => h('tr', { 'data-unkeyed': x.ip },
        h('td', { 'data-label': 'Address', text: x.ip }),
        h('td', { 'data-label': 'Printer', text: [x.manufacturer, x.model].filter(Boolean).join(' ') || '–' }),
        h('td', { class: 'how', 'data-label': 'Why it is not listed', text: x.why }))))] : []));
  }
  async function load() {
    if (editing) {
      stale = true; // drawn once the name is saved or the edit cancelled
      return;
    }
    stale = false;
    // GET /discover/status carries the scan's state too: three requests whatever the list's length.
    const [all, s, overview] = await Promise.all([
      get('/devices/discovered', { include_hidden: showHidden.checked || undefined }), get('/settings'), get('/discover/status')]);
    if (editing) {
      stale = true;
      return;
    }
    found = all.filter(hasSerial);
    scanState.textContent = scanText(noteScan(overview.scan));
    showAwaiting(overview.awaiting_save);
    const d = s.discovery;
    nothing = !d.subnet_scan && !(d.manual_ranges && d.ranges_text.trim());
    note.replaceChildren(nothing
      ? h('p', { class: 'empty', id: 'no-ranges' }, 'No ranges enabled: turn on subnet scan or add a range in ',
        h('a', { href: '#/settings', text: 'Settings' }), ', then scan.')
      : '');
    saveAll.disabled = !found.some((p) => !p.is_saved && !p.hidden);
    showUnkeyed(overview.unkeyed_printers);
    showOverview(overview, new Map(found.map((p) => [p.serial, p])));
    draw();
  }
  /** The list as searched and sorted; the header stays (the focus on a sort button too). */
  function draw() {
    const q = search.value.trim().toLowerCase();
    const shown = q ? found.filter((p) => [p.name, p.model, p.manufacturer, p.serial, p.ip, p.hostname, p.location]
      .some((v) => v && v.toLowerCase().includes(q))) : found;
    if (!shown.length) {
      table.replaceChildren(h('tbody', {}, h('tr', {}, h('td', { class: 'empty', colspan: COLUMNS.length }, nothing && !found.length
        ? 'Nothing discovered yet.'
        : q ? 'No discovered printer matches this search' + (showHidden.checked ? '.' : ' (hidden ones are not searched: tick Show hidden).')
          : 'No new printers: every printer found is saved or hidden. Press Scan now to look again.'))));
      return;
    }
    tbody.replaceChildren(...sortRows(shown, sortState, SORT_VALUES).map(row));
    if (head.el.parentNode !== table || tbody.parentNode !== table) table.replaceChildren(head.el, tbody);
  }
  /**
   * A button's action, then the list again. @param {Event} e @param {() => Promise<unknown>} action
   * @param {() => void} [then] before the list is read again (the action succeeded)
   */
  async function act(e, action, then) {
    const button = /** @type {HTMLButtonElement} */ (e instanceof SubmitEvent && e.submitter ? e.submitter : e.target);
    button.disabled = true;
    msg.textContent = '';
    try {
      await action();
      then?.();
      await load();
    } catch (err) {
      msg.textContent = errorText(err);
      button.disabled = false;
    }
  }
  search.addEventListener('input', () => draw());
  showHidden.addEventListener('change', () => load().catch((err) => (msg.textContent = errorText(err))));
  scanBtn.onclick = async () => {
    msg.textContent = '';
    try {
      scanState.textContent = scanText(noteScan(await post('/discover', {})));
    } catch (err) {
      msg.textContent = errorText(err);
    }
  };
  saveAll.onclick = async (e) => act(e, () => post('/devices/save/all', {}));
  onLeave(onEvent((name, d) => {
    if (name === 'discovery_update') {
      scanState.textContent = scanText(latestScan());
      if (d.state !== 'running') scheduleRefresh(() => load().catch(() => {}));
    }
    if (name === 'device_change' || name === 'poll') scheduleRefresh(() => load().catch(() => {}));
  }));
  await load();
  focusHeading();
}
