// @ts-check
// The API client: every path the page asks the box lives here, typed by docs/openapi.yaml
// (types.d.ts), so that a path, a query, a body or a field the document does not have fails the
// build rather than the page.
// Paths are the box's own ("/devices/list"); every request goes relative to the page, so the UI
// works at the box's root and under a prefix that serves it, such as the central server's
// /api/v1/proxy/agent/<id>/ (which also gives the page a <base> at that prefix).

/** @typedef {import('./types').GetPath} GetPath */
/** @typedef {import('./types').PostPath} PostPath */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {{ field?: string, plain?: string }} [named] a refused setting (POST /settings' 400):
   *   its key and the refusal in the page's words (the Settings-Field and Settings-Problem headers)
   */
  constructor(status, message, named) {
    super(message);
    this.status = status;
    this.field = named?.field;
    this.plain = named?.plain;
  }
}

/** The refused setting a 400 names in its headers, if any. @param {Response} r */
function namedField(r) {
  const field = r.headers.get('Settings-Field') || undefined;
  const problem = r.headers.get('Settings-Problem');
  let plain;
  try {
    plain = problem ? decodeURIComponent(problem) : undefined;
  } catch {
    plain = problem || undefined;
  }
  return field ? { field, plain } : undefined;
}

/** A box path as a URL relative to the page. @param {string} boxPath */
export const onBox = (boxPath) => '.' + boxPath;

/** Where the page links or streams to (not JSON). */
export const urls = {
  events: onBox('/events'),
  backup: onBox('/backup'),
  logfile: onBox('/logfile'),
  login: onBox('/login'),
};

/**
 * @param {string} boxPath
 * @param {unknown} [body] a POST's JSON body; none: a GET
 */
async function ask(boxPath, body) {
  /** @type {RequestInit} */
  const init = body === undefined
    ? { headers: { Accept: 'application/json' } }
    : {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    };
  const path = onBox(boxPath);
  const r = await fetch(path, init);
  const text = await r.text();
  // The gate's 401 (the session ended): sign in again. A route's own 401 (a wrong current
  // password) is an answer.
  if (r.status === 401 && text.trim() === 'unauthorized') {
    location.assign(onBox('/login?return_to=' + encodeURIComponent('/' + location.hash)));
    throw new ApiError(401, 'signed out');
  }
  if (!r.ok) throw new ApiError(r.status, text.trim() || r.statusText, namedField(r));
  return text ? JSON.parse(text) : null;
}

/**
 * GET a box path's JSON; the query's undefined values are left out, the others percent-encoded
 * (a space as %20).
 * @template {GetPath} P
 * @param {P} path
 * @param {import('./types').GetQuery<P>} [query]
 * @returns {Promise<import('./types').GetAnswer<P>>}
 */
export function get(path, query) {
  const q = Object.entries(query || {}).filter(([, v]) => v !== undefined)
    .map(([k, v]) => k + '=' + encodeURIComponent(String(v)));
  return ask(q.length ? path + '?' + q.join('&') : path);
}

/**
 * POST JSON to a box path.
 * @template {PostPath} P
 * @param {P} path
 * @param {import('./types').PostBody<P>} body
 * @returns {Promise<import('./types').PostAnswer<P>>}
 */
export function post(path, body) {
  return ask(path, body);
}

/**
 * POST /restore: a backup file, as it is. `progress` is told the share of the file sent so far
 * (0 to 1; XMLHttpRequest, since fetch says nothing of an upload's progress), then the box answers
 * once the restore is done.
 * @param {File} file
 * @param {(sent: number) => void} [progress]
 * @returns {Promise<import('./types').RestoreAnswer>}
 */
export function restore(file, progress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('POST', onBox('/restore'));
    x.setRequestHeader('Accept', 'application/json');
    x.setRequestHeader('Content-Type', 'application/x-ndjson');
    if (progress) x.upload.addEventListener('progress', (e) => { if (e.lengthComputable) progress(e.loaded / e.total); });
    x.addEventListener('load', () => {
      if (x.status >= 200 && x.status < 300) resolve(JSON.parse(x.responseText));
      else reject(new ApiError(x.status, x.responseText.trim() || x.statusText));
    });
    x.addEventListener('error', () => reject(new Error('the box did not answer: nothing may have been restored; look at the printers list')));
    x.send(file);
  });
}

/** POST /api/v1/auth/logout, then the sign-in page. */
export function signOut() {
  return fetch(onBox('/api/v1/auth/logout'), { method: 'POST' }).then(() => location.assign(urls.login));
}
