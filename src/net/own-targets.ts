// Which addresses and names are the box itself, or no other host at all: loopback, unspecified,
// link-local and every address on the box's own interfaces. A request the box makes for someone
// else (a printer's page through /proxy, a webhook) must never reach one of these: there it would
// speak to the box's own services with the box's own standing (the local administrator on
// loopback) or to services bound only to the box.
import { BlockList, isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';

const NOT_ANOTHER_HOST: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified address (0.0.0.0/8), which reaches this box'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address (127.0.0.0/8)'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address (169.254.0.0/16)'],
  ['::', 128, 'ipv6', 'the unspecified address (::), which reaches this box'],
  ['::1', 128, 'ipv6', 'the loopback address (::1)'],
  ['fe80::', 10, 'ipv6', 'a link-local address (fe80::/10)'],
];
const RANGES = NOT_ANOTHER_HOST.map(([net, prefix, type, why]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, type);
  return { list, type, why };
});

/** The address without brackets, zone or IPv4-mapped prefix (`::ffff:127.0.0.1` is 127.0.0.1). */
export function plainAddress(address: string): string {
  let a = address.trim().replace(/^\[|\]$/g, '');
  const zone = a.indexOf('%');
  if (zone !== -1) a = a.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) return mapped[1];
  // The same in hex, as the URL parser writes it (`[::ffff:7f00:1]`).
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(a);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return a.toLowerCase();
}

/** Every address on the box's own interfaces (loopback included), as plainAddress gives them. */
export function ownAddresses(): Set<string> {
  const out = new Set<string>(['127.0.0.1', '::1']);
  let interfaces: ReturnType<typeof networkInterfaces> = {};
  try {
    interfaces = networkInterfaces();
  } catch {
    // No netlink (the redirect unit runs without AF_NETLINK, in a network namespace of its own):
    // the box's addresses are not known there, loopback is.
  }
  for (const list of Object.values(interfaces)) for (const a of list ?? []) out.add(plainAddress(a.address));
  return out;
}

/** The names the box answers to: its host name, that name under .local (mDNS) and localhost. */
export function ownHostNames(): Set<string> {
  const name = hostname().toLowerCase();
  return new Set([name, `${name}.local`, 'localhost']);
}

/**
 * Why `address` (an IP literal) is not another host, or undefined when it is one. `own` is the
 * box's addresses (ownAddresses(); given by tests and callers that already have them).
 */
export function notAnotherHost(address: string, own: ReadonlySet<string> = ownAddresses()): string | undefined {
  const a = plainAddress(address);
  const family = isIP(a);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const r of RANGES) if (r.type === type && r.list.check(a, type)) return r.why;
  if (own.has(a)) return 'an address of this box itself';
  return undefined;
}

/** Why the host name `name` is the box itself (localhost, *.localhost, its own names), or undefined. */
export function nameIsThisBox(name: string): string | undefined {
  const n = name.toLowerCase().replace(/\.$/, '');
  if (n === 'localhost' || n.endsWith('.localhost')) return 'localhost, which is this box';
  if (ownHostNames().has(n)) return `${n}, this box's own name`;
  return undefined;
}
