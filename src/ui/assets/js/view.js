// @ts-check
// The view slot (<main id="view">) that the router fills: the page's title, focus after a
// navigation, what a view undoes when it is left, and its throttled re-render on events.
import { $ } from './dom.js';

export const view = () => $('view');

/** @param {string} t */
export function setTitle(t) {
  document.title = t + ' · PrintBox';
}

// After a navigation inside the page (not on the first load, where the skip link comes first),
// focus goes to the new page's heading so that a screen reader announces it.
let navigated = false;
export function markNavigated() {
  navigated = true;
}
export function focusHeading() {
  if (!navigated) return;
  const h2 = view().querySelector('h2');
  if (h2) {
    h2.tabIndex = -1;
    h2.focus({ preventScroll: true });
  }
}

/** @type {(() => void)[]} */
let cleanup = [];
/** Runs when the view is left (timers, listeners, charts). @param {() => void} fn */
export function onLeave(fn) {
  cleanup.push(fn);
}
/** Leaves the current view. */
export function leave() {
  for (const f of cleanup) f();
  cleanup = [];
  guards = [];
}

/** @type {(() => string | null)[]} */
let guards = [];
/**
 * What leaving the current view would lose: `fn` says it in words (unsaved edits), or null. The
 * router asks before it leaves (main.js); the browser asks before the page is closed or reloaded.
 * Registered for the view's life.
 * @param {() => string | null} fn
 */
export function guardLeave(fn) {
  guards.push(fn);
}
/** What leaving now would lose, in words, or null. */
export function unsaved() {
  const lost = guards.map((g) => g()).filter(Boolean);
  return lost.length ? lost.join(' ') : null;
}
window.addEventListener('beforeunload', (e) => {
  if (unsaved()) e.preventDefault();
});

// Re-render the current view on a change, at most every 600 ms: the first event of a burst starts
// the wait and later ones join it (a wait restarted by each event would never end while a large
// site's events keep coming); the view's latest refresh is the one that runs.
/** @type {ReturnType<typeof setTimeout> | null} */
let refreshTimer = null;
/** @type {() => void} */
let refreshFn = () => {};
/** @param {() => void} fn */
export function scheduleRefresh(fn) {
  refreshFn = fn;
  if (!refreshTimer) {
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      refreshFn();
    }, 600);
  }
}
