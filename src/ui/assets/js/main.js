// @ts-check
// The technician's web UI: one page, hash-routed views (#/printers, #/discovered,
// #/printer/<serial>, #/alerts, #/order-list, #/billing, #/settings, #/logs), talking to the same HTTP API a central server
// uses. Plain ES modules, no framework and no build: src/ui/page.ts serves this directory as
// ui/*.js under a CSP without inline script; tsc checks them against docs/openapi.yaml
// (src/ui/assets/tsconfig.json) when the agent is built.
import { signOut, get } from './api.js';
import { alertsView, watchAlertCount } from './alerts.js';
import { billingView } from './billing.js';
import { labelCells } from './cards.js';
import { discoveredView, watchAwaiting } from './discovered.js';
import { $, h } from './dom.js';
import { openEvents } from './live.js';
import { logsView } from './logs.js';
import { setupMenu } from './menu.js';
import { orderListView } from './order-list.js';
import { printerView } from './printer.js';
import { printersView } from './printers.js';
import { learnRole } from './role.js';
import { settingsView } from './settings.js';
import { showStorage, watchStatus } from './status.js';
import { leave, markNavigated, unsaved, view } from './view.js';

/** @type {[RegExp, (m: RegExpMatchArray) => Promise<void>, string][]} */
const ROUTES = [
  [/^#\/?$|^#\/printers$/, () => printersView(), 'printers'],
  [/^#\/discovered$/, () => discoveredView(), 'discovered'],
  [/^#\/printer\/(.+)$/, (m) => printerView(decodeURIComponent(m[1])), 'printer'],
  [/^#\/settings(?:\/([a-z-]+))?$/, (m) => settingsView(m[1]), 'settings'],
  [/^#\/logs$/, () => logsView(), 'logs'],
  [/^#\/alerts$/, () => alertsView(), 'alerts'],
  [/^#\/order-list$/, () => orderListView(), 'order-list'],
  [/^#\/billing$/, () => billingView(), 'billing'],
];

function route() {
  leave();
  const hash = location.hash || '#/printers';
  for (const [re, fn, nav] of ROUTES) {
    const m = hash.match(re);
    if (!m) continue;
    document.body.dataset.route = nav;
    for (const a of document.querySelectorAll('header nav a')) {
      const at = a instanceof HTMLElement ? a.dataset.nav : undefined;
      const current = at === nav || (nav === 'printer' && at === 'printers');
      if (current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    view().replaceChildren(h('p', { class: 'muted', text: 'Loading…' }));
    Promise.resolve(fn(m)).catch((err) => view().replaceChildren(h('section', {},
      h('h2', { text: 'Something went wrong' }), h('p', { class: 'error', role: 'alert', text: err.message }))));
    return;
  }
  view().replaceChildren(h('section', {}, h('h2', { text: 'Not found' }),
    h('p', {}, h('a', { href: '#/printers', text: 'Back to the printers' }))));
}

async function start() {
  watchStatus();
  setupMenu();
  labelCells(view());
  // The skip link moves focus; it must not become a route.
  $('skip').addEventListener('click', (e) => {
    e.preventDefault();
    view().focus();
  });
  // Absent from the page the central server's proxy gets (src/ui/page.ts).
  const logout = document.getElementById('logout');
  if (logout) logout.onclick = () => signOut();
  // Beside the first view's requests: what a view offers depends on the role (role.js).
  const role = learnRole();
  openEvents();
  // Leaving a view with unsaved edits asks first; staying puts the address back without
  // drawing the view again (the edits are still in it).
  let here = location.hash;
  let returning = false;
  window.addEventListener('hashchange', () => {
    if (returning) {
      returning = false;
      return;
    }
    const lost = unsaved();
    if (lost && !window.confirm(lost + ' Leave this page without saving?')) {
      returning = true;
      location.hash = here;
      return;
    }
    here = location.hash;
    markNavigated();
    route();
  });
  route();
  watchAlertCount();
  watchAwaiting();
  const [s, v] = await Promise.all([get('/settings'), get('/api/version'), role]);
  showStorage(s.storage);
  $('version').textContent = 'Agent ' + v.version + ' (' + v.git_commit + ')';
}
start().catch((err) => {
  $('status').textContent = err.message;
});
