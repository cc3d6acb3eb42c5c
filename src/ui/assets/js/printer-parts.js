// @ts-check
// What the printer pages share: counters, supply bars and forecasts, status badges, whether a
// printer answers, how it was found, and its web page's link.
import { onBox } from './api.js';
import { fmtInt, h, localTime } from './dom.js';

/** @typedef {import('./types').Schemas} S */
/** @typedef {{ page_count?: number, mono_pages?: number, color_pages?: number, mono_impressions?: number,
 *   color_impressions?: number, total_mono_impressions?: number }} Counters */

/**
 * The total meter: page_count, else mono + colour (some printers report only those two).
 * @param {Counters | null | undefined} m
 */
export function meters(m) {
  if (!m) return { total: undefined, mono: undefined, colour: undefined };
  const mono = m.mono_pages ?? m.mono_impressions ?? m.total_mono_impressions;
  const colour = m.color_pages ?? m.color_impressions;
  let total = m.page_count;
  if (!total && (mono || colour)) total = (mono || 0) + (colour || 0);
  return { total, mono, colour };
}

/** @type {Record<string, string>} */
const SUPPLY_COLOURS = {
  black: '#222', cyan: '#0aa5c9', magenta: '#c2187a', yellow: '#e1b400', photo_black: '#444', matte_black: '#333',
  light_cyan: '#6fd3ef', light_magenta: '#ef7fc0', waste: '#8d6e63', drum: '#7e57c2', fuser: '#d35400',
};
/** @param {string} k */
export const supplyColour = (k) => SUPPLY_COLOURS[k] || SUPPLY_COLOURS[String(k).split(/[_ ]/).pop() ?? ''] || '#5a6470';
const LOW = 15;

/**
 * A supply's forecast (GET /api/devices/forecast) as a short text and its explanation.
 * @param {S['SupplyForecasts']['supplies'][number] | null | undefined} f
 */
export function daysText(f) {
  if (!f || f.days_to_empty === null) {
    return { text: '–', title: f && f.reason ? 'No forecast: ' + f.reason : 'No forecast' };
  }
  const d = f.days_to_empty;
  const empty = d === 0 && f.level === 0;
  const text = empty ? 'empty' : d < 1 ? '< 1 d' : '~' + Math.round(d) + ' d';
  const pages = f.pages_to_empty !== null ? ', about ' + fmtInt(f.pages_to_empty) + ' pages' : '';
  const confidence = f.confidence !== null ? ' (confidence ' + Math.round(f.confidence * 100) + '%)' : '';
  return { text, title: (empty ? 'Empty since ' : 'Empty about ') + f.empty_on + pages + confidence };
}

/** A reading's level for a supply the printer reports as "some remaining" (Printer-MIB -3). */
const SOME_REMAINING = -3;

/**
 * The category counters a snapshot carries (docs/api.md, "Counters"), in this order, with their
 * names in plain words. A counter the printer does not report is not in the snapshot: no row.
 * @type {[keyof S['MetricsSnapshot'], string][]}
 */
const CATEGORY_COUNTERS = [
  ['print_pages', 'Printed'], ['print_mono_pages', 'Printed, mono'], ['print_color_pages', 'Printed, colour'],
  ['copy_pages', 'Copied'], ['copy_mono_pages', 'Copied, mono'], ['copy_color_pages', 'Copied, colour'],
  ['fax_pages', 'Fax pages printed'], ['full_color_pages', 'Full colour'], ['single_color_pages', 'Single colour'],
  ['two_color_pages', 'Two colour'], ['duplex_pages', 'Duplex pages'], ['duplex_sheets', 'Duplex sheets'],
  ['large_format_pages', 'Large format (A3/Ledger)'], ['scan_count', 'Scans'], ['copy_scans', 'Scans for copies'],
  ['fax_scans', 'Scans for faxes'], ['other_pages', 'Other pages'],
];

/**
 * [label, value] of each category counter in the snapshot.
 * @param {S['MetricsSnapshot'] | null | undefined} snap
 * @returns {[string, number][]}
 */
export function categoryCounters(snap) {
  if (!snap) return [];
  return CATEGORY_COUNTERS.flatMap(([k, label]) => (typeof snap[k] === 'number' ? [[label, /** @type {number} */ (snap[k])]] : []));
}

/**
 * The supply levels as bars, with the days to empty when the forecast is given, and each
 * supply's part number beside its name where the printer reports one.
 * @param {Record<string, unknown> | null | undefined} levels
 * @param {S['SupplyForecasts']} [forecast]
 * @param {Record<string, string> | null} [partNumbers]
 */
export function supplyBars(levels, forecast, partNumbers) {
  const numeric = Object.entries(levels || {}).filter(([, v]) => typeof v === 'number' && (v >= 0 || v === SOME_REMAINING));
  const entries = /** @type {[string, number][]} */ (numeric);
  if (!entries.length) return h('span', { class: 'muted', text: 'no supply levels' });
  return h('div', {}, entries.map(([k, v]) => {
    // The printer says only that some is left (Printer-MIB -3): no bar, no figure of the box's.
    if (v === SOME_REMAINING) {
      return h('div', { class: 'supply' }, h('span', { class: 'name', title: k, text: k.replace(/_/g, ' ') }),
        h('span', { class: 'pct', title: 'the printer reports only that some is left', text: 'some left' }));
    }
    const pct = Math.max(0, Math.min(100, v));
    const low = pct <= LOW;
    const days = forecast ? daysText(forecast.supplies.find((f) => f.name === k)) : null;
    return h('div', { class: 'supply' + (low ? ' low' : '') },
      h('span', { class: 'name', title: k, text: k.replace(/_/g, ' ') }),
      h('span', { class: 'bar', role: 'img', 'aria-label': k + ' ' + pct + '%' + (low ? ', low' : '') },
        h('i', { style: 'width:' + pct + '%;background:' + supplyColour(k) }),
        h('b', { title: 'low mark ' + LOW + '%' })),
      h('span', { class: 'pct', text: pct + '%' + (low ? ' low' : '') }),
      days ? h('span', { class: 'days', 'data-supply': k, ...days }) : null,
      partNumbers && partNumbers[k] ? h('span', { class: 'part', 'data-supply': k, title: 'Part number', text: partNumbers[k] }) : null);
  }));
}

/** @param {{ status_messages?: string[], toner_alerts?: string[] }} info */
export function statusBadges(info) {
  /** @type {Node[]} */
  const out = [];
  const seen = new Set();
  let trouble = false;
  for (const m of [...(info.status_messages || []), ...(info.toner_alerts || [])]) {
    // A printer that did not answer: said with the local time, never beside an "OK".
    const silent = NOT_ANSWERING.exec(m);
    const text = silent ? 'Not answering since ' + localTime(silent[1]) : m.trim();
    // The same line from the status and the supply alerts ("Ink is low." twice) is shown once.
    const key = text.toLowerCase().replace(/[.\s]+$/, '').replace(/\s+/g, ' ');
    if (!key || seen.has(key)) continue;
    seen.add(key);
    const normal = !silent && NORMAL_STATE.test(text);
    if (!normal) trouble = true;
    out.push(h('span', { class: normal ? 'badge' : 'badge bad', text, title: silent && m.indexOf(': ') > 0 ? m.slice(m.indexOf(': ') + 2) : undefined }));
  }
  if (!trouble) out.unshift(h('span', { class: 'badge ok', text: 'OK' }));
  return out;
}
// merge.ts's line for a printer that did not answer a poll: "not answering since <RFC 3339>: <why>".
const NOT_ANSWERING = /^not answering since (\S+?):? /;
// A printer's normal states, said by its own status (hrDeviceStatus, IPP printer-state, PJL): shown
// plain, not as trouble.
const NORMAL_STATE = /^(idle|ready|online|sleep(ing)?|sleep mode|standby|energy sav(er|ing)( mode)?|power sav(er|ing)( mode)?|warming up|printing|processing|running)\.?$/i;

// How a printer was found, in plain words (PrinterInfo.discovery_methods; an unknown method as
// written), and what answered (detection_reasons, their method prefix in the same words).
/** @type {Record<string, string>} */
const METHOD_WORDS = {
  subnet_scan: 'SNMP scan (subnet)', manual_range: 'SNMP scan (range)', snmp: 'SNMP', mdns: 'mDNS', ipp: 'IPP',
  ipps: 'IPP', wsd: 'WS-Discovery', ws_discovery: 'WS-Discovery', ssdp: 'SSDP', llmnr: 'LLMNR',
  port_probe: 'port probe', tcp_probe: 'port probe', usb: 'USB', import: 'imported',
};
/** @param {unknown} m */
const methodWord = (m) => METHOD_WORDS[String(m).toLowerCase().replace(/-/g, '_')];
/** Methods as the agent joins them ("mdns, port_probe"), in plain words. @param {string | null | undefined} list */
export const methodsText = (list) =>
  [...new Set(String(list || '').split(/,\s*/).filter(Boolean).map((m) => methodWord(m) || m))].join(', ');

/**
 * @typedef {{ device_type?: string, is_usb?: boolean, discovery_methods?: string[], learned_oids?: object,
 *   detection_reasons?: string[] }} HowFound
 */
/** @param {HowFound} p */
export function foundBy(p) {
  const out = [];
  if (p.device_type === 'usb' || p.is_usb) out.push('USB');
  for (const m of p.discovery_methods || []) out.push(methodWord(m) || String(m));
  if (!out.length) out.push(p.learned_oids && Object.keys(p.learned_oids).length ? 'SNMP scan' : 'imported');
  return [...new Set(out)].join(', ');
}
/** @param {HowFound} p */
export function detection(p) {
  return [...new Set((p.detection_reasons || []).map((r) => {
    const m = /^([A-Za-z_-]+):\s*(.*)$/.exec(String(r));
    return m && methodWord(m[1]) ? methodWord(m[1]) + ': ' + m[2] : String(r);
  }))].join('; ');
}

// Whether a listed printer answers, from the record's own fields and status lines (src/discovery:
// merge.ts "not answering since <time>: <why>", announced.ts "offline: said goodbye on <method>" and
// "offline: no longer announced on <method> (...)"). `warn` is false for the normal state.
/** @typedef {{ last_seen?: string, not_answering_since?: string, status_messages?: string[] }} Liveness */
const GOODBYE = /^offline: said goodbye on (\S+)/;
const EXPIRED = /^offline: no longer announced on (\S+)/;
/** @param {Liveness} p @returns {{ state: string, text: string, detail: string, warn: boolean }} */
export function liveness(p) {
  const lines = p.status_messages || [];
  const seen = p.last_seen ? 'last seen ' + localTime(p.last_seen) : '';
  if (p.not_answering_since) {
    const line = lines.find((m) => m.startsWith('not answering since '));
    const why = line && line.indexOf(': ') > 0 ? line.slice(line.indexOf(': ') + 2) : '';
    return { state: 'not-answering', text: 'Not answering since ' + localTime(p.not_answering_since), detail: why, warn: true };
  }
  for (const m of lines) {
    const bye = GOODBYE.exec(m);
    if (bye) return { state: 'said-goodbye', text: 'Said goodbye', detail: ['on ' + bye[1], seen].filter(Boolean).join(', '), warn: true };
    const gone = EXPIRED.exec(m);
    if (gone) {
      return { state: 'no-longer-announced', text: 'No longer announced', detail: ['on ' + gone[1] + ', its announcement expired unanswered', seen].filter(Boolean).join('; '), warn: true };
    }
  }
  return { state: 'answering', text: 'Answering', detail: seen, warn: false };
}

// The printer's web page comes from the LAN (printer-more-info, an mDNS adminurl): only an http or
// https URL becomes a link, opened in a new tab that gets neither this page nor its address;
// anything else is shown as text.
/** @param {string | null | undefined} url */
export function webLink(url) {
  if (!url) return null;
  let u = null;
  try {
    u = new URL(String(url));
  } catch {
    u = null;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return h('span', { class: 'web-ui', text: String(url) });
  return h('a', { class: 'web-ui', href: u.href, target: '_blank', rel: 'noopener noreferrer', text: String(url) });
}

/**
 * A saved network printer's own web page, through the box (`/proxy/{serial}/`): it works wherever
 * the box's UI does (through the central server's proxy too), signs the technician in nowhere else,
 * and the page runs under the box's sandbox (docs/ui.md, "A printer's web page").
 * @param {string} serial
 * @param {string} [label] for the screen reader: the printer's name
 */
export function webPageLink(serial, label) {
  return h('a', {
    class: 'button web-page', href: onBox('/proxy/' + encodeURIComponent(serial) + '/'), target: '_blank', rel: 'noopener noreferrer',
    text: 'Web page', 'aria-label': 'Web page of ' + (label || serial) + ' (opens a new tab)',
  });
}

/**
 * Whether a printer has a web page the box can show: not USB, and a web UI URL or port 80 or 443
 * open (the same rule as GET /api/printers' `web_page`).
 * @param {{ is_usb?: boolean, web_ui_url?: string | null, open_ports?: number[] }} p
 */
export const hasWebPage = (p) => !p.is_usb && (Boolean(p.web_ui_url) || (p.open_ports || []).some((x) => x === 80 || x === 443));
