// @ts-check
// The header's navigation as a menu on a phone (app.css: below 640 px the links are hidden until
// the Menu button opens them; on a wider screen the button is hidden and the links are a row).
// A disclosure button (aria-expanded, aria-controls): Enter or Space opens and closes it, Tab walks
// into the links, Escape closes it and gives the focus back to the button; choosing a page or
// pressing outside the header closes it. The open alerts' count (alerts.js keeps it in the Alerts
// link) is shown on the button too, so that a closed menu still says there are alerts.
import { $, h } from './dom.js';

export function setupMenu() {
  const button = $('menu-button');
  // The links follow the button in the header (src/ui/page.ts); the button names them.
  const nav = /** @type {HTMLElement} */ (button.nextElementSibling);
  nav.id = nav.id || 'pages';
  button.setAttribute('aria-controls', nav.id);
  const open = () => button.getAttribute('aria-expanded') === 'true';
  /** @param {boolean} yes */
  const set = (yes) => button.setAttribute('aria-expanded', String(yes));
  button.addEventListener('click', () => set(!open()));
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || !open()) return;
    const inside = nav.contains(document.activeElement) || document.activeElement === button;
    set(false);
    if (inside) button.focus();
  });
  document.addEventListener('click', (e) => {
    if (open() && e.target instanceof Node && !button.parentElement?.contains(e.target)) set(false);
  });
  window.addEventListener('hashchange', () => set(false));
  // The count beside the button's word: the number, then what it counts for a screen reader.
  const count = $('alert-count');
  const badge = h('span', { class: 'badge bad', hidden: true });
  button.append(badge);
  const mirror = () => {
    const n = count.hidden ? '' : (count.textContent || '').trim();
    badge.hidden = !n;
    badge.replaceChildren(n, h('span', { class: 'sr-only', text: n === '1' ? ' open alert' : ' open alerts' }));
  };
  new MutationObserver(mirror).observe(count, { attributes: true, childList: true, characterData: true, subtree: true });
  mirror();
}
