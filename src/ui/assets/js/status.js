// @ts-check
// What the header says besides the pages: the data card's banner and the scan line; and what the
// Discovered page says of discovery beyond its printers (hosts that are not printers, mDNS errors).
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
  if (d.not_printers) t += '; ' + d.not_printers + (d.not_printers === 1 ? ' other host' : ' other hosts') + ' answered';
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

/**
 * The summary of the hosts a scan heard that are not printers: the count is the scan's, the list
 * holds at most 256 of them.
 * @param {number} count @param {number} listed
 */
export function notPrintersText(count, listed) {
  const n = Math.max(count, listed);
  let t = n + (n === 1 ? ' host answered and is not a printer' : ' hosts answered and are not printers');
  if (listed < n) t += ' (the first ' + listed + ' shown)';
  return t;
}

/** A line for each mDNS interface that failed (it cannot hear or ask announcements there). @param {S['DiscoveryOverview']['mdns']} mdns */
export function mdnsWarnings(mdns) {
  return (mdns?.interfaces || []).filter((i) => i.error)
    .map((i) => 'mDNS is not working on ' + i.name + (i.address ? ' (' + i.address + ')' : '') + ': ' + i.error);
}
