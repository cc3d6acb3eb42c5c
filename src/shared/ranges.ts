// IPv4 target lists: the `ranges_text` setting, the allowed-ranges guard, and the box's own subnets.
//
// ranges_text syntax (docs/decisions/0012-settings.md): one entry a line; blank lines and `#`
// comments skipped; CIDR `a.b.c.d/n`, range `a.b.c.d-e.f.g.h`, shorthand `a.b.c.d-N` (last octet),
// `a.b.c.*`, or a single address. IPv4 only. The whole expansion is capped (4096 addresses); going
// past the cap is an error naming the line.
import os from 'node:os';
import { errorText } from '../shared/error-text.js';

export const MAX_RANGE_ADDRESSES = 4096;

/** A ranges_text (or CIDR list) problem. `line` is 1-based, 0 when not tied to a line. */
export class RangeParseError extends Error {
  readonly line: number;
  constructor(message: string, line = 0) {
    super(line > 0 ? `line ${line}: ${message}` : message);
    this.name = 'RangeParseError';
    this.line = line;
  }
}

/** Parses a dotted-quad IPv4 address to an unsigned 32-bit number; null when it is not one. */
export function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    // Decimal only: a leading zero is refused (inet_aton would read it as octal).
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const v = Number(p);
    if (v > 255) return null;
    n = n * 256 + v;
  }
  return n;
}

export function formatIPv4(n: number): string {
  return [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export interface Cidr {
  /** Network address (host bits cleared), unsigned. */
  network: number;
  prefix: number;
}

function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** Parses `a.b.c.d/n` (a bare address counts as /32). Host bits are allowed and cleared. */
export function parseCidr(text: string): Cidr | null {
  const t = text.trim();
  const slash = t.indexOf('/');
  const addr = parseIPv4(slash < 0 ? t : t.slice(0, slash));
  if (addr === null) return null;
  let prefix = 32;
  if (slash >= 0) {
    const p = t.slice(slash + 1);
    if (!/^(0|[1-9][0-9]?)$/.test(p)) return null;
    prefix = Number(p);
    if (prefix > 32) return null;
  }
  return { network: (addr & maskOf(prefix)) >>> 0, prefix };
}

/** Validates a CIDR list (e.g. `discovery.allowed_ranges`); returns an error message or null. */
export function validateCidrList(cidrs: readonly unknown[]): string | null {
  for (const [i, c] of cidrs.entries()) {
    if (typeof c !== 'string' || parseCidr(c) === null) {
      return `entry ${i + 1} (${JSON.stringify(c)}) is not an IPv4 CIDR like 127.0.0.0/8`;
    }
  }
  return null;
}

function cidrContains(c: Cidr, ip: number): boolean {
  return ((ip & maskOf(c.prefix)) >>> 0) === c.network;
}

/**
 * True when `ip` may be contacted under `cidrs`: an empty list means no restriction. Anything that
 * is not an IPv4 dotted quad is refused when a restriction is set, and so is an unparsable CIDR
 * entry (it matches nothing): the guard fails closed.
 */
export function inAllowedRanges(ip: string, cidrs: readonly string[] | undefined): boolean {
  if (!cidrs || cidrs.length === 0) return true;
  const n = parseIPv4(ip);
  if (n === null) return false;
  for (const text of cidrs) {
    const c = parseCidr(text);
    if (c && cidrContains(c, n)) return true;
  }
  return false;
}

/** Host addresses of a CIDR: network and broadcast excluded for prefixes up to /30. */
function cidrHostRange(c: Cidr): [number, number] {
  const size = 2 ** (32 - c.prefix);
  const first = c.network;
  const last = c.network + size - 1;
  if (c.prefix <= 30) return [first + 1, last - 1];
  return [first, last];
}

/** One ranges_text entry to an inclusive [first, last] address range; throws a message string. */
function parseEntry(entry: string): [number, number] {
  if (entry.includes('/')) {
    const c = parseCidr(entry);
    if (!c) throw `"${entry}" is not a valid CIDR (a.b.c.d/n, n from 0 to 32)`;
    return cidrHostRange(c);
  }
  if (entry.endsWith('.*')) {
    const base = parseIPv4(entry.slice(0, -2) + '.0');
    if (base === null || entry.split('.').length !== 4) throw `"${entry}" is not a valid a.b.c.* range`;
    return [base + 1, base + 254];
  }
  const dash = entry.indexOf('-');
  if (dash >= 0) {
    const left = entry.slice(0, dash).trim();
    const right = entry.slice(dash + 1).trim();
    const start = parseIPv4(left);
    if (start === null) throw `"${left}" is not an IPv4 address`;
    let end: number | null;
    if (/^[0-9]{1,3}$/.test(right)) {
      const last = Number(right);
      if (last > 255 || (right.length > 1 && right.startsWith('0'))) throw `"${right}" is not a last octet (0-255)`;
      end = ((start & 0xffffff00) >>> 0) + last;
    } else {
      end = parseIPv4(right);
      if (end === null) throw `"${right}" is not an IPv4 address or last octet`;
    }
    if (end < start) throw `range "${entry}" ends before it starts`;
    return [start, end];
  }
  const single = parseIPv4(entry);
  if (single === null) {
    throw `"${entry}" is not an IPv4 address, CIDR, a.b.c.d-e.f.g.h, a.b.c.d-N or a.b.c.* range`;
  }
  return [single, single];
}

/**
 * Expands ranges_text to a list of distinct addresses, in the order written. Throws
 * RangeParseError naming the line for a malformed entry or when the total passes `max`.
 */
export function parseRangesText(text: string, max = MAX_RANGE_ADDRESSES): string[] {
  const seen = new Set<number>();
  const out: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const hash = lines[i].indexOf('#');
    const entry = (hash >= 0 ? lines[i].slice(0, hash) : lines[i]).trim();
    if (entry === '') continue;
    let range: [number, number];
    try {
      range = parseEntry(entry);
    } catch (msg) {
      throw new RangeParseError(String(msg), i + 1);
    }
    const [first, last] = range;
    if (last - first + 1 > max) {
      throw new RangeParseError(`"${entry}" expands to ${last - first + 1} addresses, more than the limit of ${max}`, i + 1);
    }
    for (let a = first; a <= last; a++) {
      if (seen.has(a)) continue;
      if (seen.size >= max) {
        throw new RangeParseError(`"${entry}" takes the ranges past the limit of ${max} addresses`, i + 1);
      }
      seen.add(a);
      out.push(formatIPv4(a));
    }
  }
  return out;
}

/** Validation for settings: the error message, or null when the text is valid. */
export function validateRangesText(text: string, max = MAX_RANGE_ADDRESSES): string | null {
  try {
    parseRangesText(text, max);
    return null;
  } catch (e) {
    return errorText(e);
  }
}

export interface LocalSubnet {
  iface: string;
  address: string;
  netmask: string;
  /** The subnet in CIDR form, network address first (e.g. 192.168.1.0/24). */
  cidr: string;
  prefix: number;
}

type InterfaceMap = NodeJS.Dict<os.NetworkInterfaceInfo[]>;

/** The IPv4 subnets of the box's interfaces, loopback and internal interfaces skipped. */
export function localSubnets(ifaces: InterfaceMap = os.networkInterfaces()): LocalSubnet[] {
  const out: LocalSubnet[] = [];
  const seen = new Set<string>();
  for (const [name, infos] of Object.entries(ifaces)) {
    for (const info of infos ?? []) {
      if (info.family !== 'IPv4' || info.internal) continue;
      const addr = parseIPv4(info.address);
      const mask = parseIPv4(info.netmask);
      if (addr === null || mask === null) continue;
      if (((addr >>> 24) & 255) === 127) continue;
      // Link-local (169.254/16) is skipped: it is not a site's printer LAN.
      if (((addr >>> 16) & 0xffff) === 0xa9fe) continue;
      const prefix = countPrefix(mask);
      const network = (addr & maskOf(prefix)) >>> 0;
      const cidr = `${formatIPv4(network)}/${prefix}`;
      if (seen.has(cidr)) continue;
      seen.add(cidr);
      out.push({ iface: name, address: info.address, netmask: info.netmask, cidr, prefix });
    }
  }
  return out;
}

function countPrefix(mask: number): number {
  let p = 0;
  while (p < 32 && (mask & (0x80000000 >>> p)) !== 0) p++;
  return p;
}

/**
 * The host addresses of the box's subnets (network and broadcast excluded, the box's own address
 * skipped). A subnet larger than `max` addresses is an error, unless `clampPrefix` is set: then a
 * subnet wider than that prefix is scanned only in the block of that prefix holding the box's
 * address (the appliance uses 24: never beyond the box's own /24). Going past `max` in total is
 * always an error.
 */
export function localSubnetTargets(
  ifaces: InterfaceMap = os.networkInterfaces(),
  max = MAX_RANGE_ADDRESSES,
  options: { clampPrefix?: number } = {},
): string[] {
  const own = new Set<number>();
  const subnets = localSubnets(ifaces);
  for (const s of subnets) own.add(parseIPv4(s.address)!);
  const seen = new Set<number>();
  const out: string[] = [];
  for (const s of subnets) {
    let c = parseCidr(s.cidr)!;
    let [first, last] = cidrHostRange(c);
    if (options.clampPrefix !== undefined && c.prefix < options.clampPrefix) {
      c = parseCidr(`${s.address}/${options.clampPrefix}`)!;
      [first, last] = cidrHostRange(c);
    }
    if (last - first + 1 > max) {
      throw new RangeParseError(`subnet ${s.cidr} on ${s.iface} has ${last - first + 1} addresses, more than the limit of ${max}`);
    }
    for (let a = first; a <= last; a++) {
      if (own.has(a) || seen.has(a)) continue;
      if (seen.size >= max) throw new RangeParseError(`local subnets exceed the limit of ${max} addresses`);
      seen.add(a);
      out.push(formatIPv4(a));
    }
  }
  return out;
}
