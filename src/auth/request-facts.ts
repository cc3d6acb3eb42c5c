// Facts about a request that authentication decisions use.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { isIP } from 'node:net';

export function isLoopback(addr: string | undefined): boolean {
  if (!addr) return false;
  const a = addr.trim().replace(/^\[|\]$/g, '');
  if (a === '::1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** Remote address is loopback, or the first X-Forwarded-For value is (contract 5.4). */
export function fromLoopback(req: IncomingMessage): boolean {
  if (isLoopback(req.socket.remoteAddress)) return true;
  const xff = req.headers['x-forwarded-for'];
  const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0];
  return isLoopback(first);
}

/** TLS on this connection, or a proxy that says the client used HTTPS. */
export function isHttps(req: IncomingMessage): boolean {
  if ((req.socket as TLSSocket).encrypted) return true;
  const proto = req.headers['x-forwarded-proto'];
  return (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0].trim().toLowerCase() === 'https';
}

export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function acceptsHtml(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').includes('text/html');
}

/** A return_to that stays on this agent: a local path, not `//host` or `/\host`. */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return '/';
  if (/[\u0000-\u001f\u007f]/.test(value)) return '/';
  return value;
}
