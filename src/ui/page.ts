// The local web UI: one page and one script, no build step, talking to the same API a central
// server uses. Served under a strict Content-Security-Policy (no inline script).
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>PrintBox</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #1d2733; background: #f4f6f8; }
  header { background: #1d2733; color: #fff; padding: .6rem 1.2rem; display: flex; gap: 1rem; align-items: center; }
  header h1 { font-size: 1.1rem; margin: 0; flex: 1; }
  main { padding: 1rem 1.2rem; max-width: 72rem; }
  section { background: #fff; border-radius: 6px; padding: .8rem 1rem; margin-bottom: 1rem; box-shadow: 0 1px 2px #0002; }
  h2 { font-size: 1rem; margin: 0 0 .6rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e3e7eb; vertical-align: top; }
  th { font-weight: 600; font-size: .85rem; color: #53606d; }
  .bar { display: inline-block; width: 5rem; height: .6rem; background: #e3e7eb; border-radius: 3px; overflow: hidden; vertical-align: middle; }
  .bar i { display: block; height: 100%; background: #3b7ddd; }
  .muted { color: #6b7785; font-size: .85rem; }
  button { font: inherit; padding: .25rem .7rem; border: 1px solid #3b7ddd; background: #fff; color: #3b7ddd; border-radius: 4px; cursor: pointer; }
  button.primary { background: #3b7ddd; color: #fff; }
  textarea { width: 100%; min-height: 4rem; font: 13px monospace; }
  label { display: block; margin: .3rem 0; }
  #status { font-size: .9rem; }
  #storage { background: #fdecea; color: #8a1c12; border-left: 4px solid #c0392b; padding: .6rem 1.2rem; margin: 0; }
</style>
</head>
<body>
<header><h1>PrintBox</h1><span id="status"></span><button id="discover" class="primary">Discover printers</button><button id="logout">Sign out</button></header>
<p id="storage" role="alert" hidden></p>
<main>
  <section><h2>Saved printers</h2><table id="saved"></table></section>
  <section><h2>Discovered printers</h2><table id="discovered"></table></section>
  <section><h2>Discovery settings</h2>
    <label><input type="checkbox" id="subnet_scan"> Scan this box's own subnet</label>
    <label><input type="checkbox" id="auto_discover"> Discover automatically</label>
    <label><input type="checkbox" id="manual_ranges"> Scan these ranges (one per line: CIDR, a.b.c.d-e, a.b.c.*)</label>
    <textarea id="ranges_text"></textarea>
    <p><button id="save-settings">Save settings</button> <span id="settings-msg" class="muted"></span></p>
  </section>
  <p class="muted" id="version"></p>
</main>
<script src="/ui.js"></script>
</body>
</html>
`;

export const PAGE_JS = `'use strict';
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
async function api(path, body) {
  const r = await fetch(path, body === undefined ? { headers: { Accept: 'application/json' } }
    : { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(text.trim() || r.statusText);
  return text ? JSON.parse(text) : null;
}
function supplies(levels) {
  return Object.entries(levels || {}).map(([k, v]) =>
    '<div>' + esc(k) + ' <span class="bar"><i style="width:' + Math.max(0, Math.min(100, Number(v))) + '%"></i></span> ' + esc(v) + '%</div>').join('');
}
function row(p, action) {
  return '<tr><td><b>' + esc(p.model || p.serial) + '</b><div class="muted">' + esc(p.manufacturer) + ' · ' + esc(p.serial) + '</div></td>' +
    '<td>' + esc(p.ip) + '<div class="muted">' + esc(p.location) + '</div></td>' +
    '<td>' + (p.page_count ? esc(p.page_count) + ' pages' : '') + '</td><td>' + supplies(p.toner_levels) + '</td>' +
    '<td class="muted">' + esc((p.status_messages || []).join(', ')) + '</td><td>' + action + '</td></tr>';
}
const HEAD = '<tr><th>Printer</th><th>Address</th><th>Meter</th><th>Supplies</th><th>Status</th><th></th></tr>';
async function refresh() {
  const saved = await api('/devices/list');
  const withLatest = await Promise.all(saved.map(async (d) => {
    const latest = await api('/api/devices/metrics/latest?serial=' + encodeURIComponent(d.serial)).catch(() => null);
    return Object.assign({}, d.printer_info, latest ? { page_count: latest.page_count, toner_levels: latest.toner_levels } : {});
  }));
  $('saved').innerHTML = HEAD + (withLatest.map((p) => row(p, '<button data-collect="' + esc(p.serial) + '">Read now</button>')).join('') || '<tr><td class="muted">None yet.</td></tr>');
  const found = await api('/devices/discovered');
  $('discovered').innerHTML = HEAD + (found.map((p) => row(p, '<button data-save="' + esc(p.serial) + '">Save</button>')).join('') || '<tr><td class="muted">None.</td></tr>');
}
document.addEventListener('click', async (e) => {
  const t = e.target;
  try {
    if (t.dataset.save) { await api('/devices/save', { serial: t.dataset.save }); await refresh(); }
    if (t.dataset.collect) { t.disabled = true; await api('/devices/metrics/collect', { serial: t.dataset.collect }); await refresh(); }
  } catch (err) { $('status').textContent = err.message; } finally { t.disabled = false; }
});
$('discover').onclick = () => api('/discover', {}).catch((err) => ($('status').textContent = err.message));
$('logout').onclick = () => fetch('/api/v1/auth/logout', { method: 'POST' }).then(() => location.assign('/login'));
$('save-settings').onclick = async () => {
  const d = { subnet_scan: $('subnet_scan').checked, auto_discover: $('auto_discover').checked, manual_ranges: $('manual_ranges').checked, ranges_text: $('ranges_text').value };
  try { await api('/settings', { discovery: d }); $('settings-msg').textContent = 'Saved.'; } catch (err) { $('settings-msg').textContent = err.message; }
};
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
async function start() {
  const s = await api('/settings');
  showStorage(s.storage);
  for (const k of ['subnet_scan', 'auto_discover', 'manual_ranges']) $(k).checked = s.discovery[k];
  $('ranges_text').value = s.discovery.ranges_text;
  const v = await api('/api/version');
  $('version').textContent = 'Agent ' + v.version + ' (' + v.git_commit + ')';
  await refresh();
  const events = new EventSource('/events');
  events.addEventListener('discovery_update', (e) => {
    const d = JSON.parse(e.data);
    $('status').textContent = d.state === 'running' ? 'Scanning ' + d.scanned + '/' + d.total + ', found ' + d.found : 'Scan ' + d.state + ': ' + d.found + ' found';
    if (d.state !== 'running') refresh();
  });
  events.addEventListener('storage_status', (e) => showStorage(JSON.parse(e.data)));
  events.addEventListener('device_change', () => clearTimeout(start.t) || (start.t = setTimeout(refresh, 500)));
}
start().catch((err) => ($('status').textContent = err.message));
`;
