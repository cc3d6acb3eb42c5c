// @ts-check
// Discovered (#/discovered): printers found and not saved (and saved ones whose identity answered
// from another address: a move a person confirms); Scan now, Save, Save all, Hide, Confirm move;
// whether each answers; then what discovery heard that is not a printer: print servers' queues and
// the other hosts that answered (GET /discover/status).
import { get, post } from './api.js';
import { errorText, fmtInt, h, localTime } from './dom.js';
import { onEvent } from './live.js';
import { detection, foundBy, liveness, meters, methodsText, supplyBars, webLink } from './printer-parts.js';
import { latestScan, mdnsWarnings, noteScan, notPrintersText, scanText } from './status.js';
import { focusHeading, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas} S */
/** @typedef {S['PrinterInfo'] & { serial: string }} Found */

// PrinterInfo's serial is optional in the contract; this agent always sends it, and Save and Hide
// name the printer by it.
/** @param {S['PrinterInfo']} p @returns {p is Found} */
const hasSerial = (p) => !!p.serial;

const COLUMNS = ['Printer', 'Address', 'Status', 'How it was found', 'Meter', 'Supplies', ''];
const QUEUE_COLUMNS = ['Server', 'Queue', 'Prints to', 'Found by', 'Last seen'];
/** @type {Record<string, string>} */
const SERVER_KIND = { cups: 'CUPS', windows: 'Windows', other: 'print server' };

export async function discoveredView() {
  setTitle('Discovered');
  const table = h('table', { id: 'discovered', class: 'cards' });
  const msg = h('p', { class: 'error', role: 'alert' });
  const scanState = h('p', { id: 'scan-state', role: 'status', 'aria-live': 'polite' });
  const scanBtn = h('button', { type: 'button', class: 'primary', id: 'scan', text: 'Scan now', 'data-write': true });
  const saveAll = h('button', { type: 'button', id: 'save-all', text: 'Save all', 'data-write': true });
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
    note, warnings, scanState, msg, table), queuesSection, othersSection);

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
  /** @param {Found} p */
  function row(p) {
    const name = p.model || p.serial;
    const how = detection(p);
    return h('tr', { 'data-serial': p.serial },
      h('td', { 'data-label': 'Printer' }, h('b', { text: name }),
        h('div', { class: 'muted', text: [p.manufacturer, p.serial].filter(Boolean).join(' · ') })),
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
  async function load() {
    // GET /discover/status carries the scan's state too: three requests whatever the list's length.
    const [all, s, overview] = await Promise.all([get('/devices/discovered'), get('/settings'), get('/discover/status')]);
    const found = all.filter(hasSerial);
    scanState.textContent = scanText(noteScan(overview.scan));
    const d = s.discovery;
    const nothing = !d.subnet_scan && !(d.manual_ranges && d.ranges_text.trim());
    note.replaceChildren(nothing
      ? h('p', { class: 'empty', id: 'no-ranges' }, 'No ranges enabled: turn on subnet scan or add a range in ',
        h('a', { href: '#/settings', text: 'Settings' }), ', then scan.')
      : '');
    saveAll.disabled = !found.some((p) => !p.is_saved);
    showOverview(overview, new Map(found.map((p) => [p.serial, p])));
    if (!found.length) {
      table.replaceChildren(h('tbody', {}, h('tr', {}, h('td', { class: 'empty', colspan: COLUMNS.length }, nothing
        ? 'Nothing discovered yet.'
        : 'No new printers: every printer found is saved or hidden. Press Scan now to look again.'))));
      return;
    }
    table.replaceChildren(
      h('thead', {}, h('tr', {}, COLUMNS.map((t) => h('th', { scope: 'col', text: t })))),
      h('tbody', {}, found.map(row)));
  }
  /** A button's action, then the list again. @param {Event} e @param {() => Promise<unknown>} action */
  async function act(e, action) {
    const button = /** @type {HTMLButtonElement} */ (e.target);
    button.disabled = true;
    msg.textContent = '';
    try {
      await action();
      await load();
    } catch (err) {
      msg.textContent = errorText(err);
      button.disabled = false;
    }
  }
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
