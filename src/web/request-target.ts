// The request target, checked before anything routes on it. Authentication and the router must
// see the same path: tinyhttp re-matches `//x` as `/x` after its middlewares were passed over, so
// a path the router could read in more than one way is refused here, before either of them runs.

export type TargetCheck = { ok: true; url: string } | { ok: false; message: string };

// Percent-encoded '/', '\' and '.': a router or a later decode could turn them into separators or
// dot segments. NUL and other control characters have no place in a path either.
const ENCODED_SEPARATOR = /%(2f|5c|2e|00)/i;
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks a raw request target (origin-form `/path?query`, or absolute-form `https://host/path`,
 * which RFC 9112 3.2.2 says a server must accept) and returns it in origin form, or the reason it
 * is refused. Only canonical paths pass: no empty segment (`//`), no `.` or `..` segment, no
 * backslash, no encoded separator or dot, no control character.
 */
export function checkRequestTarget(raw: string | undefined): TargetCheck {
  let target = raw ?? '';
  if (!target.startsWith('/')) {
    // Absolute form: the authority is ours whatever it says (this is no proxy); keep the path.
    const authority = /^https?:\/\/[^/?#]*/i.exec(target);
    if (!authority) return { ok: false, message: 'bad request target: must start with /' };
    target = target.slice(authority[0].length);
    if (!target.startsWith('/')) target = '/' + target;
  }
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  if (path.includes('//')) return { ok: false, message: 'bad request path: empty segment (//)' };
  if (path.includes('\\')) return { ok: false, message: 'bad request path: backslash' };
  if (CONTROL.test(target)) return { ok: false, message: 'bad request target: control character' };
  // The cheap includes() first: every request passes here, and most paths have neither.
  if (path.includes('%') && ENCODED_SEPARATOR.test(path)) return { ok: false, message: 'bad request path: encoded /, \\, . or NUL' };
  if (path.includes('/.')) {
    for (const segment of path.split('/')) {
      if (segment === '.' || segment === '..') return { ok: false, message: 'bad request path: . or .. segment' };
    }
  }
  return { ok: true, url: target };
}
