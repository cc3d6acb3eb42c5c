// @ts-check
// The Download CSV button of a view: a plain link to the view's own endpoint with
// `format=csv` and the view's current query. The box names the file (Content-Disposition:
// printers-<date>.csv, billing-reads-<period>.csv ...); an empty `download` attribute lets that
// name stand and keeps the browser on the page. A viewer may download: GET needs no write role.
import { onBox } from './api.js';

/**
 * The file's address: `path` with `query` (undefined and '' values left out) and format=csv.
 * @template {import('./types').GetPath} P
 * @param {P} path
 * @param {import('./types').GetQuery<P>} [query]
 */
export function csvHref(path, query) {
  const q = Object.entries(query || {}).filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => k + '=' + encodeURIComponent(String(v)));
  return onBox(path) + '?' + [...q, 'format=csv'].join('&');
}

/**
 * A Download CSV link; `set(query)` points it at the view's current query.
 * @template {import('./types').GetPath} P
 * @param {string} id
 * @param {P} path
 * @param {import('./types').GetQuery<P>} [query]
 * @param {string} [label] what it downloads, for a screen reader
 */
export function csvLink(id, path, query, label) {
  const a = /** @type {HTMLAnchorElement} */ (document.createElement('a'));
  a.id = id;
  a.className = 'button csv';
  a.setAttribute('download', '');
  a.textContent = 'Download CSV';
  // The name starts with the visible text (WCAG 2.5.3: a voice user says what they see).
  if (label) a.setAttribute('aria-label', 'Download CSV of ' + label);
  /** @param {import('./types').GetQuery<P>} [q] */
  const set = (q) => {
    a.href = csvHref(path, q);
  };
  set(query);
  return { a, set };
}
