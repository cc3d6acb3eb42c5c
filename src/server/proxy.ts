// The central server's HTTP requests over the WebSocket channel (server-protocol.md, "HTTP over
// the channel"), run through the agent's own request handler in process: no socket is opened.
// A private http.Server that never listens is handed one end of an in-memory duplex pair per
// request and Node's own HTTP client writes the request into the other end, so the request meets
// the same parser, request-target check, gate and routes as one from the network. The server marks
// each request it parses as coming from the channel, which gives it the proxy principal
// (contract 5.5); nothing from the network can reach that server.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { duplexPair } from 'node:stream';
import { markFromServerChannel } from '../auth/gate.js';
import type { Handler } from '../api/app.js';
import { jarCookieOnly, setsJar } from '../printer-web/cookie-jar.js';

export interface ProxyRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Why a request may not be proxied, or null. Only the box itself is a target. */
export function proxyTargetProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'url is not an absolute URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must be http:// or https://';
  if (!['localhost', '127.0.0.1', '[::1]'].includes(u.hostname)) return `target ${u.hostname} is not this agent (localhost only)`;
  return null;
}

// Hop-by-hop headers (RFC 9110 7.6.1) and what would let the server pose as someone else. Of the
// cookies (the browser's for the server's origin: the server's own session among them) only the
// printer's jar passes (printer-web/cookie-jar.ts); of the box's Set-Cookies only the jar's goes
// back: the box's session and device cookies never leave the box.
const DROPPED_REQUEST_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'host', 'content-length', 'x-service-proxy', 'x-forwarded-for', 'x-forwarded-proto',
]);
// Content-Length too: the frame carries the whole body, and the server sets its own length. It
// copies the agent's headers onto its answer, then may change the body (PrintMaster adds its log
// to a report): a stale length made it cut the answer off. The reference agent's
// frames carry no length either (its handlers' recorded headers).
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade', 'content-length']);

export function responseHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || DROPPED_RESPONSE_HEADERS.has(k)) continue;
    if (k === 'set-cookie') {
      // The frame's headers are one string each: the jar is the only cookie, and set once a response.
      const jar = (Array.isArray(v) ? v : [v]).filter(setsJar).at(-1);
      if (jar) out[k] = jar;
      continue;
    }
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export class InProcessDispatcher {
  private readonly server: http.Server;

  constructor(handler: Handler) {
    this.server = http.createServer((req, res) => {
      markFromServerChannel(req);
      handler(req, res);
    });
  }

  /**
   * Sends the request through the agent; resolves the response as a readable stream (the caller
   * reads or destroys it). `signal` aborts the request and its response.
   */
  dispatch(r: ProxyRequest, signal: AbortSignal): Promise<IncomingMessage> {
    const u = new URL(r.url);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers)) {
      const name = k.toLowerCase();
      if (DROPPED_REQUEST_HEADERS.has(name)) continue;
      if (name === 'cookie') {
        const jar = jarCookieOnly(v);
        if (jar) headers.cookie = jar;
      } else headers[k] = v;
    }
    headers.host = 'localhost';
    if (r.body.length || !['GET', 'HEAD'].includes(r.method)) headers['content-length'] = String(r.body.length);
    const [ours, theirs] = duplexPair();
    // Routes treat req.socket as a net.Socket (an event stream turns its idle timeout off); an
    // in-memory pipe has no timers or TCP options to set.
    const noop = () => theirs;
    this.server.emit('connection', Object.assign(theirs, { setTimeout: noop, setNoDelay: noop, setKeepAlive: noop }));
    return new Promise((resolve, reject) => {
      const req = http.request({ method: r.method, path: u.pathname + u.search, headers, createConnection: () => ours, signal }, resolve);
      req.on('error', reject);
      req.end(r.body);
    });
  }
}
