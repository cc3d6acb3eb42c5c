// @ts-check
// What the header says besides the pages: the data card's banner and the scan line.
import { $ } from './dom.js';
import { onEvent } from './live.js';

/** @typedef {import('./types').Schemas} S */

// The data file system's state (GET /settings storage, event storage_status): a banner while it is
// not ok, since readings and changes may then not be kept.
/** @type {Record<string, string>} */
export const STORAGE_TEXT = {
  low: 'The data card is nearly full: older raw readings are being pruned.',
  full: 'The data card is full: changes cannot be saved, readings are kept in memory until there is room.',
  read_only: 'The data card is read-only: changes cannot be saved, readings are kept in memory.',
  io_error: 'The data card reports write errors: changes may not be saved.',
};

/** @param {S['StorageStatus'] | null | undefined} st */
export function showStorage(st) {
  const text = st && STORAGE_TEXT[st.state];
  $('storage').hidden = !text;
  $('storage').textContent = text ? text + (st.error ? ' (' + st.error + ')' : '') : '';
}

// The scan line under the header (event discovery_update).
/** @type {S['DiscoveryState'] | null} */
let lastScan = null;
export const latestScan = () => lastScan;

/** @param {S['DiscoveryState'] | null} d */
export function scanText(d) {
  if (!d) return '';
  if (d.state === 'running') return 'Scanning: ' + d.scanned + ' of ' + d.total + ' addresses, ' + d.found + ' found';
  if (d.state === 'failed') return 'Scan failed: ' + (d.error || 'unknown error');
  let t = 'Scan done: ' + d.found + ' found';
  if (d.found === 0 && d.total === 0) {
    t += ' (nothing was enabled to scan: turn on subnet scan or add a range in Settings)';
  } else if (d.found === 0) {
    t += ' in ' + d.total + ' addresses (check the ranges and SNMP communities in Settings)';
  }
  return t;
}

// A scan's state, from the event stream or an answer, whichever comes first: never go back to an
// older scan, or to "running" once its end has been seen.
/** @param {S['DiscoveryState'] | null} d */
export function noteScan(d) {
  if (!d) return lastScan;
  if (lastScan) {
    const older = d.scan_id < lastScan.scan_id;
    const restarted = d.scan_id === lastScan.scan_id && lastScan.state !== 'running' && d.state === 'running';
    if (older || restarted) return lastScan;
  }
  lastScan = d;
  $('status').textContent = scanText(d);
  return d;
}

/** Keeps the banner and the scan line current. */
export function watchStatus() {
  onEvent((name, d) => {
    if (name === 'discovery_update') noteScan(d);
    if (name === 'storage_status') showStorage(d);
  });
}
