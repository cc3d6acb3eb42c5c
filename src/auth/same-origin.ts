// Cross-site request forgery: a page on another site must not make a signed-in technician's
// browser change anything on the box. The session cookie is SameSite=Lax, which keeps it off
// cross-site POSTs, but "site" is the host without its port: another service on the box's own
// address (or a page on another port of it) is the same site. So a state-changing request that
// carries a browser's Origin (or Sec-Fetch-Site) must come from this very origin: scheme, host and
// port as the browser reached the box. Clients that are not browsers send neither header and are
// not affected; their credential is the question the auth gate already answered.
import type { IncomingMessage } from 'node:http';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Why the request is refused as cross-origin, or undefined when it may go on. `relayedBy` is the
 * central server's URL for a request the server relayed over the box's channel: the browser's page
 * is then on the server (the box's UI under its proxy prefix), so "this origin" is the server's,
 * whichever address the browser knows it by when its Sec-Fetch-Site says same-origin.
 */
export function crossOriginProblem(req: IncomingMessage, scheme: 'https' | 'http', relayedBy?: string): string | undefined {
  if (SAFE_METHODS.has(req.method ?? 'GET')) return undefined;
  const fetchSite = req.headers['sec-fetch-site'];
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') return `cross-origin request refused: Sec-Fetch-Site is ${fetchSite}`;
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  if (relayedBy !== undefined && fetchSite === 'same-origin') return undefined;
  const here = relayedBy ?? `${scheme}://${req.headers.host ?? ''}`;
  // URL drops a default port (443, 80) from both sides; an unparsable Origin or Host never matches.
  if (originOf(origin) !== undefined && originOf(origin) === originOf(here)) return undefined;
  return `cross-origin request refused: Origin ${JSON.stringify(origin)} is not ${relayedBy === undefined ? 'this box' : 'the central server'} (${here})`;
}

function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.host ? `${u.protocol}//${u.host}` : undefined;
  } catch {
    return undefined;
  }
}
