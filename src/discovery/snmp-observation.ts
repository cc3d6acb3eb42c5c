// How discovery turns SNMP into its own terms: the settings' credentials and scan targets, and a
// parsed SNMP answer as an Observation (the record's key: the serial, else the MAC).
import type { Settings } from '../settings/settings.js';
import type { SnmpCredential } from '../snmp/client.js';
import { localSubnetTargets, parseRangesText } from '../shared/ranges.js';
import type { parsePrinter } from '../snmp/parse/printer.js';
import type { Observation } from '../model/observation.js';

/** SNMP credentials from settings, in the order they are tried. */
export function credentialsOf(s: Settings): SnmpCredential[] {
  const v3: SnmpCredential[] = s.snmp.v3.map((u) => ({
    version: 'v3',
    user: u.user,
    ...(u.auth_protocol !== 'none' ? { authProtocol: u.auth_protocol, authKey: u.auth_key } : {}),
    ...(u.priv_protocol !== 'none' ? { privProtocol: u.priv_protocol, privKey: u.priv_key } : {}),
  }));
  const communities: SnmpCredential[] = s.snmp.communities.map((community) => ({ version: s.snmp.version, community }));
  return [...v3, ...communities];
}

/** Why an address is scanned: PrinterInfo.discovery_methods of what answers there. */
export type DiscoveryMethod = 'subnet_scan' | 'manual_range';

/** The addresses a scan covers (the box's own subnets and/or the configured ranges), each with why. */
export function scanTargetMethods(s: Settings): Map<string, DiscoveryMethod[]> {
  const targets = new Map<string, DiscoveryMethod[]>();
  const add = (a: string, m: DiscoveryMethod) => targets.set(a, [...(targets.get(a) ?? []), m]);
  // Never beyond the box's own /24s (docs/decisions/0017-scan-scope.md): a wider subnet is scanned
  // only around the box.
  if (s.discovery.subnet_scan) for (const a of localSubnetTargets(undefined, undefined, { clampPrefix: 24 })) add(a, 'subnet_scan');
  if (s.discovery.manual_ranges) for (const a of parseRangesText(s.discovery.ranges_text)) add(a, 'manual_range');
  return targets;
}

type Parsed = ReturnType<typeof parsePrinter>;

export function toObservation(parsed: Parsed, ip: string, now: number, scanId?: number): Observation | undefined {
  const info = parsed.info as unknown as Record<string, unknown>;
  const mac = typeof info.mac_address === 'string' ? info.mac_address : undefined;
  const serial = parsed.serial || (mac ? `MAC-${mac.replace(/[^0-9A-Fa-f]/g, '').toUpperCase()}` : undefined);
  if (!serial) return undefined;
  const str = (k: string) => (typeof info[k] === 'string' && info[k] !== '' ? (info[k] as string) : undefined);
  const list = (k: string) => (Array.isArray(info[k]) ? (info[k] as string[]) : undefined);
  return {
    serial,
    ip,
    now,
    scanId,
    fields: {
      manufacturer: str('manufacturer'),
      model: str('model'),
      hostname: str('hostname'),
      firmware: str('firmware'),
      mac_address: mac,
      subnet_mask: str('subnet_mask'),
      gateway: str('gateway'),
      location: str('location'),
      web_ui_url: str('web_ui_url'),
      consumables: list('consumables'),
      status_messages: list('status_messages') ?? [],
    },
    printerInfo: { ...info, serial },
  };
}
