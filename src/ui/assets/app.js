// The technician's web UI: one page, hash-routed views (#/printers, #/discovered, #/printer/<serial>,
// #/alerts, #/settings, #/logs), talking to the same HTTP API a central server uses. No framework, no build:
// src/ui/page.ts serves this file after uPlot (the meter charts) as /ui.js under a CSP without
// inline script. Every piece of data reaches the page through textContent or attributes (h()),
// never through innerHTML.
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const view = () => $('view');

  // ---- DOM helpers ---------------------------------------------------------------------------
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = v;
      else if (k === 'style') el.style.cssText = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of kids.flat(Infinity)) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  const INT = new Intl.NumberFormat('en-US'); // one formatter: toLocaleString makes one a call (slow at 2,000 rows)
  const fmtInt = (n) => (n === undefined || n === null ? '' : typeof n === 'string' ? n : INT.format(Number(n)));
  function ago(iso) {
    if (!iso) return '';
    const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
    if (s < 60) return 'just now';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    return Math.round(s / 86400) + ' days ago';
  }
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

  // ---- The API -------------------------------------------------------------------------------
  class ApiError extends Error { constructor(status, message) { super(message); this.status = status; } }
  // Paths below are the box's own ("/devices/list"); every request goes relative to the page, so the
  // UI works at the box's root and under a prefix that serves it, such as the central server's
  // /api/v1/proxy/agent/<id>/ (which also gives the page a <base> at that prefix).
  const onBox = (boxPath) => '.' + boxPath;
  async function api(boxPath, body) {
    const init = body === undefined ? { headers: { Accept: 'application/json' } }
      : { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
    const path = onBox(boxPath);
    const r = await fetch(path, init);
    const text = await r.text();
    // The gate's 401 (the session ended): sign in again. A route's own 401 (a wrong current password) is an answer.
    if (r.status === 401 && text.trim() === 'unauthorized') { location.assign(onBox('/login?return_to=' + encodeURIComponent('/' + location.hash))); throw new ApiError(401, 'signed out'); }
    if (!r.ok) throw new ApiError(r.status, text.trim() || r.statusText);
    return text ? JSON.parse(text) : null;
  }

  // ---- Counters and supplies -----------------------------------------------------------------
  // The total meter: page_count, else mono + colour (some printers report only those two).
  function meters(m) {
    if (!m) return { total: undefined, mono: undefined, colour: undefined };
    const mono = m.mono_pages ?? m.mono_impressions ?? m.total_mono_impressions;
    const colour = m.color_pages ?? m.color_impressions;
    let total = m.page_count;
    if (!total && (mono || colour)) total = (mono || 0) + (colour || 0);
    return { total, mono, colour };
  }
  const SUPPLY_COLOURS = { black: '#222', cyan: '#0aa5c9', magenta: '#c2187a', yellow: '#e1b400', photo_black: '#444', matte_black: '#333', light_cyan: '#6fd3ef', light_magenta: '#ef7fc0', waste: '#8d6e63', drum: '#7e57c2', fuser: '#d35400' };
  const supplyColour = (k) => SUPPLY_COLOURS[k] || SUPPLY_COLOURS[String(k).split(/[_ ]/).pop()] || '#5a6470';
  const LOW = 15;
  // A supply's forecast (GET /api/devices/forecast) as a short text and its explanation.
  function daysText(f) {
    if (!f || f.days_to_empty === null) return { text: '–', title: f && f.reason ? 'No forecast: ' + f.reason : 'No forecast' };
    const d = f.days_to_empty;
    const empty = d === 0 && f.level === 0;
    const text = empty ? 'empty' : d < 1 ? '< 1 d' : '~' + Math.round(d) + ' d';
    const pages = f.pages_to_empty !== null ? ', about ' + fmtInt(f.pages_to_empty) + ' pages' : '';
    return { text, title: (empty ? 'Empty since ' : 'Empty about ') + f.empty_on + pages + ' (confidence ' + Math.round(f.confidence * 100) + '%)' };
  }
  function supplyBars(levels, forecast) {
    const entries = Object.entries(levels || {}).filter(([, v]) => typeof v === 'number');
    if (!entries.length) return h('span', { class: 'muted', text: 'no supply levels' });
    return h('div', {}, entries.map(([k, v]) => {
      const pct = Math.max(0, Math.min(100, v));
      const low = pct <= LOW;
      return h('div', { class: 'supply' + (low ? ' low' : '') },
        h('span', { class: 'name', title: k, text: k.replace(/_/g, ' ') }),
        h('span', { class: 'bar', role: 'img', 'aria-label': k + ' ' + pct + '%' + (low ? ', low' : '') },
          h('i', { style: 'width:' + pct + '%;background:' + supplyColour(k) }), h('b', { title: 'low mark ' + LOW + '%' })),
        h('span', { class: 'pct', text: pct + '%' + (low ? ' low' : '') }),
        forecast ? h('span', { class: 'days', 'data-supply': k, ...daysText(forecast.supplies.find((f) => f.name === k)) }) : null);
    }));
  }
  function statusBadges(info) {
    const msgs = [...(info.status_messages || []), ...(info.toner_alerts || [])];
    if (!msgs.length) return h('span', { class: 'badge ok', text: 'OK' });
    return msgs.map((m) => h('span', { class: 'badge bad', text: m }));
  }
  // How a printer was found, in plain words (PrinterInfo.discovery_methods; an unknown method as
  // written), and what answered (detection_reasons, their method prefix in the same words).
  const METHOD_WORDS = { subnet_scan: 'SNMP scan (subnet)', manual_range: 'SNMP scan (range)', snmp: 'SNMP', mdns: 'mDNS', ipp: 'IPP', ipps: 'IPP',
    wsd: 'WS-Discovery', ws_discovery: 'WS-Discovery', ssdp: 'SSDP', llmnr: 'LLMNR', port_probe: 'port probe', tcp_probe: 'port probe', usb: 'USB', import: 'imported' };
  const methodWord = (m) => METHOD_WORDS[String(m).toLowerCase().replace(/-/g, '_')];
  function foundBy(p) {
    const out = [];
    if (p.device_type === 'usb' || p.is_usb) out.push('USB');
    for (const m of p.discovery_methods || []) out.push(methodWord(m) || String(m));
    if (!out.length) out.push(p.learned_oids && Object.keys(p.learned_oids).length ? 'SNMP scan' : 'imported');
    return [...new Set(out)].join(', ');
  }
  function detection(p) {
    return [...new Set((p.detection_reasons || []).map((r) => {
      const m = /^([A-Za-z_-]+):\s*(.*)$/.exec(String(r));
      return m && methodWord(m[1]) ? methodWord(m[1]) + ': ' + m[2] : String(r);
    }))].join('; ');
  }
  // The printer's web page comes from the LAN (printer-more-info, an mDNS adminurl): only an http or
  // https URL becomes a link, opened in a new tab that gets neither this page nor its address;
  // anything else is shown as text.
  function webLink(url) {
    if (!url) return null;
    let u = null;
    try { u = new URL(String(url)); } catch { u = null; }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return h('span', { class: 'web-ui', text: String(url) });
    return h('a', { class: 'web-ui', href: u.href, target: '_blank', rel: 'noopener noreferrer', text: String(url) });
  }

  // ---- Live updates (/events), else a periodic refresh -----------------------------------------
  // The box sends `connected` as soon as a stream opens. A stream that has not said so within
  // LIVE_WAIT_MS is not getting through (a proxy that buffers or does not stream, like the central
  // server's: it would answer 504 after 30 s), and one that is refused ends at once: the page then
  // re-reads what it shows every POLL_S seconds, says so, and tries the stream again every RETRY_MS.
  // Views take the `poll` pseudo-event as "re-read"; the header's state comes with it.
  const LIVE_WAIT_MS = 5000;
  const POLL_S = 15;
  const RETRY_MS = 30000;
  const live = { source: null, listeners: new Set(), wait: null, poller: null, retry: null, polling: false };
  function setConn(state, text) { const c = $('conn'); c.dataset.state = state; c.textContent = text; }
  const emit = (name, data) => { for (const l of live.listeners) l(name, data); };
  function openEvents() {
    clearTimeout(live.retry);
    const es = new EventSource(onBox('/events'));
    live.source = es;
    if (!live.polling) setConn('connecting', 'Connecting…');
    // A stream that is being made (first attempt, or the browser's reconnection after a drop): give
    // up on a silent one; a reconnecting one is left to the browser while the page polls.
    const waitForConnected = (reconnecting) => {
      clearTimeout(live.wait);
      live.wait = setTimeout(() => {
        if (live.source !== es) return;
        if (!reconnecting) { es.close(); live.source = null; }
        fallBack(reconnecting ? 'reconnecting' : 'silent');
      }, LIVE_WAIT_MS);
    };
    waitForConnected(false);
    es.addEventListener('connected', () => { if (live.source === es) goLive(); });
    // Sent by the box when its stream cannot pass (a central server's request that does not stream).
    es.addEventListener('unavailable', () => { if (live.source !== es) return; es.close(); live.source = null; fallBack('unavailable'); });
    es.onerror = () => {
      if (live.source !== es) return;
      if (es.readyState === EventSource.CLOSED) { live.source = null; fallBack('refused'); return; } // refused (not 200): not retried by the browser
      if (!live.polling) setConn('connecting', 'Reconnecting…');
      waitForConnected(true);
    };
    for (const name of ['discovery_update', 'device_change', 'server_status', 'storage_status']) {
      es.addEventListener(name, (e) => emit(name, JSON.parse(e.data)));
    }
  }
  function goLive() {
    clearTimeout(live.wait);
    const missed = live.polling;
    live.polling = false;
    clearInterval(live.poller);
    $('live-note').hidden = true;
    setConn('live', 'Live');
    if (missed) void poll(); // what changed since the last refresh
  }
  // why: what the stream did (kept on the note for whoever looks: unavailable, refused, silent, reconnecting).
  function fallBack(why) {
    clearTimeout(live.wait);
    $('live-note').dataset.why = why;
    if (!live.polling) {
      live.polling = true;
      live.poller = setInterval(poll, POLL_S * 1000);
      $('live-note').textContent = 'Live updates unavailable: refreshing every ' + POLL_S + ' s.';
      $('live-note').hidden = false;
      setConn('polling', 'Refreshing');
    }
    if (!live.source) { clearTimeout(live.retry); live.retry = setTimeout(openEvents, RETRY_MS); }
  }
  // What the events would have said: the scan, the data card and the server link (all in GET
  // /settings and GET /discover), and `poll` for each view to re-read its own data.
  // A scan is news when it runs or changed since the last refresh (an event would not have told of
  // one that ended before the page opened).
  let pollBusy = false;
  let polledScan;
  async function poll() {
    if (pollBusy) return;
    pollBusy = true;
    try {
      const [s, scan] = await Promise.all([api('/settings'), api('/discover')]);
      const scanKey = scan ? [scan.scan_id, scan.state, scan.scanned].join(':') : '';
      if (scan && (scan.state === 'running' || (polledScan !== undefined && scanKey !== polledScan))) emit('discovery_update', scan);
      polledScan = scanKey;
      emit('storage_status', s.storage);
      if (s.server && s.server.link) emit('server_status', s.server.link);
      emit('poll', {});
      if (live.polling) $('live-note').textContent = 'Live updates unavailable: refreshing every ' + POLL_S + ' s.';
    } catch (err) {
      if (live.polling) $('live-note').textContent = 'Live updates unavailable; the last refresh failed: ' + err.message;
    } finally { pollBusy = false; }
  }
  function onEvent(fn) { live.listeners.add(fn); return () => live.listeners.delete(fn); }

  // The data file system's state (GET /settings storage, event storage_status): a banner while it is
  // not ok, since readings and changes may then not be kept.
  const STORAGE_TEXT = {
    low: 'The data card is nearly full: older raw readings are being pruned.',
    full: 'The data card is full: changes cannot be saved, readings are kept in memory until there is room.',
    read_only: 'The data card is read-only: changes cannot be saved, readings are kept in memory.',
    io_error: 'The data card reports write errors: changes may not be saved.',
  };
  function showStorage(st) {
    const text = st && STORAGE_TEXT[st.state];
    $('storage').hidden = !text;
    $('storage').textContent = text ? text + (st.error ? ' (' + st.error + ')' : '') : '';
  }
  // The scan line under the header (event discovery_update).
  let lastScan = null;
  function scanText(d, settings) {
    if (!d) return '';
    if (d.state === 'running') return 'Scanning: ' + d.scanned + ' of ' + d.total + ' addresses, ' + d.found + ' found';
    if (d.state === 'failed') return 'Scan failed: ' + (d.error || 'unknown error');
    let t = 'Scan done: ' + d.found + ' found';
    if (d.found === 0 && d.total === 0) t += ' (nothing was enabled to scan: turn on subnet scan or add a range in Settings)';
    else if (d.found === 0) t += ' in ' + d.total + ' addresses (check the ranges and SNMP communities in Settings)';
    return t;
  }
  // A scan's state, from the event stream or an answer, whichever comes first: never go back to an
  // older scan, or to "running" once its end has been seen.
  function noteScan(d) {
    if (!d) return lastScan;
    if (lastScan && (d.scan_id < lastScan.scan_id || (d.scan_id === lastScan.scan_id && lastScan.state !== 'running' && d.state === 'running'))) return lastScan;
    lastScan = d;
    $('status').textContent = scanText(d);
    return d;
  }
  onEvent((name, d) => {
    if (name === 'discovery_update') noteScan(d);
    if (name === 'storage_status') showStorage(d);
  });

  // Re-render the current view on a change, at most every 600 ms: the first event of a burst starts
  // the wait and later ones join it (a wait restarted by each event would never end while a large
  // site's events keep coming); the view's latest refresh is the one that runs.
  let refreshTimer = null;
  let refreshFn = null;
  function scheduleRefresh(fn) { refreshFn = fn; if (!refreshTimer) refreshTimer = setTimeout(() => { refreshTimer = null; refreshFn(); }, 600); }

  // ---- Router ----------------------------------------------------------------------------------
  let cleanup = [];
  const ROUTES = [
    [/^#\/?$|^#\/printers$/, () => printersView(), 'printers'],
    [/^#\/discovered$/, () => discoveredView(), 'discovered'],
    [/^#\/printer\/(.+)$/, (m) => printerView(decodeURIComponent(m[1])), 'printer'],
    [/^#\/settings$/, () => settingsView(), 'settings'],
    [/^#\/logs$/, () => logsView(), 'logs'],
    [/^#\/alerts$/, () => alertsView(), 'alerts'],
  ];
  function route() {
    for (const f of cleanup) f();
    cleanup = [];
    const hash = location.hash || '#/printers';
    for (const [re, fn, nav] of ROUTES) {
      const m = hash.match(re);
      if (!m) continue;
      document.body.dataset.route = nav;
      for (const a of document.querySelectorAll('header nav a')) {
        if (a.dataset.nav === nav || (nav === 'printer' && a.dataset.nav === 'printers')) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
      }
      view().replaceChildren(h('p', { class: 'muted', text: 'Loading…' }));
      Promise.resolve(fn(m)).catch((err) => view().replaceChildren(h('section', {}, h('h2', { text: 'Something went wrong' }), h('p', { class: 'error', role: 'alert', text: err.message }))));
      return;
    }
    view().replaceChildren(h('section', {}, h('h2', { text: 'Not found' }), h('p', {}, h('a', { href: '#/printers', text: 'Back to the printers' }))));
  }
  function setTitle(t) { document.title = t + ' · PrintBox'; }
  // After a navigation inside the page (not on the first load, where the skip link comes first),
  // focus goes to the new page's heading so that a screen reader announces it.
  let navigated = false;
  function focusHeading() { if (!navigated) return; const h2 = view().querySelector('h2'); if (h2) { h2.tabIndex = -1; h2.focus({ preventScroll: true }); } }

  // ---- Printers (saved) ------------------------------------------------------------------------
  // One request a page (GET /api/printers, issue 35): the box searches, filters and pages, and each
  // printer comes with its newest reading and, when asked, the supply that empties first. A page
  // with forecasts is at most 100 printers (the box fits each on 90 days of history), so pages are
  // 50 and "Show more" appends the next. A refresh on events re-asks the rows shown, without the
  // forecasts (kept from the last ask): a polling round sends events all the time.
  const PRINTERS_PAGE = 50;
  const PRINTER_FILTER = { visible: 'shown', alerts: 'alerts', hidden: 'hidden', all: 'all' };
  async function printersView() {
    setTitle('Printers');
    const search = h('input', { type: 'search', id: 'printer-search', placeholder: 'Model, serial, address, location, asset…', 'aria-label': 'Search printers' });
    const filter = h('select', { id: 'printer-filter', 'aria-label': 'Show' },
      h('option', { value: 'visible', text: 'Shown printers' }), h('option', { value: 'alerts', text: 'With alerts or low supplies' }),
      h('option', { value: 'hidden', text: 'Hidden printers' }), h('option', { value: 'all', text: 'All saved printers' }));
    const table = h('table', { id: 'saved', class: 'cards' });
    const msg = h('p', { class: 'error', role: 'alert' });
    const count = h('p', { id: 'printer-count', class: 'muted', role: 'status' });
    const more = h('button', { type: 'button', id: 'printer-more', hidden: true });
    view().replaceChildren(h('section', {}, h('h2', { text: 'Printers' }),
      h('div', { class: 'toolbar' }, search, filter), msg, table, h('div', { class: 'toolbar' }, count, more)));
    let rows = [];
    let total = 0;
    let anySaved = true;
    const forecasts = new Map();
    let tbody = null;
    let built = new Map(); // serial -> { key: what its row shows, tr: the row }
    // Answers for an older search or filter are dropped: a first page (newAsk) starts a new one.
    let asked = 0;
    const query = (offset, limit, withForecast) => '/api/printers?search=' + encodeURIComponent(search.value.trim())
      + '&filter=' + PRINTER_FILTER[filter.value] + '&offset=' + offset + '&limit=' + limit + (withForecast ? '&forecast=true' : '');
    async function ask(offset, limit, withForecast, newAsk) {
      const n = newAsk ? ++asked : asked;
      const page = await api(query(offset, limit, withForecast));
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
      if (!rows.length && !search.value.trim() && filter.value === 'visible') anySaved = (await api('/api/printers?filter=all&limit=1')).total > 0;
      else anySaved = true;
      draw();
    }
    async function loadMore() {
      more.disabled = true;
      try {
        const got = await ask(rows.length, PRINTERS_PAGE, true, false);
        if (got) { rows = rows.concat(got); draw(); }
      } catch (err) { msg.textContent = err.message; } finally { more.disabled = false; }
    }
    // The rows shown, read again, in the box's pages of at most 1,000 (more may be shown).
    async function refresh() {
      const want = Math.max(PRINTERS_PAGE, rows.length);
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
    function draw() {
      table.dataset.loaded = 'true';
      count.textContent = rows.length ? 'Showing ' + fmtInt(rows.length) + ' of ' + fmtInt(total) : '';
      more.hidden = rows.length >= total;
      more.textContent = 'Show ' + fmtInt(Math.min(PRINTERS_PAGE, total - rows.length)) + ' more';
      if (!rows.length && !anySaved) {
        tbody = null;
        table.replaceChildren(h('tbody', {}, h('tr', {}, h('td', { class: 'empty', colspan: 9 },
          'No saved printers yet. Go to ', h('a', { href: '#/discovered', text: 'Discovered' }), ' to scan the network and save the printers found.'))));
        return;
      }
      if (!rows.length) {
        tbody = null;
        table.replaceChildren(h('tbody', {}, h('tr', {}, h('td', { class: 'empty', colspan: 9, text: 'No printer matches this search or filter.' }))));
        return;
      }
      if (!tbody || tbody.parentNode !== table) {
        tbody = h('tbody');
        table.replaceChildren(h('thead', {}, h('tr', {}, ['Printer', 'Status', 'Last seen', 'Total', 'Mono', 'Colour', 'Supplies', 'Empties soonest', ''].map((t) => h('th', { scope: 'col', text: t })))), tbody);
      }
      // A row is built again only when what it shows changed; the others stay in place (at 2,000
      // rows, building them all again took seconds: "Show more" and each event's refresh did).
      const kids = tbody.children;
      const drawn = new Map();
      rows.forEach((p, i) => {
        const first = forecasts.get(p.serial);
        const key = JSON.stringify(p) + JSON.stringify(first) + ago(p.last_reading || p.last_seen);
        let row = built.get(p.serial);
        if (!row || row.key !== key || drawn.has(p.serial)) row = { key, tr: rowOf(p, first) };
        drawn.set(p.serial, row);
        const at = kids[i];
        if (at === row.tr) return;
        // The same printer's older row is replaced where it stands; a row from elsewhere moves here.
        if (at && at.dataset.serial === p.serial) at.replaceWith(row.tr); else tbody.insertBefore(row.tr, at || null);
      });
      while (kids.length > rows.length) kids[rows.length].remove();
      built = drawn;
    }
    function rowOf(p, first) {
      const m = p.meters;
      const visible = !p.hidden;
      return h('tr', { 'data-serial': p.serial },
        h('td', { 'data-label': 'Printer' }, h('a', { href: '#/printer/' + encodeURIComponent(p.serial) }, h('b', { text: p.model || p.serial })),
          h('div', { class: 'muted', text: [p.manufacturer, p.serial, p.ip, p.location].filter(Boolean).join(' · ') }),
          p.asset_number ? h('div', { class: 'muted', text: 'Asset ' + p.asset_number }) : null,
          visible ? null : h('span', { class: 'badge', text: 'hidden' })),
        h('td', { 'data-label': 'Status' }, statusBadges(p)),
        h('td', { 'data-label': 'Last seen', title: when(p.last_seen), text: ago(p.last_reading || p.last_seen) }),
        h('td', { class: 'num meter-total', 'data-label': 'Total', text: fmtInt(m.total) }),
        h('td', { class: 'num', 'data-label': 'Mono', text: fmtInt(m.mono) }),
        h('td', { class: 'num', 'data-label': 'Colour', text: fmtInt(m.colour) }),
        h('td', { 'data-label': 'Supplies' }, supplyBars(p.toner_levels)),
        h('td', { class: 'soonest', 'data-label': 'Empties soonest', ...(first ? { title: daysText(first).title } : {}) },
          first === undefined ? h('span', { class: 'muted', text: '…' }) : first ? first.name.replace(/_/g, ' ') + ' ' + daysText(first).text : h('span', { class: 'muted', text: '–' })),
        h('td', {}, h('button', { type: 'button', 'data-hide': p.serial, 'aria-label': (visible ? 'Hide ' : 'Show ') + (p.model || p.serial), text: visible ? 'Hide' : 'Show',
          onclick: async (e) => {
            e.target.disabled = true;
            try { await api('/devices/update', { serial: p.serial, visible: !visible }); await refresh(); } catch (err) { msg.textContent = err.message; e.target.disabled = false; }
          } })));
    }
    const reload = () => load().then(() => { msg.textContent = ''; }, (err) => { msg.textContent = err.message; });
    // Typing asks the box once the typing pauses, not at every key.
    let typing = null;
    search.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(reload, 250); });
    cleanup.push(() => clearTimeout(typing));
    filter.addEventListener('change', reload);
    more.addEventListener('click', loadMore);
    cleanup.push(onEvent((name) => { if (name === 'device_change' || name === 'poll') scheduleRefresh(() => refresh().catch(() => {})); }));
    await load();
    focusHeading();
  }

  // ---- Discovered ------------------------------------------------------------------------------
  async function discoveredView() {
    setTitle('Discovered');
    const table = h('table', { id: 'discovered', class: 'cards' });
    const msg = h('p', { class: 'error', role: 'alert' });
    const scanState = h('p', { id: 'scan-state', role: 'status', 'aria-live': 'polite' });
    const scanBtn = h('button', { type: 'button', class: 'primary', id: 'scan', text: 'Scan now' });
    const saveAll = h('button', { type: 'button', id: 'save-all', text: 'Save all' });
    const note = h('div', { id: 'scan-note' });
    view().replaceChildren(h('section', {}, h('h2', { text: 'Discovered printers' }),
      h('div', { class: 'toolbar' }, scanBtn, saveAll, h('a', { href: '#/settings', class: 'muted', text: 'Discovery settings' })), note, scanState, msg, table));
    let settings = null;
    async function load() {
      const [found, s, scan] = await Promise.all([api('/devices/discovered'), api('/settings'), api('/discover')]);
      settings = s;
      scanState.textContent = scanText(noteScan(scan));
      const d = s.discovery;
      const nothing = !d.subnet_scan && !(d.manual_ranges && d.ranges_text.trim());
      note.replaceChildren(nothing ? h('p', { class: 'empty', id: 'no-ranges' }, 'No ranges enabled: turn on subnet scan or add a range in ', h('a', { href: '#/settings', text: 'Settings' }), ', then scan.') : '');
      saveAll.disabled = !found.length;
      if (!found.length) {
        table.replaceChildren(h('tbody', {}, h('tr', {}, h('td', { class: 'empty', colspan: 6 },
          nothing ? 'Nothing discovered yet.' : 'No new printers: every printer found is saved or hidden. Press Scan now to look again.'))));
        return;
      }
      table.replaceChildren(
        h('thead', {}, h('tr', {}, ['Printer', 'Address', 'How it was found', 'Meter', 'Supplies', ''].map((t) => h('th', { scope: 'col', text: t })))),
        h('tbody', {}, found.map((p) => h('tr', { 'data-serial': p.serial },
          h('td', { 'data-label': 'Printer' }, h('b', { text: p.model || p.serial }), h('div', { class: 'muted', text: [p.manufacturer, p.serial].filter(Boolean).join(' · ') })),
          h('td', { 'data-label': 'Address' }, p.ip, h('div', { class: 'muted', text: [p.hostname, p.location].filter(Boolean).join(' · ') }), p.web_ui_url ? h('div', {}, webLink(p.web_ui_url)) : null),
          h('td', { 'data-label': 'How it was found' }, h('span', { class: 'found-by', text: foundBy(p) }), detection(p) ? h('div', { class: 'muted', text: detection(p) }) : null),
          h('td', { class: 'num', 'data-label': 'Meter', text: fmtInt(meters(p).total) }),
          h('td', { 'data-label': 'Supplies' }, supplyBars(p.toner_levels)),
          h('td', {}, h('div', { class: 'toolbar' },
            h('button', { type: 'button', class: 'primary', 'data-save': p.serial, 'aria-label': 'Save ' + (p.model || p.serial), text: 'Save', onclick: (e) => act(e, '/devices/save', { serial: p.serial }) }),
            h('button', { type: 'button', 'data-hide': p.serial, 'aria-label': 'Hide ' + (p.model || p.serial), text: 'Hide', onclick: (e) => act(e, '/devices/update', { serial: p.serial, visible: false }) })))))));
    }
    async function act(e, path, body) {
      e.target.disabled = true; msg.textContent = '';
      try { await api(path, body); await load(); } catch (err) { msg.textContent = err.message; e.target.disabled = false; }
    }
    scanBtn.onclick = async () => {
      msg.textContent = '';
      try { scanState.textContent = scanText(noteScan(await api('/discover', {}))); } catch (err) { msg.textContent = err.message; }
    };
    saveAll.onclick = async (e) => act(e, '/devices/save/all', {});
    cleanup.push(onEvent((name, d) => {
      if (name === 'discovery_update') { scanState.textContent = scanText(lastScan); if (d.state !== 'running') scheduleRefresh(() => load().catch(() => {})); }
      if (name === 'device_change' || name === 'poll') scheduleRefresh(() => load().catch(() => {}));
    }));
    await load();
    focusHeading();
  }

  // ---- One printer -----------------------------------------------------------------------------
  const PERIODS = [['day', 'Day'], ['week', 'Week'], ['month', 'Month'], ['year', 'Year']];
  async function printerView(serial) {
    setTitle(serial);
    const q = '?serial=' + encodeURIComponent(serial);
    let profile;
    try { profile = await api('/api/devices/profile' + q); } catch (err) {
      if (err.status !== 404) throw err;
      view().replaceChildren(h('section', {}, h('h2', { text: 'No printer ' + serial }), h('p', {}, 'It may have been deleted. ', h('a', { href: '#/printers', text: 'Back to the printers' }))));
      return;
    }
    const dev = profile.device;
    setTitle(dev.model || serial);
    const identity = h('dl', { class: 'facts', id: 'identity' });
    const statusBox = h('div', { id: 'printer-status' });
    const readMsg = h('p', { role: 'status', 'aria-live': 'polite', class: 'muted' });
    const trustBox = h('div', { id: 'printer-trust' });
    const readBtn = h('button', { type: 'button', class: 'primary', id: 'read-now', text: 'Read now' });
    const delBtn = h('button', { type: 'button', class: 'danger', id: 'delete', text: 'Delete…' });

    // The fields a person sets: saving one locks it, so discovery never overwrites it (POST /devices/update).
    const form = h('form', { id: 'edit', novalidate: true });
    const formMsg = h('p', { role: 'status', 'aria-live': 'polite' });
    const inputs = {};
    for (const [k, label] of [['asset_number', 'Asset number'], ['location', 'Location'], ['description', 'Description']]) {
      const id = 'f-' + k;
      inputs[k] = h('input', { type: 'text', id, name: k, value: dev[k] || '', maxlength: 1024, 'aria-describedby': id + '-lock ' + id + '-err' });
      form.append(h('div', { class: 'field' }, h('label', { for: id, text: label }), inputs[k], h('p', { class: 'hint', id: id + '-lock' }), h('p', { class: 'error', id: id + '-err' })));
    }
    form.append(h('button', { class: 'primary', type: 'submit', text: 'Save changes' }), ' ', formMsg);
    function showLocks(d) {
      const locked = new Map((d.locked_fields || []).map((l) => [l.field, l]));
      for (const k of Object.keys(inputs)) {
        const l = locked.get(k);
        $('f-' + k + '-lock').textContent = l ? 'Set by a person on ' + when(l.locked_at) + ': discovery keeps this value.' : 'From the printer: saving a value here keeps it from then on.';
      }
    }
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      formMsg.textContent = ''; formMsg.className = '';
      const body = { serial };
      for (const [k, el] of Object.entries(inputs)) if (el.value !== (dev[k] || '')) body[k] = el.value;
      if (Object.keys(body).length === 1) { formMsg.textContent = 'Nothing changed.'; return; }
      try {
        const d = await api('/devices/update', body);
        Object.assign(dev, d); showLocks(d);
        formMsg.textContent = 'Saved.'; formMsg.className = 'okmsg';
      } catch (err) {
        const m = err.message.match(/field (\w+)/);
        if (m && inputs[m[1]]) { $('f-' + m[1] + '-err').textContent = err.message; inputs[m[1]].setAttribute('aria-invalid', 'true'); }
        formMsg.textContent = 'Not saved: ' + err.message; formMsg.className = 'error';
      }
    });

    const chartBox = h('div', { class: 'chart', id: 'meter-chart', role: 'img', 'aria-label': 'Page meters over time' });
    const supplyBox = h('div', { class: 'chart', id: 'supply-chart', role: 'img', 'aria-label': 'Supply levels over time' });
    const chartMsg = h('p', { class: 'muted', id: 'chart-msg', role: 'status', 'aria-live': 'polite' });
    const periodBtns = PERIODS.map(([p, label]) => h('button', { type: 'button', 'data-period': p, 'aria-pressed': p === 'month' ? 'true' : 'false', text: label }));
    const since = h('input', { type: 'date', id: 'since', 'aria-label': 'From' });
    const until = h('input', { type: 'date', id: 'until', 'aria-label': 'To' });
    const customBtn = h('button', { type: 'button', id: 'custom-go', text: 'Show range' });

    view().replaceChildren(
      h('p', {}, h('a', { href: '#/printers', text: '← Printers' })),
      h('section', {}, h('h2', { id: 'printer-title', text: (dev.manufacturer ? dev.manufacturer + ' ' : '') + (dev.model || serial) }),
        h('div', { class: 'toolbar' }, readBtn, delBtn), readMsg, trustBox,
        h('div', { class: 'grid' }, h('div', {}, h('h3', { text: 'Identity' }), identity), h('div', {}, h('h3', { text: 'Status and supplies' }), statusBox))),
      h('section', {}, h('h2', { text: 'Asset details' }), form),
      h('section', {}, h('h2', { text: 'Meters over time' }),
        h('div', { class: 'periods', role: 'group', 'aria-label': 'Period' }, periodBtns, h('span', { class: 'custom' }, since, h('span', { 'aria-hidden': 'true', text: '–' }), until, customBtn)),
        chartMsg, chartBox, h('h3', { text: 'Supplies over time' }), supplyBox));

    // How it was found lives in its PrinterInfo, which the Device record (contract 2.2) does not
    // carry: the listing with saved printers included has it.
    async function foundInfo() {
      try { return (await api('/devices/discovered?include_known=true')).find((p) => p.serial === serial) || null; } catch { return null; }
    }
    function drawInfo(d, latest, info) {
      const how = info || { device_type: d.device_type, is_usb: d.is_usb, discovery_methods: d.discovery_method ? [d.discovery_method] : [] };
      const barsBox = h('div', { id: 'supply-bars' }, latest ? supplyBars(latest.toner_levels) : null);
      const rows = [['Model', [d.manufacturer, d.model].filter(Boolean).join(' ')], ['Serial', d.serial], ['Firmware', d.firmware], ['MAC address', d.mac_address],
        ['Address', d.ip + (d.hostname ? ' (' + d.hostname + ')' : '')], ['USB port', d.is_usb || d.device_type === 'usb' ? d.port_name || 'USB' : ''],
        ['Web page', webLink(d.web_ui_url)], ['Found by', foundBy(how)], ['What answered', detection(how)],
        ['First seen', when(d.first_seen)], ['Last seen', when(d.last_seen) + ' (' + ago(d.last_seen) + ')']];
      identity.replaceChildren(...rows.filter(([, v]) => v).flatMap(([k, v]) => [h('dt', { text: k }), v instanceof Node ? h('dd', {}, v) : h('dd', { text: v })]));
      const m = meters(latest);
      statusBox.replaceChildren(h('p', {}, statusBadges(d)),
        latest ? h('dl', { class: 'facts' }, h('dt', { text: 'Total' }), h('dd', { id: 'meter-total', text: fmtInt(m.total) }),
          m.mono !== undefined ? [h('dt', { text: 'Mono' }), h('dd', { text: fmtInt(m.mono) })] : null,
          m.colour !== undefined ? [h('dt', { text: 'Colour' }), h('dd', { text: fmtInt(m.colour) })] : null,
          h('dt', { text: 'Read' }), h('dd', { text: when(latest.timestamp) })) : h('p', { class: 'empty', text: 'No readings yet: press Read now.' }),
        latest ? barsBox : null);
      if (latest) {
        // Days to empty beside each bar, once the forecast has come (the bars are drawn without it).
        api('/api/devices/forecast' + q).then((f) => barsBox.replaceChildren(supplyBars(latest.toner_levels, f)), () => {});
      }
    }
    // A pending move or a counter that went down (discovery/move-check.ts): only a person decides.
    const SNMP_PROOF = 'SNMP v1 and v2c cannot prove who answered: any host on the network can reply with a printer\'s serial, model, MAC and counters. '
      + 'Check the printer itself (its panel or configuration page shows its address and counter) before you confirm. '
      + 'SNMPv3 with authentication and privacy (authPriv), set on the printers and in Settings, is the cure: then only a printer holding the keys can answer.';
    function drawTrust(d) {
      const raw = d.raw_data || {};
      const out = [];
      const act = async (btn, msg, path, body) => {
        btn.disabled = true; msg.textContent = ''; msg.className = '';
        try { await api(path, body); await reloadInfo(); } catch (err) { msg.textContent = 'Not done: ' + err.message; msg.className = 'error'; btn.disabled = false; }
      };
      const m = raw.pending_move;
      if (m && m.ip) {
        const msg = h('p', { role: 'status', 'aria-live': 'polite' });
        const btn = h('button', { type: 'button', class: 'primary', id: 'confirm-move', text: 'Confirm the move to ' + m.ip });
        btn.onclick = () => act(btn, msg, '/devices/confirm-move', { serial, ip: m.ip });
        const checks = Object.entries(m.checks || {}).map(([k, v]) => k.replace('_', ' ') + ': ' + v).join(', ');
        out.push(h('div', { class: 'notice', id: 'pending-move', role: 'region', 'aria-label': 'Pending move' },
          h('h3', { text: 'Moved? A reply with this serial came from ' + m.ip }),
          h('p', { text: 'The record stays at ' + d.ip + ' and nothing from ' + m.ip + ' is stored until you confirm. Seen ' + when(m.seen_at) + ' (' + (m.sightings || 1) + ' times' + (m.saved_address_answers ? '; ' + d.ip + ' still answers too' : '') + ').' }),
          h('p', { class: 'muted', text: m.reason + (checks ? ' (' + checks + ')' : '') }),
          h('p', { class: 'hint', text: SNMP_PROOF }), btn, ' ', msg));
      }
      const c = raw.counter_flag;
      if (c && typeof c.page_count === 'number') {
        const msg = h('p', { role: 'status', 'aria-live': 'polite' });
        const btn = h('button', { type: 'button', id: 'confirm-counter', text: 'Accept ' + fmtInt(c.page_count) + ' as the page counter' });
        btn.onclick = () => act(btn, msg, '/devices/confirm-counter', { serial });
        out.push(h('div', { class: 'notice', id: 'counter-flag', role: 'region', 'aria-label': 'Page counter went down' },
          h('h3', { text: 'Page counter went down' }),
          h('p', { text: fmtInt(c.page_count) + ' pages read at ' + c.ip + ' on ' + when(c.seen_at) + ', ' + fmtInt(c.stored_page_count) + ' stored before. The reading was not stored. If the printer\'s counter was reset (a new board), accept it; if not, the reply may not be the printer\'s.' }),
          h('p', { class: 'hint', text: SNMP_PROOF }), btn, ' ', msg));
      }
      trustBox.replaceChildren(...out);
    }
    drawInfo(dev, profile.latest_metrics, await foundInfo());
    drawTrust(dev);
    showLocks(dev);

    // Charts: uPlot, one for meters and one for supplies, redrawn on a period change.
    let charts = [];
    let period = 'month';
    let bounds = null;
    function destroyCharts() { for (const c of charts) c.destroy(); charts = []; }
    cleanup.push(destroyCharts);
    async function loadBounds() {
      bounds = await api('/api/devices/metrics/bounds' + q).catch(() => null);
      if (bounds) {
        const d0 = bounds.min_timestamp.slice(0, 10), d1 = new Date().toISOString().slice(0, 10);
        for (const el of [since, until]) { el.min = d0; el.max = d1; }
        if (!since.value) { since.value = d0; until.value = d1; }
      }
    }
    async function drawChart(range) {
      const width = Math.max(280, chartBox.clientWidth || 600);
      // About a point per 2 px: more would not show. LTTB on the agent keeps the shape.
      let url = '/api/devices/metrics/history' + q + '&maxPoints=' + Math.max(150, Math.min(600, Math.round(width / 2)));
      url += range ? '&since=' + encodeURIComponent(range[0]) + '&until=' + encodeURIComponent(range[1]) : '&period=' + period;
      chartMsg.textContent = 'Loading…';
      const rows = (await api(url)) || [];
      rows.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
      destroyCharts();
      chartBox.replaceChildren(); supplyBox.replaceChildren();
      if (!rows.length) {
        chartMsg.textContent = bounds ? 'No readings in this period: choose a longer one (readings from ' + when(bounds.min_timestamp) + ').' : 'No readings yet: press Read now.';
        chartBox.dataset.points = '0';
        return;
      }
      chartMsg.textContent = rows.length + ' readings from ' + when(rows[0].timestamp) + ' to ' + when(rows[rows.length - 1].timestamp) + '.';
      const xs = rows.map((r) => Date.parse(r.timestamp) / 1000);
      const ms = rows.map(meters);
      const series = [['Total', ms.map((m) => m.total ?? null), '#1f5fbf'], ['Mono', ms.map((m) => m.mono ?? null), '#333'], ['Colour', ms.map((m) => m.colour ?? null), '#c2187a']]
        .filter(([, v]) => v.some((x) => x !== null));
      const height = window.innerWidth < 640 ? 200 : 260;
      const fmtAxis = (u, vals) => vals.map((v) => (v >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : v >= 1e4 ? Math.round(v / 1e3) + 'k' : fmtInt(v)));
      charts.push(new uPlot({ width, height, series: [{}, ...series.map(([label, , stroke]) => ({ label, stroke, width: 2, spanGaps: true, value: (u, v) => fmtInt(v) }))],
        axes: [{}, { values: fmtAxis, size: 52 }], cursor: { drag: { x: false } } }, [xs, ...series.map(([, v]) => v)], chartBox));
      const keys = [...new Set(rows.flatMap((r) => Object.keys(r.toner_levels || {})))];
      if (keys.length) {
        charts.push(new uPlot({ width, height: Math.round(height * 0.7), scales: { y: { range: [0, 100] } },
          series: [{}, ...keys.map((k) => ({ label: k, stroke: supplyColour(k), width: 2, spanGaps: true, value: (u, v) => (v === null ? '' : v + '%') }))],
          axes: [{}, { values: (u, vals) => vals.map((v) => v + '%'), size: 52 }] }, [xs, ...keys.map((k) => rows.map((r) => (r.toner_levels && typeof r.toner_levels[k] === 'number' ? r.toner_levels[k] : null)))], supplyBox));
      } else supplyBox.append(h('p', { class: 'muted', text: 'No supply levels in this period.' }));
      chartBox.dataset.points = String(rows.length);
      chartBox.dataset.period = range ? 'custom' : period;
    }
    function chartError(err) { chartMsg.textContent = 'Could not load the history: ' + err.message; }
    for (const b of periodBtns) b.onclick = () => {
      period = b.dataset.period;
      for (const x of periodBtns) x.setAttribute('aria-pressed', String(x === b));
      drawChart().catch(chartError);
    };
    customBtn.onclick = () => {
      if (!since.value || !until.value) { chartMsg.textContent = 'Choose both dates.'; return; }
      for (const x of periodBtns) x.setAttribute('aria-pressed', 'false');
      const a = new Date(since.value + 'T00:00:00'), b = new Date(until.value + 'T23:59:59.999');
      drawChart([a.toISOString(), b.toISOString()]).catch(chartError);
    };
    let lastWidth = 0;
    const onResize = () => { const w = chartBox.clientWidth; if (charts.length && Math.abs(w - lastWidth) > 20) { lastWidth = w; for (const c of charts) c.setSize({ width: w, height: c.height }); } };
    window.addEventListener('resize', onResize);
    cleanup.push(() => window.removeEventListener('resize', onResize));

    async function reloadInfo() {
      const [p, info] = await Promise.all([api('/api/devices/profile' + q), foundInfo()]);
      drawInfo(p.device, p.latest_metrics, info);
      drawTrust(p.device);
      showLocks(p.device);
    }
    readBtn.onclick = async () => {
      readBtn.disabled = true; readMsg.textContent = 'Reading the printer…'; readMsg.className = 'muted';
      try {
        const snap = await api('/devices/metrics/collect', { serial });
        readMsg.textContent = 'Read at ' + when(snap.timestamp) + ': ' + fmtInt(meters(snap).total) + ' pages.';
        await reloadInfo(); await loadBounds(); await drawChart();
      } catch (err) { readMsg.textContent = 'Not read: ' + err.message; readMsg.className = 'error'; } finally { readBtn.disabled = false; }
    };
    delBtn.onclick = () => {
      const points = bounds ? bounds.points : 0;
      const dlg = h('dialog', { id: 'confirm-delete', 'aria-labelledby': 'del-title' },
        h('h2', { id: 'del-title', text: 'Delete ' + (dev.model || serial) + '?' }),
        h('p', { text: 'This removes the printer and all its history (' + fmtInt(points) + ' stored readings). It cannot be undone. If the printer is still on the network, the next scan finds it again as a new printer.' }));
      const err = h('p', { class: 'error', role: 'alert' });
      const yes = h('button', { type: 'button', class: 'danger primary', id: 'confirm-delete-yes', text: 'Delete printer and history' });
      const no = h('button', { type: 'button', text: 'Cancel', onclick: () => dlg.close() });
      // Cancel, Escape or a delete that failed: the dialog goes, focus returns to its button.
      dlg.addEventListener('close', () => { dlg.remove(); if (delBtn.isConnected) delBtn.focus(); });
      yes.onclick = async () => {
        yes.disabled = true;
        try { await api('/devices/delete', { serial }); location.hash = '#/printers'; dlg.close(); } catch (e) { err.textContent = e.message; yes.disabled = false; }
      };
      dlg.append(err, h('div', { class: 'toolbar' }, no, yes));
      document.body.append(dlg);
      dlg.showModal();
      no.focus();
    };
    cleanup.push(onEvent((name, d) => {
      if ((name === 'device_change' && d.serial === serial && d.change !== 'deleted') || name === 'poll') scheduleRefresh(() => reloadInfo().catch(() => {}));
    }));
    focusHeading();
    await loadBounds();
    await drawChart().catch(chartError);
  }

  // ---- Settings ----------------------------------------------------------------------------------
  // A field: label, control, hint and the place its error goes. `path` is the settings key the
  // agent names in its 400 message ("discovery.ranges_text: line 2: ...").
  function field(path, label, control, hint) {
    const id = 's-' + path.replace(/[.[\]]/g, '-');
    control.id = id;
    control.dataset.path = path;
    control.setAttribute('aria-describedby', id + '-hint ' + id + '-err');
    const isCheck = control.type === 'checkbox';
    return h('div', { class: 'field' },
      isCheck ? h('label', { class: 'check', for: id }, control, ' ' + label) : [h('label', { for: id, text: label }), control],
      h('p', { class: 'hint', id: id + '-hint', text: hint || '' }), h('p', { class: 'error', id: id + '-err', 'data-error-for': path }));
  }
  // Puts the agent's message under the field it names, or under the form when it names none.
  function showError(form, message, formMsg, path) {
    const m = path ? [path, path] : message.match(/^(?:unknown setting )?([a-z_]+(?:\.[a-z_0-9]+)?(?:\[\d+\](?:\.[a-z_]+)?)?)/);
    let target = null;
    if (m) for (const el of form.querySelectorAll('[data-error-for]')) if (el.dataset.errorFor === m[1]) target = el;
    if (target) {
      target.textContent = message;
      const input = form.querySelector('[data-path="' + target.dataset.errorFor + '"]');
      if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
      formMsg.textContent = 'Not saved: see the field marked above. Nothing was changed.';
    } else formMsg.textContent = 'Not saved: ' + message + '. Nothing was changed.';
    formMsg.className = 'error';
  }
  function clearErrors(form, formMsg) {
    for (const el of form.querySelectorAll('[data-error-for]')) el.textContent = '';
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    formMsg.textContent = ''; formMsg.className = '';
  }
  function settingsForm(id, title, fields, collect, after) {
    const formMsg = h('p', { role: 'status', 'aria-live': 'polite', id: id + '-msg' });
    const form = h('form', { id, novalidate: true }, h('h2', { text: title }), fields, h('button', { type: 'submit', class: 'primary', text: 'Save', 'aria-label': 'Save the ' + title + ' settings' }), ' ', formMsg);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(form, formMsg);
      let body;
      try { body = collect(); } catch (err) { showError(form, err.message, formMsg); return; }
      try {
        const s = await api('/settings', body);
        formMsg.textContent = 'Saved.'; formMsg.className = 'okmsg';
        if (after) after(s);
      } catch (err) { showError(form, err.message, formMsg); }
    });
    return h('section', {}, form);
  }
  const lines = (t) => t.split('\n').map((s) => s.trim()).filter(Boolean);
  const intOf = (el) => (el.value.trim() === '' ? NaN : Number(el.value));

  async function settingsView() {
    setTitle('Settings');
    const s = await api('/settings');
    const d = s.discovery;
    const inp = (type, value, extra) => h('input', Object.assign({ type, value: value ?? '' }, extra || {}));
    const chk = (v) => { const c = h('input', { type: 'checkbox' }); c.checked = !!v; return c; };

    // Discovery
    const subnet = chk(d.subnet_scan), manual = chk(d.manual_ranges), auto = chk(d.auto_discover), mdns = chk(d.mdns_enabled), probes = chk(d.port_probes_enabled), wsd = chk(d.wsd_enabled), ssdp = chk(d.ssdp_enabled);
    const ranges = h('textarea', { rows: 4, spellcheck: 'false' }); ranges.value = d.ranges_text;
    const interval = inp('number', d.auto_discover_interval_minutes, { min: 5, max: 10080, inputmode: 'numeric' });
    const allowed = h('textarea', { rows: 2, spellcheck: 'false' }); allowed.value = d.allowed_ranges.join('\n');
    const timeout = inp('number', d.snmp_timeout_ms, { min: 100, max: 60000, inputmode: 'numeric' });
    const nothingNote = h('p', { class: 'empty', id: 'settings-no-ranges' });
    const updateNote = () => { const none = !subnet.checked && !(manual.checked && ranges.value.trim()); nothingNote.hidden = !none; nothingNote.textContent = none ? 'No ranges enabled: turn on subnet scan or add a range, or a scan has nothing to look at.' : ''; };
    for (const el of [subnet, manual, ranges]) el.addEventListener('input', updateNote);
    updateNote();
    const discovery = settingsForm('settings-discovery', 'Discovery', [
      nothingNote,
      field('discovery.subnet_scan', "Scan this box's own subnets (each at most a /24)", subnet),
      field('discovery.manual_ranges', 'Scan the ranges below', manual),
      field('discovery.ranges_text', 'Ranges', ranges, 'One a line: 192.168.1.0/24, 192.168.1.10-50 or 192.168.1.*'),
      field('discovery.auto_discover', 'Scan automatically', auto),
      field('discovery.auto_discover_interval_minutes', 'Every (minutes)', interval, '5 to 10080'),
      field('discovery.allowed_ranges', 'Allowed ranges', allowed, 'CIDR, one a line. When set, the box never sends a packet outside them. Empty: no limit.'),
      field('discovery.snmp_timeout_ms', 'SNMP timeout (ms)', timeout, '100 to 60000'),
      field('discovery.mdns_enabled', 'Listen for printers that announce themselves (mDNS) and read them by IPP', mdns, "Only on this box's own subnets or the ranges above"),
      field('discovery.port_probes_enabled', 'Probe printer ports (9100, 631, 515, 80, 443) while scanning, and read IPP where 631 is open', probes, 'Only the addresses the scan covers'),
      field('discovery.wsd_enabled', 'Listen for printers that announce themselves by WS-Discovery (Windows printing) and read them', wsd),
      field('discovery.ssdp_enabled', 'Search for printers by SSDP (UPnP)', ssdp),
    ], () => ({ discovery: { subnet_scan: subnet.checked, manual_ranges: manual.checked, ranges_text: ranges.value, auto_discover: auto.checked,
      auto_discover_interval_minutes: intOf(interval), allowed_ranges: lines(allowed.value), snmp_timeout_ms: intOf(timeout), mdns_enabled: mdns.checked, port_probes_enabled: probes.checked, wsd_enabled: wsd.checked, ssdp_enabled: ssdp.checked } }));

    // SNMP: communities and v3 users (keys are never shown: an empty key keeps the stored one).
    const sn = s.snmp;
    const communities = h('textarea', { rows: 2, spellcheck: 'false' }); communities.value = sn.communities.join('\n');
    const version = h('select', {}, ['v2c', 'v1'].map((v) => h('option', { value: v, text: v, selected: v === sn.version })));
    const port = inp('number', sn.port, { min: 1, max: 65535, inputmode: 'numeric' });
    const v3Box = h('div', { id: 'v3-users' });
    const v3Rows = [];
    function addV3(u) {
      const i = v3Rows.length;
      const row = {
        user: inp('text', u ? u.user : '', { autocomplete: 'off' }),
        auth_protocol: h('select', {}, ['SHA', 'MD5', 'none'].map((p) => h('option', { value: p, text: p, selected: u ? u.auth_protocol === p : p === 'SHA' }))),
        auth_key: inp('password', '', { autocomplete: 'new-password', placeholder: u ? 'unchanged' : '' }),
        priv_protocol: h('select', {}, ['AES', 'DES', 'none'].map((p) => h('option', { value: p, text: p, selected: u ? u.priv_protocol === p : p === 'AES' }))),
        priv_key: inp('password', '', { autocomplete: 'new-password', placeholder: u ? 'unchanged' : '' }),
      };
      const box = h('fieldset', { class: 'v3' }, h('legend', { text: 'SNMPv3 user ' + (i + 1) }),
        field('snmp.v3[' + i + '].user', 'User name', row.user),
        field('snmp.v3[' + i + '].auth_protocol', 'Authentication', row.auth_protocol),
        field('snmp.v3[' + i + '].auth_key', 'Authentication key', row.auth_key, u ? 'Stored and never shown; leave empty to keep it.' : 'At least 8 characters'),
        field('snmp.v3[' + i + '].priv_protocol', 'Privacy', row.priv_protocol),
        field('snmp.v3[' + i + '].priv_key', 'Privacy key', row.priv_key, u ? 'Stored and never shown; leave empty to keep it.' : 'At least 8 characters'),
        h('button', { type: 'button', text: 'Remove this user', onclick: () => { row.removed = true; box.hidden = true; } }));
      v3Rows.push(row);
      v3Box.append(box);
    }
    sn.v3.forEach(addV3);
    // The users sent, in order; the agent names a bad one by its index in that list (snmp.v3[1].user),
    // which the form's fields are renamed to match before each save.
    function keptV3() {
      const kept = v3Rows.filter((r) => !r.removed);
      kept.forEach((r, i) => {
        for (const k of ['user', 'auth_protocol', 'auth_key', 'priv_protocol', 'priv_key']) {
          r[k].dataset.path = 'snmp.v3[' + i + '].' + k;
          r[k].closest('.field').querySelector('[data-error-for]').dataset.errorFor = 'snmp.v3[' + i + '].' + k;
        }
      });
      return kept;
    }
    const snmp = settingsForm('settings-snmp', 'SNMP', [
      field('snmp.communities', 'Communities (v1/v2c)', communities, 'One a line, tried in order'),
      field('snmp.version', 'Version', version),
      field('snmp.port', 'UDP port', port, '161 on real printers'),
      v3Box, h('p', {}, h('button', { type: 'button', text: 'Add an SNMPv3 user', onclick: () => addV3(null) })),
    ], () => ({ snmp: { communities: lines(communities.value), version: version.value, port: intOf(port),
      v3: keptV3().map((r) => ({ user: r.user.value, auth_protocol: r.auth_protocol.value, auth_key: r.auth_key.value, priv_protocol: r.priv_protocol.value, priv_key: r.priv_key.value })) } }),
    () => { for (const r of v3Rows) { r.auth_key.value = ''; r.priv_key.value = ''; } });

    // Polling
    const pollEvery = inp('number', s.collection.interval_minutes, { min: 1, max: 1440, inputmode: 'numeric' });
    const polling = settingsForm('settings-polling', 'Polling', [field('collection.interval_minutes', 'Read saved printers every (minutes)', pollEvery, '1 to 1440')],
      () => ({ collection: { interval_minutes: intOf(pollEvery) } }));

    // Central server
    const link = h('div', { id: 'server-link' });
    function drawLink(l) {
      const text = { off: 'Not linked: no server address set.', registering: 'Enrolling with the server…', rejected: 'The server refused the enrollment token.', online: 'Online.', failing: 'Connected, but the server refuses uploads (they are kept and retried).', offline: 'Registered, the server is not reachable now (uploads wait).' }[l.state] || l.state;
      link.replaceChildren(h('p', {}, h('span', { class: 'badge' + (l.state === 'online' ? ' ok' : l.state === 'rejected' || l.state === 'failing' ? ' bad' : ''), text: l.state }), ' ', text),
        h('dl', { class: 'facts' }, h('dt', { text: 'Box id' }), h('dd', { text: l.agent_id }),
          h('dt', { text: 'Waiting to upload' }), h('dd', { text: fmtInt(l.backlog) + ' readings' }),
          l.last_heartbeat_at ? [h('dt', { text: 'Last heartbeat' }), h('dd', { text: when(l.last_heartbeat_at) })] : null,
          l.last_upload_at ? [h('dt', { text: 'Last upload' }), h('dd', { text: when(l.last_upload_at) })] : null,
          l.upload_error ? [h('dt', { text: 'Upload error' }), h('dd', { class: 'error', text: l.upload_error })] : null,
          l.settings_unmapped ? [h('dt', { text: 'Managed settings not applied' }), h('dd', { text: l.settings_unmapped.join('; ') })] : null,
          l.last_error ? [h('dt', { text: 'Last error' }), h('dd', { class: 'error', text: l.last_error })] : null));
    }
    drawLink(s.server.link);
    const url = inp('url', s.server.url, { placeholder: 'https://server.example', autocomplete: 'off' });
    const token = inp('password', '', { autocomplete: 'off', placeholder: 'unchanged' });
    const server = settingsForm('settings-server', 'Central server', [link,
      field('server.url', 'Server address', url, 'Empty: this box works alone.'),
      field('server.enrollment_token', 'Enrollment token', token, 'The join token the server issued. Never shown again; leave empty to keep it.')],
    () => ({ server: { url: url.value.trim(), enrollment_token: token.value } }), () => { token.value = ''; });
    // The link's state is drawn from `server_status` only: the answer to the POST can be older than
    // the event the change itself sent (the link restarts as the settings change), and would undo it.

    // Alert rules (GET /api/alerts says how alerts open and clear)
    const al = s.alerts;
    const below = inp('number', al.supply_below_percent, { min: 0, max: 100, inputmode: 'numeric' });
    const within = inp('number', al.supply_empty_within_days, { min: 0, max: 365, inputmode: 'numeric' });
    const offlineAfter = inp('number', al.offline_after_minutes, { min: 0, max: 10080, inputmode: 'numeric' });
    const jam = chk(al.jam), door = chk(al.door_open), paper = chk(al.paper_out), service = chk(al.service_requested), backwards = chk(al.counter_backwards);
    const alertRules = settingsForm('settings-alerts', 'Alerts', [
      field('alerts.supply_below_percent', 'A supply below (%)', below, '0 to 100; 0 turns it off. Cleared 5 points above.'),
      field('alerts.supply_empty_within_days', 'A supply forecast empty within (days)', within, '0 to 365; 0 turns it off'),
      field('alerts.offline_after_minutes', 'A printer not answering for (minutes)', offlineAfter, '0 to 10080; 0 turns it off'),
      field('alerts.jam', 'Paper jam', jam), field('alerts.door_open', 'Door or cover open', door), field('alerts.paper_out', 'Out of paper', paper),
      field('alerts.service_requested', 'Service requested', service), field('alerts.counter_backwards', 'Page counter went backwards', backwards),
    ], () => ({ alerts: { supply_below_percent: intOf(below), supply_empty_within_days: intOf(within), offline_after_minutes: intOf(offlineAfter),
      jam: jam.checked, door_open: door.checked, paper_out: paper.checked, service_requested: service.checked, counter_backwards: backwards.checked } }));

    // Log level
    const level = h('select', {}, ['debug', 'info', 'warn', 'error'].map((v) => h('option', { value: v, text: v, selected: v === s.log.level })));
    const logForm = settingsForm('settings-log', 'Logging', [field('log.level', 'Log level', level, 'Applied at once. debug is verbose.')], () => ({ log: { level: level.value } }));

    // Data card
    const storage = h('section', { id: 'storage-state' });
    function drawStorage(st) {
      if (!st) { storage.replaceChildren(h('h2', { text: 'Data card' }), h('p', { class: 'muted', text: 'No state reported.' })); return; }
      storage.replaceChildren(h('h2', { text: 'Data card' }), h('p', {}, h('span', { class: 'badge' + (st.state === 'ok' ? ' ok' : ' bad'), text: st.state }), ' ', STORAGE_TEXT[st.state] || 'Writes work.'),
        h('dl', { class: 'facts' }, h('dt', { text: 'Free' }), h('dd', { text: st.free_bytes === null ? 'unknown' : (st.free_bytes / 1048576).toFixed(0) + ' MiB' }),
          h('dt', { text: 'Reserve' }), h('dd', { text: (st.reserve_bytes / 1048576).toFixed(0) + ' MiB' }),
          st.pending_readings ? [h('dt', { text: 'Kept in memory' }), h('dd', { text: fmtInt(st.pending_readings) + ' readings' })] : null,
          st.error ? [h('dt', { text: 'Error' }), h('dd', { class: 'error', text: st.error })] : null));
    }
    drawStorage(s.storage);

    // What provisioning did with printbox.toml on the boot partition (read-only, as on the console).
    const provisioning = h('section', { id: 'provisioning-state' }, h('h2', { text: 'Provisioning' }),
      s.provisioning
        ? h('p', {}, h('span', { class: 'badge' + (s.provisioning.state === 'refused' ? ' bad' : s.provisioning.state === 'applied' || s.provisioning.state === 'unchanged' ? ' ok' : ''), text: s.provisioning.state }), ' ', s.provisioning.message, h('span', { class: 'muted', text: ' (checked ' + new Date(s.provisioning.checked_at).toLocaleString() + ')' }))
        : h('p', { class: 'muted', text: 'Provisioning has not run on this box.' }));

    // Account (password mode): the agent says when there is no signed-in user.
    const cur = inp('password', '', { autocomplete: 'current-password' });
    const next = inp('password', '', { autocomplete: 'new-password', minlength: 8 });
    const accMsg = h('p', { role: 'status', 'aria-live': 'polite' });
    const account = h('form', { id: 'settings-account', novalidate: true }, h('h2', { text: 'Account' }),
      field('current_password', 'Current password', cur), field('new_password', 'New password', next, 'At least 8 characters. Your other sessions are signed out.'),
      h('button', { type: 'submit', class: 'primary', text: 'Change password' }), ' ', accMsg);
    account.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(account, accMsg);
      try {
        await api('/api/v1/auth/password', { current_password: cur.value, new_password: next.value });
        cur.value = ''; next.value = '';
        accMsg.textContent = 'Password changed.'; accMsg.className = 'okmsg';
      } catch (err) {
        const target = /current_password/.test(err.message) ? 'current_password' : /new_password|at least/.test(err.message) ? 'new_password' : null;
        if (target) showError(account, err.message, accMsg, target); else { accMsg.textContent = err.message; accMsg.className = 'error'; }
      }
    });

    // Backup: GET /backup downloads everything the box holds; POST /restore reads such a file back,
    // all or nothing (a cut or changed file is refused, naming the line).
    const file = h('input', { type: 'file', id: 'restore-file', accept: '.ndjson,application/x-ndjson' });
    const restoreMsg = h('p', { role: 'status', 'aria-live': 'polite' });
    const restore = h('form', { id: 'restore', novalidate: true },
      field('restore-file', 'Restore from a backup file', file, 'Devices and history in the file are added to what the box holds; a damaged or cut file changes nothing.'),
      h('button', { type: 'submit', text: 'Restore' }), ' ', restoreMsg);
    restore.addEventListener('submit', async (e) => {
      e.preventDefault();
      restoreMsg.textContent = ''; restoreMsg.className = '';
      if (!file.files || !file.files[0]) { restoreMsg.textContent = 'Choose a backup file first.'; restoreMsg.className = 'error'; return; }
      try {
        const r = await fetch(onBox('/restore'), { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/x-ndjson' }, body: file.files[0] });
        const text = await r.text();
        if (!r.ok) throw new Error(text.trim() || r.statusText);
        const got = JSON.parse(text);
        restoreMsg.textContent = 'Restored ' + fmtInt(got.devices) + ' printers and ' + fmtInt(got.metrics) + ' meter rows' + (got.skipped ? ' (' + fmtInt(got.skipped) + ' already here)' : '') + '.' + (got.warning ? ' Note: ' + got.warning : '');
        restoreMsg.className = 'okmsg';
      } catch (err) { restoreMsg.textContent = err.message; restoreMsg.className = 'error'; }
    });
    const backup = h('section', { id: 'backup' }, h('h2', { text: 'Backup' }),
      h('p', {}, h('a', { href: onBox('/backup'), download: '', id: 'backup-download', text: 'Download a backup' }), ' of every printer and its whole meter history.'),
      restore);

    // Updates (A/B slots, RAUC): where they come from, what runs, what is offered; check and install.
    const updUrl = inp('url', s.update.url, { placeholder: 'https://updates.example/printbox/manifest.json' });
    const updSource = settingsForm('settings-update', 'Updates', [field('update.url', 'Update manifest URL', updUrl, 'Empty: ask the central server. Bundles must be signed with the key this box trusts, wherever they come from.')],
      () => ({ update: { url: updUrl.value.trim() } }), () => refreshUpdate());
    const updState = h('div', { id: 'update-state', role: 'status', 'aria-live': 'polite' });
    const updMsg = h('p', { id: 'update-msg' });
    const checkBtn = h('button', { type: 'button', id: 'update-check', text: 'Check for an update' });
    const installBtn = h('button', { type: 'button', id: 'update-install', class: 'primary', text: 'Install and restart' });
    function drawUpdate(u) {
      const p = u.progress;
      const doing = u.state === 'idle' ? '' : u.state + (p && p.version ? ' ' + p.version : '') + (p && p.percent !== undefined ? ' ' + p.percent + '%' : '') + (p && p.message ? ' (' + p.message + ')' : '');
      updState.replaceChildren(h('dl', { class: 'facts' },
        h('dt', { text: 'Running' }), h('dd', { text: u.current_version + (u.current_slot ? ' in slot ' + u.current_slot : '') }),
        h('dt', { text: 'Other slot' }), h('dd', { text: u.other_slot ? u.other_slot.slot + ': ' + (u.other_slot.version || 'nothing installed') : '–' }),
        h('dt', { text: 'Last check' }), h('dd', { text: u.last_check ? ago(u.last_check) : 'never' }),
        h('dt', { text: 'Available' }), h('dd', { text: u.available_version || 'nothing newer' }),
        doing ? [h('dt', { text: 'Now' }), h('dd', { text: doing })] : [],
        u.last_error ? [h('dt', { text: 'Last error' }), h('dd', { class: 'error', text: u.last_error })] : []));
      checkBtn.disabled = installBtn.disabled = !u.supported || u.state !== 'idle';
      installBtn.hidden = !u.available_version;
      if (!u.supported) { updMsg.textContent = u.reason; updMsg.className = ''; }
    }
    async function refreshUpdate() { try { drawUpdate(await api('/api/autoupdate/status')); } catch (err) { updMsg.textContent = err.message; updMsg.className = 'error'; } }
    const act = (path, body) => async () => {
      updMsg.textContent = ''; updMsg.className = '';
      try { drawUpdate(await api(path, body)); } catch (err) { updMsg.textContent = err.message; updMsg.className = 'error'; }
    };
    checkBtn.addEventListener('click', act('/api/autoupdate/check', {}));
    installBtn.addEventListener('click', () => {
      if (confirm('Install the update and restart the box? It serves again on the new version in a minute or two; if that version does not start, the box goes back to this one.')) act('/api/autoupdate/force', { reason: 'agent_ui_force_reinstall' })();
    });
    const updates = h('section', { id: 'updates' }, updSource.firstChild, updState, h('p', {}, checkBtn, ' ', installBtn), updMsg);
    void refreshUpdate();

    view().replaceChildren(h('h2', { class: 'sr-only', text: 'Settings' }), discovery, snmp, polling, alertRules, server, logForm, storage, provisioning, h('section', {}, account), updates, backup);
    cleanup.push(onEvent((name, data) => {
      if (name === 'server_status') drawLink(data);
      if (name === 'storage_status') drawStorage(data);
      if (name === 'update_progress') void refreshUpdate();
    }));
  }

  // ---- Logs ----------------------------------------------------------------------------------------
  async function logsView() {
    setTitle('Logs');
    const level = h('select', { id: 'log-level' }, ['debug', 'info', 'warn', 'error'].map((v) => h('option', { value: v, text: v, selected: v === 'info' })));
    const tail = h('select', { id: 'log-tail' }, [50, 200, 1000, 2000].map((v) => h('option', { value: v, text: v + ' newest', selected: v === 200 })));
    const follow = h('input', { type: 'checkbox', id: 'log-follow' });
    const out = h('div', { class: 'logs', id: 'log-lines', role: 'log', 'aria-live': 'off', tabindex: '0', 'aria-label': 'Log records' });
    const msg = h('p', { class: 'error', role: 'alert' });
    view().replaceChildren(h('section', {}, h('h2', { text: 'Logs' }),
      h('div', { class: 'toolbar' }, h('label', { for: 'log-level', text: 'Level at least' }), level, h('label', { for: 'log-tail', text: 'Show' }), tail,
        h('label', { for: 'log-follow' }, follow, ' Follow'), h('a', { class: 'button', href: onBox('/logfile'), download: 'printbox-agent.log', text: 'Download' })), msg, out));
    async function load() {
      const recs = await api('/logs?level=' + level.value + '&tail=' + tail.value);
      msg.textContent = '';
      if (!recs.length) { out.replaceChildren(h('span', { text: 'No records at this level. Choose a lower level to see more.' })); return; }
      const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 8;
      out.replaceChildren(...recs.map((r) => {
        const { level: lv, time, msg: m, previous_run, ...rest } = r;
        const extra = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
        return h('div', { class: 'l-' + lv }, (previous_run ? '[previous run] ' : '') + time + ' ' + lv.toUpperCase() + ' ' + (m || '') + extra);
      }));
      if (atEnd || follow.checked) out.scrollTop = out.scrollHeight;
    }
    const reload = () => load().catch((err) => { msg.textContent = err.message; });
    level.onchange = reload; tail.onchange = reload;
    let timer = null;
    follow.onchange = () => { clearInterval(timer); timer = follow.checked ? setInterval(reload, 2000) : null; if (follow.checked) reload(); };
    cleanup.push(() => clearInterval(timer));
    await load();
    focusHeading();
  }

  // ---- Alerts (issue 36) ---------------------------------------------------------------------------
  // The header's count: open alerts nobody has acknowledged (GET /api/alerts), again on each `alert`.
  async function refreshAlertCount() {
    const open = await api('/api/alerts');
    const n = open.filter((a) => !a.acknowledged_at).length;
    const c = $('alert-count');
    c.hidden = n === 0;
    c.textContent = String(n);
    c.setAttribute('aria-label', n + ' unacknowledged alert' + (n === 1 ? '' : 's'));
  }
  onEvent((name) => { if (name === 'alert' || name === 'poll') scheduleAlertCount(); });
  let alertCountTimer = null;
  function scheduleAlertCount() { clearTimeout(alertCountTimer); alertCountTimer = setTimeout(() => refreshAlertCount().catch(() => {}), 300); }

  const ALERT_WORDS = { supply_low: 'Supply low', supply_empty_soon: 'Supply empty soon', jam: 'Paper jam', door_open: 'Door open', paper_out: 'Out of paper',
    service_requested: 'Service requested', offline: 'Not answering', counter_backwards: 'Counter went backwards' };
  async function alertsView() {
    setTitle('Alerts');
    const history = h('input', { type: 'checkbox', id: 'alerts-history' });
    const table = h('table', { id: 'alerts', class: 'cards' });
    const msg = h('p', { class: 'error', role: 'alert' });
    view().replaceChildren(h('section', {}, h('h2', { text: 'Alerts' }),
      h('div', { class: 'toolbar' }, h('label', { for: 'alerts-history' }, history, ' Show cleared alerts too'), h('a', { href: '#/settings', class: 'muted', text: 'Alert rules' })), msg, table));
    async function load() {
      const list = await api('/api/alerts' + (history.checked ? '?all=true' : ''));
      msg.textContent = '';
      if (!list.length) {
        table.replaceChildren(h('caption', { class: 'empty', text: history.checked ? 'No alerts yet.' : 'No open alerts.' }));
      } else {
        table.replaceChildren(h('thead', {}, h('tr', {}, ['Printer', 'Alert', 'Severity', 'Opened', 'State', ''].map((t) => h('th', { text: t })))),
          h('tbody', {}, list.map((a) => {
            const ack = a.cleared_at || a.acknowledged_at ? null : h('button', { type: 'button', class: 'ack', text: 'Acknowledge', 'aria-label': 'Acknowledge ' + (ALERT_WORDS[a.kind] || a.kind) + ' on ' + a.serial,
              onclick: async (e) => { e.target.disabled = true; try { await api('/api/alerts/acknowledge', { id: a.id }); await load(); scheduleAlertCount(); } catch (err) { msg.textContent = err.message; e.target.disabled = false; } } });
            const state = a.cleared_at ? 'cleared ' + when(a.cleared_at) : a.acknowledged_at ? 'open, acknowledged ' + ago(a.acknowledged_at) : 'open';
            return h('tr', { 'data-alert': a.id, 'data-kind': a.kind, 'data-state': a.cleared_at ? 'cleared' : 'open' },
              h('td', { 'data-label': 'Printer' }, h('a', { href: '#/printer/' + encodeURIComponent(a.serial), text: a.serial })),
              h('td', { 'data-label': 'Alert' }, h('b', { text: ALERT_WORDS[a.kind] || a.kind }), ' ', a.message),
              h('td', { 'data-label': 'Severity' }, h('span', { class: 'badge' + (a.severity === 'critical' ? ' bad' : ''), text: a.severity })),
              h('td', { 'data-label': 'Opened', title: when(a.opened_at), text: ago(a.opened_at) }),
              h('td', { 'data-label': 'State', text: state }),
              h('td', {}, ack));
          })));
      }
      table.dataset.loaded = 'true';
    }
    history.onchange = () => load().catch((err) => { msg.textContent = err.message; });
    cleanup.push(onEvent((name) => { if (name === 'alert' || name === 'poll') scheduleRefresh(() => load().catch(() => {})); }));
    await load();
    focusHeading();
  }

  // ---- Start -------------------------------------------------------------------------------------
  async function start() {
    // The skip link moves focus; it must not become a route.
    $('skip').addEventListener('click', (e) => { e.preventDefault(); view().focus(); });
    $('logout').onclick = () => fetch(onBox('/api/v1/auth/logout'), { method: 'POST' }).then(() => location.assign(onBox('/login')));
    openEvents();
    window.addEventListener('hashchange', () => { navigated = true; route(); });
    route();
    void refreshAlertCount().catch(() => {});
    const [s, v] = await Promise.all([api('/settings'), api('/api/version')]);
    showStorage(s.storage);
    $('version').textContent = 'Agent ' + v.version + ' (' + v.git_commit + ')';
  }
  start().catch((err) => { $('status').textContent = err.message; });
})();
