// /proxy/{serial}/{path}: a saved printer's own web page, fetched by the box (any method) and
// served under that prefix, so that an office opens it through the central server at a site it
// cannot reach (the server's /api/v1/proxy/device/{serial}/ comes here over the channel).
// Only the record's own address and web port are contacted (printer-web/target.ts); the path is a
// path on that printer (the request-target check has already refused `..`, `//` and encoded
// separators). The printer's self-signed certificate is accepted here and nowhere else.
// Bounded: request body, answer size, time.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { App } from '@tinyhttp/app';
import type { AgentContext } from '../context.js';
import { sendText, sendTextAndClose } from '../respond.js';
import { printerWebTarget, type PrinterWebTarget } from '../../printer-web/target.js';
import { rewritable, rewriteBody, rewriteLocation } from '../../printer-web/rewrite.js';
import { applySetCookies, jarSetCookie, printerCookieHeader, readJar } from '../../printer-web/cookie-jar.js';
import { ownAddresses } from '../../net/own-targets.js';

export const PRINTER_PROXY_LIMITS = {
  requestBytes: 1024 * 1024,
  /** The channel answers at most 8 MiB; a page is far smaller. */
  responseBytes: 8 * 1024 * 1024,
  connectMs: 10_000,
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
  const handler = (req: IncomingMessage, res: ServerResponse) => void proxy(ctx, req, res);
  app.all('/proxy/:serial', handler);
  app.all('/proxy/:serial/*', handler);
}

async function proxy(ctx: AgentContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
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

  const body = await readBounded(req);
  // The client may still be sending: close without a reset, so that it reads the 413.
  if (body === 'too large') return sendTextAndClose(req, res, 413, `request body over ${PRINTER_PROXY_LIMITS.requestBytes} bytes`);
  if (body === undefined) return; // the client went away

  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || DROPPED_REQUEST.has(k)) continue;
    headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  // The printer's own cookies, from the jar the box keeps for it; no cookie of the box's.
  const now = ctx.now();
  const jar = readJar(req.headers.cookie, now);
  const cookie = printerCookieHeader(jar);
  if (cookie) headers.cookie = cookie;
  // Vendor pages check these against their own address (CSRF guards).
  if (req.headers.origin) headers.origin = target.origin;
  const referer = refererOnPrinter(req.headers.referer, prefix, target);
  if (referer) headers.referer = referer;
  headers.host = target.origin.replace(/^https?:\/\//, '');
  headers['accept-encoding'] = 'identity'; // bodies are rewritten as text
  if (body.length || !['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? 'GET')) headers['content-length'] = String(body.length);

  let upstream: IncomingMessage;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), PRINTER_PROXY_LIMITS.totalMs);
  res.on('close', () => abort.abort());
  try {
    upstream = await send(target, req.method ?? 'GET', upstreamPath, headers, body, abort.signal);
  } catch (err) {
    clearTimeout(timer);
    const why = abort.signal.aborted ? `no answer within ${PRINTER_PROXY_LIMITS.totalMs} ms` : (err as Error).message;
    if (!res.headersSent && !res.destroyed) sendText(res, 502, `printer ${JSON.stringify(serial)} at ${target.origin}: ${why}`);
    return;
  }
  const secure = ctx.facts.isHttps(req);
  res.statusCode = upstream.statusCode ?? 502;
  for (const [k, v] of Object.entries(upstream.headers)) {
    if (v === undefined || !FORWARDED_RESPONSE.has(k)) continue;
    res.setHeader(k, v);
  }
  const location = upstream.headers.location;
  if (location) res.setHeader('Location', rewriteLocation(location, prefix, target.origin, m[2]));
  const setCookies = upstream.headers['set-cookie'] ?? [];
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
    const out = Buffer.from(rewriteBody(text.toString('utf8'), kind, prefix, target.origin, m[2]), 'utf8');
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

function send(t: PrinterWebTarget, method: string, path: string, headers: Record<string, string>, body: Buffer, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const options = { host: t.host, port: t.port, method, path, headers, signal, agent: false as const };
    // Printers serve self-signed certificates; this request goes to the saved printer's own address only.
    const req = t.scheme === 'https' ? https.request({ ...options, rejectUnauthorized: false }, resolve) : http.request(options, resolve);
    // The connection alone (an address where nothing answers); the whole answer is bounded by `signal`.
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => req.destroy(new Error(`no connection within ${PRINTER_PROXY_LIMITS.connectMs} ms`)), PRINTER_PROXY_LIMITS.connectMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.on('error', reject);
    req.end(body);
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

function readBounded(req: IncomingMessage): Promise<Buffer | 'too large' | undefined> {
  return collect(req, PRINTER_PROXY_LIMITS.requestBytes);
}

function readAll(res: IncomingMessage, signal: AbortSignal): Promise<Buffer | 'too large' | undefined> {
  return signal.aborted ? Promise.resolve(undefined) : collect(res, PRINTER_PROXY_LIMITS.responseBytes);
}

function collect(stream: IncomingMessage, limit: number): Promise<Buffer | 'too large' | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: Buffer | 'too large' | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
    };
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        stream.pause();
        finish('too large');
      } else chunks.push(c);
    });
    stream.on('end', () => finish(Buffer.concat(chunks)));
    stream.on('error', () => finish(undefined));
    stream.on('close', () => finish(stream.complete ? Buffer.concat(chunks) : undefined));
  });
}
