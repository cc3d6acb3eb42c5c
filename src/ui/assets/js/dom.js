// @ts-check
// DOM helpers and formatting. Every piece of data reaches the page through textContent or
// attributes (h()), never through innerHTML.

/**
 * An element of the page by its id: the page's own (src/ui/page.ts) or one a view made, so it is
 * there. @param {string} id @returns {HTMLElement}
 */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * An element with attributes and children. `on<event>` attributes are listeners, `text` the text,
 * `style` the inline style; undefined, null and false attributes and children are left out, true
 * is an empty attribute; arrays of children are flattened.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [attrs]
 * @param {...any} kids
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else if (k === 'style') el.style.cssText = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of kids.flat(Infinity)) {
    if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// One formatter: toLocaleString makes one a call (slow at 2,000 rows).
const INT = new Intl.NumberFormat('en-US');
/** A count with thousands separators; a string as it is. @param {number | string | null | undefined} n */
export const fmtInt = (n) =>
  n === undefined || n === null ? '' : typeof n === 'string' ? n : INT.format(Number(n));

/** A caught failure as text (an Error's message; anything else thrown, as a string). @param {unknown} err */
export const errorText = (err) => (err instanceof Error ? err.message : String(err));

/** How long ago, in words. @param {string | null | undefined} iso */
export function ago(iso) {
  if (!iso) return '';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 86400) return Math.round(s / 3600) + ' h ago';
  return Math.round(s / 86400) + ' days ago';
}

/** A time in the browser's local form. @param {string | null | undefined} iso */
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

// One formatter for the lists (a new one a row is slow at 2,000 rows): date and minutes in the
// browser's own time zone and language, never the agent's UTC text.
const LOCAL_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
/** A time as the browser's local date and time; text that is no time, as it is. @param {string | null | undefined} iso */
export function localTime(iso) {
  if (!iso) return '';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? String(iso) : LOCAL_TIME.format(t);
}
