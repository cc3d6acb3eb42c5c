// HTTP -> HTTPS redirect: same path and query, the HTTPS port, on a host that is the box's own.
// Runs before anything else on the HTTP listener (contract 1), and as `printbox-agent redirect`
// under systemd. The Host header is echoed only when it names the box (one of its addresses, its
// host name, that name under .local, localhost): any other Host (a forged `evil.example`) would
// make the box send its visitors to another site, so the address they reached it on is used.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ownAddresses, ownHostNames, plainAddress } from '../net/own-targets.js';

// A Host header we are willing to echo into Location: a DNS name, IPv4, or bracketed IPv6.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?|\[[0-9A-Fa-f:.]+\])$/;

function hostOf(req: IncomingMessage): string {
  const header = req.headers.host ?? '';
  const host = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.split(':')[0];
  if (host && host.length <= 253 && HOST.test(host) && namesThisBox(host)) return host;
  // No usable Host header, or one naming another host: the address the client reached us on.
  const local = req.socket.localAddress ?? '127.0.0.1';
  const v4 = local.startsWith('::ffff:') ? local.slice(7) : local;
  return v4.includes(':') ? `[${v4}]` : v4;
}

function namesThisBox(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (ownHostNames().has(h)) return true;
  if (!(h.includes(':') || /^[\d.]+$/.test(h))) return false;
  // A loopback Host sends the visitor to their own machine (a port forwarded to the box, as the
  // boot test's VM is reached): never to a third party.
  const a = plainAddress(h);
  return /^127\./.test(a) || ownAddresses().has(a);
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  if (url.startsWith('/')) return url;
  try {
    const u = new URL(url); // absolute-form request target
    return u.pathname + u.search;
  } catch {
    return '/';
  }
}

export function redirectTarget(req: IncomingMessage, httpsPort: number): string {
  const port = httpsPort === 443 ? '' : `:${httpsPort}`;
  return `https://${hostOf(req)}${port}${pathOf(req)}`;
}

export function redirectHandler(httpsPort: number) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    res.statusCode = 302;
    res.setHeader('Location', redirectTarget(req, httpsPort));
    res.setHeader('Content-Length', 0);
    res.end();
    req.resume();
  };
}
