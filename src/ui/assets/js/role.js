// @ts-check
// Who is signed in, and what the page offers them. The box refuses a viewer's every
// write (403) whatever the page shows; the page hides what would be refused, so that a viewer
// sees the printers, history, alerts, settings and logs without a button that cannot work.
// Buttons that change something carry `data-write` (app.css hides them for a viewer); a form a
// viewer may only read goes through readOnlyForViewer.
import { get } from './api.js';

/** @typedef {import('./types').GetAnswer<'/api/v1/auth/me'>} Me */
/** @type {Me} */
let me = { role: 'admin', auth_mode: 'local', manage_accounts: false };
/** @type {(m: Me) => void} */
let known = () => {};
/** Settles once the page knows who it is signed in as (learnRole). */
export const roleKnown = new Promise((resolve) => {
  known = resolve;
});

/**
 * Asks the box who this page is signed in as; the page's role (body[data-role]) follows. Asked
 * beside the first view's own requests, not before them: a view that depends on the role waits
 * for roleKnown (a round trip saved through the central server's proxy).
 */
export async function learnRole() {
  me = await get('/api/v1/auth/me');
  document.body.dataset.role = me.role;
  known(me);
  return me;
}

/** The principal the page learned (learnRole). */
export const whoAmI = () => me;
export const isViewer = () => me.role === 'viewer';

/**
 * For a viewer: every field under `root` is disabled (it still shows its value) and every button
 * is hidden (data-write), except inside an element marked `data-viewer-ok` (their own password).
 * @param {Element} root
 */
export function readOnlyForViewer(root) {
  void roleKnown.then(() => {
    if (!isViewer()) return;
    for (const el of root.querySelectorAll('input, select, textarea, button')) {
      if (el.closest('[data-viewer-ok]')) continue;
      /** @type {HTMLInputElement} */ (el).disabled = true;
      if (el instanceof HTMLButtonElement) el.dataset.write = '';
    }
  });
}
