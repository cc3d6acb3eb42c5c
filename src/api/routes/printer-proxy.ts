// /proxy/{serial}/{path}: a saved printer's own web page, fetched by the box (any method) and
// served under that prefix, so that an office opens it through the central server at a site it
// cannot reach (the server's /api/v1/proxy/device/{serial}/ comes here over the channel).
// Only the record's own address and web port are contacted (printer-web/target.ts); the path is a
// path on that printer (the request-target check has already refused `..`, `//` and encoded
// separators); printer-web/upstream.ts makes the requests. A request the central server sent over
// the channel is signed in to the printer with the credentials that server keeps for it, as
// PrintMaster's agent does (printer-web/auto-login.ts); the box's own UI and API never use them:
// they are the server's, for the people the server lets open the page.
// Bounded: request body, answer size, time.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendText, sendTextAndClose } from '../respond.js';
import { printerWebTarget, type PrinterWebTarget } from '../../printer-web/target.js';
import { rewritable, rewriteBody, rewriteLocation } from '../../printer-web/rewrite.js';
import { applySetCookies, jarSetCookie, mergeJars, printerCookieHeader, readJar } from '../../printer-web/cookie-jar.js';
import { printerRequest, readBounded } from '../../printer-web/upstream.js';
import { AutoLogin, asksForPassword, type PrinterAuth } from '../../printer-web/auto-login.js';
import { ownAddresses } from '../../net/own-targets.js';
import { fromServerChannel } from '../../auth/gate.js';
import { errorText } from '../../shared/error-text.js';

export const PRINTER_PROXY_LIMITS = {
  requestBytes: 1024 * 1024,
  /** The channel answers at most 8 MiB; a page is far smaller. */
  responseBytes: 8 * 1024 * 1024,
  /** Until the printer's whole answer is in (the channel's own bound is 30 s). */
  totalMs: 25_000,
};

// Hop-by-hop headers (RFC 9110 7.6.1) and what speaks for the box or its caller, never the printer's business.
const DROPPED_REQUEST = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'host', 'content-length', 'accept-encoding', 'expect', 'x-service-proxy', 'x-forwarded-for', 'x-forwarded-proto',
  'x-forwarded-host', 'forwarded', 'x-real-ip', 'x-printmaster-user', 'x-printmaster-role', 'cookie', 'origin', 'referer',
]);
// The printer's response headers the browser gets: those a page needs to show, cache, download
// and sign in (Basic/Digest) and nothing else. Whatever else a printer says is its business, not
// the box's origin's: Clear-Site-Data would delete the box's cookies, HSTS, Alt-Svc, NEL and
// Report-To would bind the box's whole host name, CSP and X-Frame-Options are replaced below.
// Content-Length is set by the box; Location and Set-Cookie are rewritten (below).
const FORWARDED_RESPONSE = new Set([
  'content-type', 'content-encoding', 'content-language', 'content-disposition', 'content-range', 'accept-ranges',
  'cache-control', 'expires', 'pragma', 'etag', 'last-modified', 'vary', 'date', 'allow', 'retry-after', 'www-authenticate',
]);

/**
 * The printer's page runs its own scripts; under the box's origin they could call the box's API
 * with the technician's session. A sandbox gives the page an opaque origin instead. (The central
 * server replaces this header with its own policy: there the page runs under the server's origin.)
 */
const SANDBOX = 'sandbox allow-forms allow-scripts allow-popups allow-modals allow-downloads';

export function register(app: App, ctx: AgentContext): void {
  const logins = new AutoLogin({
    credentials: async (serial, signal) => ctx.serverLink?.deviceCredentials?.(serial, signal),
    now: () => ctx.now(),
    onSignIn: (serial, outcome) =>
      outcome.ok
        ? ctx.log.info({ serial, cookies: outcome.cookies }, 'signed in to the printer\'s web page with the server\'s credentials')
        : ctx.log.warn({ serial, err: outcome.error }, 'sign-in to the printer\'s web page with the server\'s credentials failed'),
  });
  const handler = (req: IncomingMessage, res: ServerResponse) => void proxy(ctx, logins, req, res);
  app.all('/proxy/:serial', handler);
  app.all('/proxy/:serial/*', handler);
}

async function proxy(ctx: AgentContext, logins: AutoLogin, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const query = q === -1 ? '' : raw.slice(q);
  const m = /^\/proxy\/([^/]+)(\/.*)?$/i.exec(path);
  if (!m) return sendText(res, 400, 'proxy path must be /proxy/{serial}/{path on the printer}');
  let serial: string;
  try {
    serial = decodeURIComponent(m[1]);
  } catch {
    return sendText(res, 400, 'serial in the proxy path is not valid percent-encoding');
  }
  const prefix = `/proxy/${m[1]}`;
  if (m[2] === undefined) {
    // Relative links on the printer's page resolve against a directory: /proxy/S is /proxy/S/.
    res.statusCode = 301;
    res.setHeader('Location', `${prefix}/${query}`);
    return void res.end();
  }
  const device = ctx.devices.get(serial);
  if (!device) return sendText(res, 404, `no device with serial ${JSON.stringify(serial)}`);
  const found = printerWebTarget(device, {
    allowedRanges: ctx.settings.get().discovery.allowed_ranges,
    ownAddresses: ownAddresses(),
  });
  if (!found.ok) return sendText(res, found.status, found.message);
  const target = found.target;
  const upstreamPath = m[2] + query;

  const body = await readRequest(req);
  // The client may still be sending: close without a reset, so that it reads the 413.
  if (body === 'too large') return sendTextAndClose(req, res, 413, `request body over ${PRINTER_PROXY_LIMITS.requestBytes} bytes`);
  if (body === undefined) return; // the client went away

  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || DROPPED_REQUEST.has(k)) continue;
    headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), PRINTER_PROXY_LIMITS.totalMs);
  res.on('close', () => abort.abort());
  const viaServer = fromServerChannel(req);
  const auth: PrinterAuth = viaServer ? await logins.forRequest(serial, device.manufacturer, target, upstreamPath, abort.signal) : { cookies: [] };
  if (auth.authorization) headers.authorization = auth.authorization;
  // The printer's own cookies, from the jar the browser keeps for it (and a sign-in's); no cookie of the box's.
  const now = ctx.now();
  const jar = readJar(req.headers.cookie, now);
  const cookie = printerCookieHeader(mergeJars(jar, auth.cookies));
  if (cookie) headers.cookie = cookie;
  // Vendor pages check these against their own address (CSRF guards).
  if (req.headers.origin) headers.origin = target.origin;
  const referer = refererOnPrinter(req.headers.referer, prefix, target);
  if (referer) headers.referer = referer;
  headers.host = target.origin.replace(/^https?:\/\//, '');
  headers['accept-encoding'] = 'identity'; // bodies are rewritten as text
  if (body.length || !['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? 'GET')) headers['content-length'] = String(body.length);

  let upstream: IncomingMessage;
  try {
    upstream = await printerRequest(target, req.method ?? 'GET', upstreamPath, headers, body, abort.signal);
  } catch (err) {
    clearTimeout(timer);
    const why = abort.signal.aborted ? `no answer within ${PRINTER_PROXY_LIMITS.totalMs} ms` : errorText(err);
    if (!res.headersSent && !res.destroyed) sendText(res, 502, `printer ${JSON.stringify(serial)} at ${target.origin}: ${why}`);
    return;
  }
  // Through the server, the browser's connection is the server's: HTTPS when the server's URL is.
  const secure = viaServer ? ctx.settings.get().server.url.startsWith('https:') : ctx.facts.isHttps(req);
  res.statusCode = upstream.statusCode ?? 502;
  for (const [k, v] of Object.entries(upstream.headers)) {
    if (v === undefined || !FORWARDED_RESPONSE.has(k)) continue;
    res.setHeader(k, v);
  }
  const location = upstream.headers.location;
  if (location) res.setHeader('Location', rewriteLocation(location, prefix, target.origin, m[2]));
  const setCookies = upstream.headers['set-cookie'] ?? [];
  if (auth.cookies.length) logins.renewed(serial, setCookies);
  if (setCookies.length) {
    const update = applySetCookies(jar, setCookies, now);
    if (update.refused) ctx.log.debug({ serial, refused: update.refused }, 'printer cookies over the jar\'s limits refused');
    res.setHeader('Set-Cookie', jarSetCookie(update.jar, `${prefix}/`, secure));
  }
  res.setHeader('Content-Security-Policy', SANDBOX);
  res.setHeader('X-Content-Type-Options', 'nosniff');

  const kind = rewritable(upstream.headers['content-type']);
  const encoded = (upstream.headers['content-encoding'] ?? 'identity') !== 'identity';
  if (kind && !encoded) {
    const text = await readAll(upstream, abort.signal);
    clearTimeout(timer);
    if (text === 'too large' || text === undefined) {
      if (!res.headersSent && !res.destroyed) {
        for (const h of res.getHeaderNames()) res.removeHeader(h);
        sendText(res, 502, text === 'too large' ? `the printer's answer is over ${PRINTER_PROXY_LIMITS.responseBytes} bytes` : `the printer's answer did not complete within ${PRINTER_PROXY_LIMITS.totalMs} ms`);
      }
      return;
    }
    const page = text.toString('utf8');
    if (auth.cookies.length && kind === 'html' && asksForPassword(page)) logins.signedOut(serial);
    const out = Buffer.from(rewriteBody(page, kind, prefix, target.origin, m[2]), 'utf8');
    res.setHeader('Content-Length', out.length);
    res.end(out);
    return;
  }
  // Anything else passes through as it comes, within the same bounds.
  const announced = Number(upstream.headers['content-length']);
  if (Number.isFinite(announced)) res.setHeader('Content-Length', announced);
  let size = 0;
  upstream.on('data', (c: Buffer) => {
    size += c.length;
    if (size > PRINTER_PROXY_LIMITS.responseBytes) {
      abort.abort();
      res.destroy();
      return;
    }
    res.write(c);
  });
  upstream.on('end', () => {
    clearTimeout(timer);
    res.end();
  });
  upstream.on('error', () => {
    clearTimeout(timer);
    res.destroy();
  });
}

function refererOnPrinter(referer: string | undefined, prefix: string, t: PrinterWebTarget): string | undefined {
  if (!referer) return undefined;
  try {
    const u = new URL(referer);
    if (!u.pathname.startsWith(prefix + '/')) return undefined;
    return t.origin + u.pathname.slice(prefix.length) + u.search;
  } catch {
    return undefined;
  }
}

function readRequest(req: IncomingMessage): Promise<Buffer | 'too large' | undefined> {
  return readBounded(req, PRINTER_PROXY_LIMITS.requestBytes);
}

function readAll(res: IncomingMessage, signal: AbortSignal): Promise<Buffer | 'too large' | undefined> {
  return signal.aborted ? Promise.resolve(undefined) : readBounded(res, PRINTER_PROXY_LIMITS.responseBytes);
}
