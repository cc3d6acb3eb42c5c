// Facts about a request that authentication decisions use. Forwarding headers (X-Forwarded-For,
// X-Forwarded-Proto, X-Service-Proxy) count only when the TCP peer is a trusted proxy
// (web.auth.trusted_proxies, docs/decisions/0014-trusted-proxies.md): from any other peer they are
// ignored as if absent.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { isIP, type Socket } from 'node:net';
import { compile, proxyaddr } from '@tinyhttp/proxy-addr';
import { parse as parseCookies } from '@tinyhttp/cookie';

const LOOPBACK = compile(['127.0.0.0/8', '::1/128']);
const FORWARDING_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-service-proxy', 'forwarded', 'x-real-ip'];

function isLoopback(addr: string | undefined): boolean {
  return Boolean(addr) && LOOPBACK(addr!.trim().replace(/^\[|\]$/g, ''), 0);
}

// A connection's peer never changes, so it is judged once per connection, on the socket under a
// symbol of this module. Judged on every request, proxy-addr's check (a BlockList lookup, a trim
// and a regex) was 1.6 % of a `latest` request's CPU (docs/performance.md).
const PEER_IS_LOOPBACK = Symbol('printbox.peerIsLoopback');
type JudgedSocket = Socket & { [PEER_IS_LOOPBACK]?: boolean };

function peerIsLoopback(socket: JudgedSocket): boolean {
  const judged = socket[PEER_IS_LOOPBACK];
  if (judged !== undefined) return judged;
  const addr = socket.remoteAddress;
  // A socket already closed has no address: not loopback, and not remembered.
  if (!addr) return false;
  return (socket[PEER_IS_LOOPBACK] = isLoopback(addr));
}

type Trust = (addr: string, i: number) => boolean;

/**
 * The trust function for a CIDR list. proxy-addr refuses a /0 range, and docs/decisions/0014-trusted-proxies.md names
 * `0.0.0.0/0` and `::/0` (trust every peer, the contract's literal behaviour): those two are
 * matched by address family here, the rest by proxy-addr.
 */
export function compileTrust(cidrs: string[]): Trust {
  const everyV4 = cidrs.includes('0.0.0.0/0');
  const everyV6 = cidrs.includes('::/0');
  const rest = compile(cidrs.filter((c) => c !== '0.0.0.0/0' && c !== '::/0'));
  return (addr, i) => {
    const family = isIP(addr.startsWith('::ffff:') ? addr.slice(7) : addr);
    return (family === 4 && everyV4) || (family === 6 && everyV6) || rest(addr, i);
  };
}

const firstValue = (h: string | string[] | undefined): string | undefined =>
  (Array.isArray(h) ? h[0] : h)?.split(',')[0].trim();

export class RequestFacts {
  private readonly trusted: Trust;
  private readonly told = new WeakSet<IncomingMessage>();

  /** onIgnored hears of forwarding headers from an untrusted peer (a debug line, no more). */
  constructor(trustedProxies: string[], private readonly onIgnored: (peer: string) => void = () => {}) {
    this.trusted = compileTrust(trustedProxies);
  }

  /** The TCP peer is in web.auth.trusted_proxies. */
  peerTrusted(req: IncomingMessage): boolean {
    const peer = req.socket.remoteAddress;
    if (peer && this.trusted(peer, 0)) return true;
    if (!this.told.has(req) && FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined)) {
      this.told.add(req); // one line a request, however many headers are looked at
      this.onIgnored(peer ?? '');
    }
    return false;
  }

  /** A header that only a trusted proxy may set; undefined from anyone else. */
  private proxyHeader(req: IncomingMessage, name: string): string | undefined {
    if (req.headers[name] === undefined || !this.peerTrusted(req)) return undefined;
    return firstValue(req.headers[name]);
  }

  /** Remote address is loopback, or (from a trusted proxy) the first X-Forwarded-For value is (contract 5.4). */
  fromLoopback(req: IncomingMessage): boolean {
    return peerIsLoopback(req.socket) || isLoopback(this.proxyHeader(req, 'x-forwarded-for'));
  }

  /** X-Service-Proxy: server from a trusted peer (contract 5.5). */
  fromServiceProxy(req: IncomingMessage): boolean {
    return this.proxyHeader(req, 'x-service-proxy') === 'server';
  }

  /** TLS on this connection, or a trusted proxy that says the client used HTTPS. */
  isHttps(req: IncomingMessage): boolean {
    if ((req.socket as TLSSocket).encrypted) return true;
    return this.proxyHeader(req, 'x-forwarded-proto')?.toLowerCase() === 'https';
  }

  /** The client's address: through trusted proxies' X-Forwarded-For, else the TCP peer. */
  clientAddress(req: IncomingMessage): string {
    return proxyaddr(req, this.trusted);
  }
}

export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  try {
    return parseCookies(header, { decode: (s) => s })[name];
  } catch {
    return undefined;
  }
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
