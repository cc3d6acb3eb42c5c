// @ts-check
// Discovered (#/discovered): printers found and not saved; Scan now, Save, Save all, Hide.
import { get, post } from './api.js';
import { errorText, fmtInt, h } from './dom.js';
import { onEvent } from './live.js';
import { detection, foundBy, meters, supplyBars, webLink } from './printer-parts.js';
import { latestScan, noteScan, scanText } from './status.js';
import { focusHeading, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas} S */
/** @typedef {S['PrinterInfo'] & { serial: string }} Found */

// PrinterInfo's serial is optional in the contract; this agent always sends it, and Save and Hide
// name the printer by it.
/** @param {S['PrinterInfo']} p @returns {p is Found} */
const hasSerial = (p) => !!p.serial;

const COLUMNS = ['Printer', 'Address', 'How it was found', 'Meter', 'Supplies', ''];

export async function discoveredView() {
  setTitle('Discovered');
  const table = h('table', { id: 'discovered', class: 'cards' });
  const msg = h('p', { class: 'error', role: 'alert' });
  const scanState = h('p', { id: 'scan-state', role: 'status', 'aria-live': 'polite' });
  const scanBtn = h('button', { type: 'button', class: 'primary', id: 'scan', text: 'Scan now' });
  const saveAll = h('button', { type: 'button', id: 'save-all', text: 'Save all' });
  const note = h('div', { id: 'scan-note' });
  view().replaceChildren(h('section', {}, h('h2', { text: 'Discovered printers' }),
    h('div', { class: 'toolbar' }, scanBtn, saveAll,
      h('a', { href: '#/settings', class: 'muted', text: 'Discovery settings' })),
    note, scanState, msg, table));
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
      h('td', { 'data-label': 'How it was found' }, h('span', { class: 'found-by', text: foundBy(p) }),
        how ? h('div', { class: 'muted', text: how }) : null),
      h('td', { class: 'num', 'data-label': 'Meter', text: fmtInt(meters(p).total) }),
      h('td', { 'data-label': 'Supplies' }, supplyBars(p.toner_levels)),
      h('td', {}, h('div', { class: 'toolbar' },
        h('button', {
          type: 'button', class: 'primary', 'data-save': p.serial, 'aria-label': 'Save ' + name, text: 'Save',
          onclick: (/** @type {MouseEvent} */ e) => act(e, () => post('/devices/save', { serial: p.serial })),
        }),
        h('button', {
          type: 'button', 'data-hide': p.serial, 'aria-label': 'Hide ' + name, text: 'Hide',
          onclick: (/** @type {MouseEvent} */ e) =>
            act(e, () => post('/devices/update', { serial: p.serial, visible: false })),
        }))));
  }
  async function load() {
    const [all, s, scan] = await Promise.all([get('/devices/discovered'), get('/settings'), get('/discover')]);
    const found = all.filter(hasSerial);
    scanState.textContent = scanText(noteScan(scan));
    const d = s.discovery;
    const nothing = !d.subnet_scan && !(d.manual_ranges && d.ranges_text.trim());
    note.replaceChildren(nothing
      ? h('p', { class: 'empty', id: 'no-ranges' }, 'No ranges enabled: turn on subnet scan or add a range in ',
        h('a', { href: '#/settings', text: 'Settings' }), ', then scan.')
      : '');
    saveAll.disabled = !found.length;
    if (!found.length) {
      table.replaceChildren(h('tbody', {}, h('tr', {}, h('td', { class: 'empty', colspan: 6 }, nothing
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
