// The kernel's IPv4 neighbour table (ARP), read from /proc/net/arp: which hardware address the box
// itself exchanged frames with for an address. Only hosts on the box's own links are in it (a
// routed printer's entry would be the router's, and is never there under the printer's address);
// a reply the box has just received from an on-link host leaves a complete entry behind.
//
// Unlike a printer's ifPhysAddress, which the printer (or anyone answering in its name) reports
// about itself, this is what the box saw on the wire. It is still not proof: on a shared LAN a host
// can take another's MAC (docs/api.md, "Spoofed printers").
import { readFileSync } from 'node:fs';
import { inAllowedRanges, localSubnets, type LocalSubnet } from '../shared/ranges.js';
import type { Observation } from '../model/observation.js';

/** ATF_COM: the entry is complete (the kernel has the hardware address). */
const ATF_COM = 0x2;

/** Lower-case colon-separated hex, or undefined when it is not a 6-byte hardware address. */
export function normalMac(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const hex = text.replace(/[^0-9a-fA-F]/g, '').toLowerCase();
  if (hex.length !== 12 || /^0+$/.test(hex)) return undefined;
  return hex.match(/../g)!.join(':');
}

/** Parses /proc/net/arp's text: complete entries only, address to MAC. */
export function parseArpTable(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n').slice(1)) {
    const [ip, , flags, hw] = line.trim().split(/\s+/);
    if (!ip || !hw || !flags) continue;
    if ((Number.parseInt(flags, 16) & ATF_COM) === 0) continue;
    const mac = normalMac(hw);
    if (mac) out.set(ip, mac);
  }
  return out;
}

// The table as last read. A polling round looks up every printer that answered: on a flat LAN of
// 2,000 printers the table has 2,000 entries, and reading and parsing it for each one cost 4 ms a
// lookup, 8 s of CPU a round (docs/performance.md, a large site). A found entry is taken from a
// table at most TABLE_MAX_AGE_MS old (the kernel itself keeps an entry for minutes); an address
// the table lacks is looked up in a fresh read, so a reply just received is never missed.
const TABLE_MAX_AGE_MS = 1000;
let table: { file: string; at: number; macs: Map<string, string> } | undefined;

/** The neighbour table's MAC for `ip`, or undefined (not on the box's links, no entry, no /proc). */
export function neighbourMac(ip: string, file = '/proc/net/arp', now = Date.now()): string | undefined {
  try {
    const fresh = table !== undefined && table.file === file && now - table.at <= TABLE_MAX_AGE_MS;
    const found = fresh ? table!.macs.get(ip) : undefined;
    if (found !== undefined) return found;
    table = { file, at: now, macs: parseArpTable(readFileSync(file, 'utf8')) };
    return table.macs.get(ip);
  } catch {
    table = undefined;
    return undefined;
  }
}

/** Whether `ip` lies on one of the box's own subnets (their real prefixes: the kernel's on-link hosts). */
export function onOwnSubnet(ip: string, subnets: readonly Pick<LocalSubnet, 'cidr'>[] = localSubnets()): boolean {
  return subnets.some((s) => inAllowedRanges(ip, [s.cidr]));
}

/** The MAC the box saw on the wire for `ip`, when `ip` is on the box's own subnets (else none: a routed host's entry would be the router's). */
export function wireMac(ip: string, lookup: (ip: string) => string | undefined, subnets?: readonly Pick<LocalSubnet, 'cidr'>[]): string | undefined {
  return onOwnSubnet(ip, subnets) ? lookup(ip) : undefined;
}

/**
 * A printer on the box's own subnets that reported no MAC address of its own gets the
 * one the box saw on the wire (a printer's own report wins; routed hosts get none). Changes `o`.
 */
export function withNeighbourMac(o: Observation, lookup: (ip: string) => string | undefined, subnets?: readonly Pick<LocalSubnet, 'cidr'>[]): Observation {
  if (o.fields.mac_address) return o;
  const mac = wireMac(o.ip, lookup, subnets);
  if (!mac) return o;
  o.fields.mac_address = mac;
  o.printerInfo = { ...o.printerInfo, mac_address: mac };
  return o;
}
