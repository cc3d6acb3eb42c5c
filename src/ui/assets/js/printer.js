// @ts-check
// One printer (#/printer/<serial>): identity, status and supplies, Read now, the fields a person
// sets, a pending move or a counter that went down, the history charts, Delete.
import { ApiError, get, post } from './api.js';
import { $, ago, errorText, fmtInt, h, when } from './dom.js';
import { onEvent } from './live.js';
import { historyCharts } from './printer-charts.js';
import { pagesPerPeriod } from './printer-pages.js';
import { readOnlyForViewer } from './role.js';
import { categoryCounters, detection, foundBy, hasWebPage, meters, statusBadges, supplyBars, webLink, webPageLink } from './printer-parts.js';
import { focusHeading, onLeave, scheduleRefresh, setTitle, view } from './view.js';

/** @typedef {import('./types').Schemas} S */

/** The fields a person sets. */
const FIELDS = /** @type {const} */ ([
  ['asset_number', 'Asset number'], ['location', 'Location'], ['description', 'Name'],
]);

// A pending move or a counter that went down (discovery/move-check.ts): only a person decides.
const SNMP_PROOF = 'SNMP v1 and v2c cannot prove who answered: any host on the network can reply with a printer\'s '
  + 'serial, model, MAC and counters. Check the printer itself (its panel or configuration page shows its address and '
  + 'counter) before you confirm. SNMPv3 with authentication and privacy (authPriv), set on the printers and in '
  + 'Settings, is the cure: then only a printer holding the keys can answer.';

/** @param {string} serial */
export async function printerView(serial) {
  setTitle(serial);
  let profile;
  try {
    profile = await get('/api/devices/profile', { serial });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err;
    view().replaceChildren(h('section', {}, h('h2', { text: 'No printer ' + serial }),
      h('p', {}, 'It may have been deleted. ', h('a', { href: '#/printers', text: 'Back to the printers' }))));
    return;
  }
  const dev = profile.device;
  setTitle(dev.model || serial);
  const identity = h('dl', { class: 'facts', id: 'identity' });
  const statusBox = h('div', { id: 'printer-status' });
  const readMsg = h('p', { role: 'status', 'aria-live': 'polite', class: 'muted' });
  const trustBox = h('div', { id: 'printer-trust' });
  const readBtn = h('button', { type: 'button', class: 'primary', id: 'read-now', text: 'Read now', 'data-write': true });
  const delBtn = h('button', { type: 'button', class: 'danger', id: 'delete', text: 'Delete…', 'data-write': true });
  // Filled once how the printer was found (its open ports) is known: drawInfo.
  const webBox = h('span', { id: 'web-page' });

  // The fields a person sets: saving one locks it, so discovery never overwrites it (POST /devices/update).
  const form = h('form', { id: 'edit', novalidate: true });
  const formMsg = h('p', { role: 'status', 'aria-live': 'polite' });
  /** @type {Record<string, HTMLInputElement>} */
  const inputs = {};
  for (const [k, label] of FIELDS) {
    const id = 'f-' + k;
    inputs[k] = h('input', {
      type: 'text', id, name: k, value: dev[k] || '', maxlength: 1024, 'aria-describedby': id + '-lock ' + id + '-err',
    });
    form.append(h('div', { class: 'field' }, h('label', { for: id, text: label }), inputs[k],
      h('p', { class: 'hint', id: id + '-lock' }), h('p', { class: 'error', id: id + '-err' })));
  }
  form.append(h('button', { class: 'primary', type: 'submit', text: 'Save changes' }), ' ', formMsg);
  /** @param {S['Device']} d */
  function showLocks(d) {
    const locked = new Map((d.locked_fields || []).map((l) => [l.field, l]));
    for (const k of Object.keys(inputs)) {
      const l = locked.get(k);
      $('f-' + k + '-lock').textContent = l
        ? 'Set by a person on ' + when(l.locked_at) + ': discovery keeps this value.'
        : 'From the printer: saving a value here keeps it from then on.';
    }
  }
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    formMsg.textContent = '';
    formMsg.className = '';
    /** @type {import('./types').PostBody<'/devices/update'>} */
    const body = { serial };
    for (const [k] of FIELDS) if (inputs[k].value !== (dev[k] || '')) body[k] = inputs[k].value;
    if (Object.keys(body).length === 1) {
      formMsg.textContent = 'Nothing changed.';
      return;
    }
    try {
      const d = await post('/devices/update', body);
      Object.assign(dev, d);
      showLocks(d);
      formMsg.textContent = 'Saved.';
      formMsg.className = 'okmsg';
    } catch (err) {
      const text = errorText(err);
      const m = text.match(/field (\w+)/);
      if (m && inputs[m[1]]) {
        $('f-' + m[1] + '-err').textContent = text;
        inputs[m[1]].setAttribute('aria-invalid', 'true');
      }
      formMsg.textContent = 'Not saved: ' + text;
      formMsg.className = 'error';
    }
  });

  const charts = historyCharts(serial);
  const pages = pagesPerPeriod(serial);
  view().replaceChildren(
    h('p', {}, h('a', { href: '#/printers', text: '← Printers' })),
    h('section', {},
      h('h2', { id: 'printer-title', text: (dev.manufacturer ? dev.manufacturer + ' ' : '') + (dev.model || serial) }),
      h('div', { class: 'toolbar' }, readBtn, webBox, delBtn), readMsg, trustBox,
      h('div', { class: 'grid' }, h('div', {}, h('h3', { text: 'Identity' }), identity),
        h('div', {}, h('h3', { text: 'Status and supplies' }), statusBox))),
    h('section', {}, h('h2', { text: 'Asset details' }), form),
    h('section', {}, h('h2', { text: 'Meters over time' }), charts.content),
    h('section', { id: 'pages-per-period' }, h('h2', { text: 'Pages per period' }), pages.content));
  readOnlyForViewer(form);

  // How it was found lives in its PrinterInfo, which the Device record (contract 2.2) does not
  // carry: the listing with saved printers included has it.
  async function foundInfo() {
    try {
      return (await get('/devices/discovered', { include_known: true })).find((p) => p.serial === serial) || null;
    } catch {
      return null;
    }
  }
  /**
   * @param {S['Device']} d
   * @param {S['DeviceProfile']['latest_metrics']} latest
   * @param {S['PrinterInfo'] | null} info
   */
  function drawInfo(d, latest, info) {
    const how = info || {
      device_type: d.device_type, is_usb: d.is_usb, discovery_methods: d.discovery_method ? [d.discovery_method] : [],
    };
    const parts = info ? info.supply_part_numbers : null;
    const barsBox = h('div', { id: 'supply-bars' }, latest ? supplyBars(latest.toner_levels, undefined, parts) : null);
    /** What is missing (undefined, null, empty) is left out. @type {[string, string | Node | null | undefined][]} */
    const rows = [
      ['Model', [d.manufacturer, d.model].filter(Boolean).join(' ')], ['Serial', d.serial], ['Firmware', d.firmware],
      ['MAC address', d.mac_address], ['Address', d.ip + (d.hostname ? ' (' + d.hostname + ')' : '')],
      ['USB port', d.is_usb || d.device_type === 'usb' ? d.port_name || 'USB' : ''],
      ['Web page', webLink(d.web_ui_url)], ['Found by', foundBy(how)], ['What answered', detection(how)],
      ['First seen', when(d.first_seen)], ['Last seen', when(d.last_seen) + ' (' + ago(d.last_seen) + ')'],
    ];
    webBox.replaceChildren(d.is_saved && hasWebPage({ is_usb: d.is_usb, web_ui_url: d.web_ui_url, open_ports: info?.open_ports }) ? webPageLink(d.serial, d.model || d.serial) : '');
    identity.replaceChildren(...rows.filter(([, v]) => v)
      .flatMap(([k, v]) => [h('dt', { text: k }), v instanceof Node ? h('dd', {}, v) : h('dd', { text: v })]));
    const m = meters(latest);
    statusBox.replaceChildren(h('p', {}, statusBadges(d)),
      latest
        ? h('dl', { class: 'facts' }, h('dt', { text: 'Total' }), h('dd', { id: 'meter-total', text: fmtInt(m.total) }),
          m.mono !== undefined ? [h('dt', { text: 'Mono' }), h('dd', { text: fmtInt(m.mono) })] : null,
          m.colour !== undefined ? [h('dt', { text: 'Colour' }), h('dd', { text: fmtInt(m.colour) })] : null,
          categoryCounters(latest).map(([label, n]) => [h('dt', { text: label }), h('dd', { text: fmtInt(n) })]),
          h('dt', { text: 'Read' }), h('dd', { text: when(latest.timestamp) }))
        : h('p', { class: 'empty', text: 'No readings yet: press Read now.' }),
      ...(latest ? [barsBox] : []));
    if (latest) {
      // Days to empty beside each bar, once the forecast has come (the bars are drawn without it).
      get('/api/devices/forecast', { serial })
        .then((f) => barsBox.replaceChildren(supplyBars(latest.toner_levels, f, parts)), () => {});
    }
  }
  /** @param {S['Device']} d */
  function drawTrust(d) {
    const raw = /** @type {{ pending_move?: S['PendingMove'], counter_flag?: S['CounterFlag'] }} */ (d.raw_data || {});
    const out = [];
    /** @param {HTMLButtonElement} btn @param {HTMLElement} msg @param {() => Promise<unknown>} action */
    const act = async (btn, msg, action) => {
      btn.disabled = true;
      msg.textContent = '';
      msg.className = '';
      try {
        await action();
        await reloadInfo();
      } catch (err) {
        msg.textContent = 'Not done: ' + errorText(err);
        msg.className = 'error';
        btn.disabled = false;
      }
    };
    const m = raw.pending_move;
    if (m && m.ip) {
      const msg = h('p', { role: 'status', 'aria-live': 'polite' });
      const btn = h('button', {
        type: 'button', class: 'primary', id: 'confirm-move', text: 'Confirm the move to ' + m.ip, 'data-write': true,
      });
      btn.onclick = () => act(btn, msg, () => post('/devices/confirm-move', { serial, ip: m.ip }));
      const checks = Object.entries(m.checks || {}).map(([k, v]) => k.replace('_', ' ') + ': ' + v).join(', ');
      const seen = 'Seen ' + when(m.seen_at) + ' (' + (m.sightings || 1) + ' times'
        + (m.saved_address_answers ? '; ' + d.ip + ' still answers too' : '') + ').';
      out.push(h('div', { class: 'notice', id: 'pending-move', role: 'region', 'aria-label': 'Pending move' },
        h('h3', { text: 'Moved? A reply with this serial came from ' + m.ip }),
        h('p', {
          text: 'The record stays at ' + d.ip + ' and nothing from ' + m.ip + ' is stored until you confirm. ' + seen,
        }),
        h('p', { class: 'muted', text: m.reason + (checks ? ' (' + checks + ')' : '') }),
        h('p', { class: 'hint', text: SNMP_PROOF }), btn, ' ', msg));
    }
    const c = raw.counter_flag;
    if (c && typeof c.page_count === 'number') {
      const msg = h('p', { role: 'status', 'aria-live': 'polite' });
      const btn = h('button', {
        type: 'button', id: 'confirm-counter', text: 'Accept ' + fmtInt(c.page_count) + ' as the page counter', 'data-write': true,
      });
      btn.onclick = () => act(btn, msg, () => post('/devices/confirm-counter', { serial }));
      out.push(h('div', { class: 'notice', id: 'counter-flag', role: 'region', 'aria-label': 'Page counter went down' },
        h('h3', { text: 'Page counter went down' }),
        h('p', {
          text: fmtInt(c.page_count) + ' pages read at ' + c.ip + ' on ' + when(c.seen_at) + ', '
            + fmtInt(c.stored_page_count) + ' stored before. The reading was not stored. If the printer\'s counter '
            + 'was reset (a new board), accept it; if not, the reply may not be the printer\'s.',
        }),
        h('p', { class: 'hint', text: SNMP_PROOF }), btn, ' ', msg));
    }
    trustBox.replaceChildren(...out);
  }
  drawInfo(dev, profile.latest_metrics, await foundInfo());
  drawTrust(dev);
  showLocks(dev);

  async function reloadInfo() {
    const [p, info] = await Promise.all([get('/api/devices/profile', { serial }), foundInfo()]);
    drawInfo(p.device, p.latest_metrics, info);
    drawTrust(p.device);
    showLocks(p.device);
  }
  readBtn.onclick = async () => {
    readBtn.disabled = true;
    readMsg.textContent = 'Reading the printer…';
    readMsg.className = 'muted';
    try {
      const snap = await post('/devices/metrics/collect', { serial });
      readMsg.textContent = 'Read at ' + when(snap.timestamp) + ': ' + fmtInt(meters(snap).total) + ' pages.';
      await reloadInfo();
      await charts.reload();
      await pages.reload();
    } catch (err) {
      readMsg.textContent = 'Not read: ' + errorText(err);
      readMsg.className = 'error';
    } finally {
      readBtn.disabled = false;
    }
  };
  delBtn.onclick = () => {
    const dlg = h('dialog', { id: 'confirm-delete', 'aria-labelledby': 'del-title' },
      h('h2', { id: 'del-title', text: 'Delete ' + (dev.model || serial) + '?' }),
      h('p', {
        text: 'This removes the printer and all its history (' + fmtInt(charts.points()) + ' stored readings). '
          + 'It cannot be undone. If the printer is still on the network, the next scan finds it again as a new '
          + 'printer.',
      }));
    const err = h('p', { class: 'error', role: 'alert' });
    const yes = h('button', {
      type: 'button', class: 'danger primary', id: 'confirm-delete-yes', text: 'Delete printer and history',
    });
    const no = h('button', { type: 'button', text: 'Cancel', onclick: () => dlg.close() });
    // Cancel, Escape or a delete that failed: the dialog goes, focus returns to its button.
    dlg.addEventListener('close', () => {
      dlg.remove();
      if (delBtn.isConnected) delBtn.focus();
    });
    yes.onclick = async () => {
      yes.disabled = true;
      try {
        await post('/devices/delete', { serial });
        location.hash = '#/printers';
        dlg.close();
      } catch (e) {
        err.textContent = errorText(e);
        yes.disabled = false;
      }
    };
    dlg.append(err, h('div', { class: 'toolbar' }, no, yes));
    document.body.append(dlg);
    dlg.showModal();
    no.focus();
  };
  onLeave(onEvent((name, d) => {
    const changed = name === 'device_change' && d.serial === serial && d.change !== 'deleted';
    if (changed || name === 'poll') scheduleRefresh(() => reloadInfo().catch(() => {}));
  }));
  focusHeading();
  await Promise.all([charts.start(), pages.start()]);
}
