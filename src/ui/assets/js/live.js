// @ts-check
// Live updates (/events), else a periodic refresh.
// The box sends `connected` as soon as a stream opens. A stream that has not said so within
// LIVE_WAIT_MS is not getting through (a proxy that buffers or does not stream, like the central
// server's: it would answer 504 after 30 s), and one that is refused ends at once: the page then
// re-reads what it shows every POLL_S seconds, says so, and tries the stream again every RETRY_MS.
// Views take the `poll` pseudo-event as "re-read"; the header's state comes with it.
import { get, urls } from './api.js';
import { $, errorText } from './dom.js';

/** @typedef {import('./types').Listener} Listener */
/** @typedef {import('./types').EventName} EventName */

const LIVE_WAIT_MS = 5000;
export const POLL_S = 15;
const RETRY_MS = 30000;
/** The stream's events the page listens to. @type {EventName[]} */
const STREAMED = ['discovery_update', 'device_change', 'server_status', 'storage_status', 'update_progress', 'alert'];

const live = {
  /** @type {EventSource | null} */ source: null,
  /** @type {Set<Listener>} */ listeners: new Set(),
  /** @type {ReturnType<typeof setTimeout> | undefined} */ wait: undefined,
  /** @type {ReturnType<typeof setInterval> | undefined} */ poller: undefined,
  /** @type {ReturnType<typeof setTimeout> | undefined} */ retry: undefined,
  polling: false,
};

/** @param {string} state @param {string} text */
function setConn(state, text) {
  const c = $('conn');
  c.dataset.state = state;
  c.textContent = text;
}

/** @type {Listener} */
const emit = (...event) => {
  for (const l of live.listeners) l(...event);
};

/**
 * Listens to the events (and `poll`); the answer stops listening. A listener of the name alone is
 * the second form: tsc does not take a one-parameter function for a Listener (its pairs).
 * @overload
 * @param {Listener} fn
 * @returns {() => void}
 */
/**
 * @overload
 * @param {Listener | import('./types').NameListener} fn
 * @returns {() => void}
 */
/** @param {Listener | import('./types').NameListener} fn */
export function onEvent(fn) {
  const l = /** @type {Listener} */ (fn);
  live.listeners.add(l);
  return () => {
    live.listeners.delete(l);
  };
}

export function openEvents() {
  clearTimeout(live.retry);
  const es = new EventSource(urls.events);
  live.source = es;
  if (!live.polling) setConn('connecting', 'Connecting…');
  // A stream that is being made (first attempt, or the browser's reconnection after a drop): give
  // up on a silent one; a reconnecting one is left to the browser while the page polls.
  /** @param {boolean} reconnecting */
  const waitForConnected = (reconnecting) => {
    clearTimeout(live.wait);
    live.wait = setTimeout(() => {
      if (live.source !== es) return;
      if (!reconnecting) {
        es.close();
        live.source = null;
      }
      fallBack(reconnecting ? 'reconnecting' : 'silent');
    }, LIVE_WAIT_MS);
  };
  waitForConnected(false);
  es.addEventListener('connected', () => {
    if (live.source === es) goLive();
  });
  // Sent by the box when its stream cannot pass (a central server's request that does not stream).
  es.addEventListener('unavailable', () => {
    if (live.source !== es) return;
    es.close();
    live.source = null;
    fallBack('unavailable');
  });
  es.onerror = () => {
    if (live.source !== es) return;
    if (es.readyState === EventSource.CLOSED) {
      // refused (not 200): not retried by the browser
      live.source = null;
      fallBack('refused');
      return;
    }
    if (!live.polling) setConn('connecting', 'Reconnecting…');
    waitForConnected(true);
  };
  for (const name of STREAMED) {
    es.addEventListener(name, (e) => /** @type {any} */ (emit)(name, JSON.parse(e.data)));
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

const POLL_NOTE = 'Live updates unavailable: refreshing every ' + POLL_S + ' s.';
// why: what the stream did (kept on the note for whoever looks: unavailable, refused, silent,
// reconnecting).
/** @param {string} why */
function fallBack(why) {
  clearTimeout(live.wait);
  $('live-note').dataset.why = why;
  if (!live.polling) {
    live.polling = true;
    live.poller = setInterval(poll, POLL_S * 1000);
    $('live-note').textContent = POLL_NOTE;
    $('live-note').hidden = false;
    setConn('polling', 'Refreshing');
  }
  if (!live.source) {
    clearTimeout(live.retry);
    live.retry = setTimeout(openEvents, RETRY_MS);
  }
}

// What the events would have said: the scan, the data card and the server link (all in GET
// /settings and GET /discover), and `poll` for each view to re-read its own data.
// A scan is news when it runs or changed since the last refresh (an event would not have told of
// one that ended before the page opened).
let pollBusy = false;
/** @type {string | undefined} */
let polledScan;
async function poll() {
  if (pollBusy) return;
  pollBusy = true;
  try {
    const [s, scan] = await Promise.all([get('/settings'), get('/discover')]);
    const scanKey = scan ? [scan.scan_id, scan.state, scan.scanned].join(':') : '';
    const scanNews = polledScan !== undefined && scanKey !== polledScan;
    if (scan && (scan.state === 'running' || scanNews)) emit('discovery_update', scan);
    polledScan = scanKey;
    if (s.storage) emit('storage_status', s.storage);
    if (s.server && s.server.link) emit('server_status', s.server.link);
    emit('poll', {});
    if (live.polling) $('live-note').textContent = POLL_NOTE;
  } catch (err) {
    if (live.polling) $('live-note').textContent = 'Live updates unavailable; the last refresh failed: ' + errorText(err);
  } finally {
    pollBusy = false;
  }
}
