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
}

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
