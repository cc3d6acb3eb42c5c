// What an IPP read (and the mDNS announcement that led to it) says about a network printer, as a
// discovery Observation in contract names (PrinterInfo 2.4). The record key is the printer's own
// serial (printer-device-id SN), else a key made from its printer-uuid: "UUID-<uuid, lower case>"
// (docs/openapi.yaml, Device), stable for as long as the printer keeps its uuid (IPP Everywhere:
// for its life).
import { parseDeviceId } from '../snmp/parse/device-id.js';
import type { Observation } from '../model/observation.js';
import type { IppPrinterState } from './codec.js';
import { ippSupplies } from './supplies.js';

/** What an mDNS announcement told (discovery/mdns.ts), when the read followed one. */
export interface Announcement {
  /** DNS-SD service types seen, e.g. "_ipp._tcp", "_ipps._tcp". */
  services: string[];
  txt: Record<string, string>;
  /** Host name the printer announced (e.g. "printer-7.local"). */
  host?: string;
  /** How it announced itself (default mDNS); WS-Discovery and SSDP also say what they saw. */
  method?: 'mdns' | 'wsd' | 'ssdp';
  seen?: string[];
}

/** discovery_methods' entry for an announcement: its method, else mDNS when it named services. */
export function announcedBy(a: Announcement | undefined): string[] {
  if (a?.method) return [a.method];
  return a?.services.length ? ['mdns'] : [];
}

export interface IppObservationInput {
  ip: string;
  port: number;
  tls: boolean;
  state: IppPrinterState;
  now: number;
  announcement?: Announcement;
  scanId?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The key of a printer with no serial: from printer-uuid (or TXT UUID), else undefined. */
export function uuidKey(uuid: string | undefined): string | undefined {
  const u = uuid?.trim().replace(/^urn:uuid:/i, '');
  return u && UUID.test(u) ? `UUID-${u.toLowerCase()}` : undefined;
}

const text = (v: string | undefined, max = 256) => {
  const t = v?.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return t ? t.slice(0, max) : undefined;
};

/**
 * An http(s) URL, else undefined (a TXT adminurl is whatever the LAN says). A printer that names
 * itself "localhost" (HP answers printer-more-info with the Host it was asked by, and over USB
 * that is localhost) is given the address it was read at.
 */
function webUrl(v: string | undefined, ip: string): string | undefined {
  if (!v) return undefined;
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    if (u.hostname === 'localhost' || /^127\./.test(u.hostname) || u.hostname === '[::1]') u.hostname = ip;
    return u.href;
  } catch {
    return undefined;
  }
}

/**
 * Status lines: a stopped printer, its state reasons and alerts. "none" and reasons ending in
 * "-report" (RFC 8011 5.4.12: informational, e.g. HP's "wifi-not-configured-report") are not.
 */
export function ippStatusMessages(s: IppPrinterState): string[] {
  const out: string[] = [];
  if (s.state === 'stopped') out.push(s.stateMessage ? `stopped: ${text(s.stateMessage)}` : 'stopped');
  for (const r of s.stateReasons) if (r !== 'none' && !r.endsWith('-report')) out.push(r);
  out.push(...s.alerts.map((a) => text(a)!).filter(Boolean));
  return [...new Set(out)].slice(0, 32);
}

export function ippObservation(i: IppObservationInput): Observation | undefined {
  const { state: s, announcement: a } = i;
  const txt = a?.txt ?? {};
  const id = parseDeviceId(s.deviceId);
  const uuid = s.uuid ?? txt.uuid;
  const serial = text(id?.serial, 64) ?? uuidKey(uuid);
  if (!serial) return undefined;
  const makeAndModel = text(s.makeAndModel) ?? text(txt.ty);
  const manufacturer = text(id?.manufacturer) ?? (makeAndModel ? makeAndModel.split(/\s+/)[0] : undefined);
  // printer-make-and-model, less the maker's name, before the Device ID's MDL: printers fill MDL
  // carelessly (Pantum's M7300FDW says "MDL:-Printer"; HP repeats "HP" in it).
  const stripped = makeAndModel && manufacturer && makeAndModel.toLowerCase().startsWith(`${manufacturer.toLowerCase()} `) ? makeAndModel.slice(manufacturer.length + 1).trim() : makeAndModel;
  const model = stripped || text(id?.model);
  const supplies = ippSupplies(s);
  const status = ippStatusMessages(s);
  const location = text(s.location) ?? text(txt.note);
  const web_ui_url = webUrl(s.webUiUrl, i.ip) ?? webUrl(txt.adminurl, i.ip);
  const services = a?.services ?? [];
  const colour = s.colorSupported ?? (txt.color ? txt.color === 'T' : undefined);
  const duplex = s.duplexSupported ?? (txt.duplex ? txt.duplex === 'T' : undefined);
  const detection = [
    ...services.map((t) => `mdns: ${t}`),
    ...(a?.seen ?? []),
    `ipp: ${i.tls ? 'ipps' : 'ipp'} port ${i.port} answered Get-Printer-Attributes`,
  ];
  const printerInfo: Record<string, unknown> = {
    ip: i.ip,
    serial,
    last_seen: new Date(i.now).toISOString(),
    learned_oids: {},
    ...(manufacturer ? { manufacturer } : {}),
    ...(model ? { model } : {}),
    ...(text(s.firmware) ? { firmware: text(s.firmware) } : {}),
    ...(text(s.info) ? { description: text(s.info) } : {}),
    ...(location ? { location } : {}),
    ...(web_ui_url ? { web_ui_url } : {}),
    ...(a?.host ? { hostname: a.host.replace(/\.local\.?$/, '') } : {}),
    ...(s.pageCount !== undefined ? { page_count: s.pageCount } : {}),
    ...(s.monoPages !== undefined ? { mono_impressions: s.monoPages } : {}),
    ...(s.colorPages !== undefined ? { color_impressions: s.colorPages } : {}),
    ...(s.mediaSheets !== undefined ? { meters: { media_sheets: s.mediaSheets } } : {}),
    ...(supplies ? { consumables: supplies.consumables, toner_levels: supplies.levels } : {}),
    ...(supplies && Object.keys(supplies.partNumbers).length ? { supply_part_numbers: supplies.partNumbers } : {}),
    ...(supplies && Object.keys(supplies.types).length ? { supply_types: supplies.types } : {}),
    ...(webUrl(s.supplyInfoUri, i.ip) ? { supply_info_uri: webUrl(s.supplyInfoUri, i.ip) } : {}),
    status_messages: status,
    ...(s.state ? { printer_state: s.state } : {}),
    open_ports: [i.port],
    ...(services.length ? { advertised_services: services } : {}),
    detection_reasons: detection,
    ...(colour !== undefined ? { is_color: colour, is_mono: !colour } : {}),
    ...(duplex !== undefined ? { duplex_supported: duplex, has_duplex: duplex } : {}),
    ...(uuid ? { printer_uuid: uuid.replace(/^urn:uuid:/i, '').toLowerCase() } : {}),
    ...(txt.pdl ? { pdl: txt.pdl.split(',').slice(0, 32) } : {}),
    // It answered Get-Printer-Attributes as a printer: what SNMP's parse says of a printer (a
    // print server's queue is told apart before this, by ipp/print-queue.ts).
    device_type: 'printer',
  };
  return {
    serial,
    ip: i.ip,
    now: i.now,
    scanId: i.scanId,
    fields: {
      manufacturer,
      model,
      hostname: printerInfo.hostname as string | undefined,
      firmware: printerInfo.firmware as string | undefined,
      location,
      web_ui_url,
      consumables: supplies?.consumables,
      status_messages: status,
    },
    printerInfo,
    discoveryMethods: [...announcedBy(a), 'ipp'],
    source: 'ipp',
  };
}

/** The category counters of an IPP read (PWG 5100.22 members), only those the printer reported. */
export function ippCounters(s: IppPrinterState): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  if (s.colorPages !== undefined) out.full_color_pages = s.colorPages;
  if (s.highlightColorPages !== undefined) out.two_color_pages = s.highlightColorPages;
  if (s.duplexSheets !== undefined) out.duplex_sheets = s.duplexSheets;
  return Object.keys(out).length ? out : undefined;
}

/** Snapshot meters of an IPP read, as SNMP's parsed.metrics. */
export function ippMetrics(s: IppPrinterState): { page_count?: number; mono_pages?: number; color_pages?: number; extra?: Record<string, number>; toner_levels: Record<string, number> } {
  const extra = ippCounters(s);
  return {
    ...(s.pageCount !== undefined ? { page_count: s.pageCount } : {}),
    ...(s.monoPages !== undefined ? { mono_pages: s.monoPages } : {}),
    ...(s.colorPages !== undefined ? { color_pages: s.colorPages } : {}),
    ...(extra ? { extra } : {}),
    toner_levels: ippSupplies(s)?.levels ?? {},
  };
}

const union = (a: unknown, b: unknown) => {
  const xs = [...(Array.isArray(a) ? a : []), ...(Array.isArray(b) ? b : [])];
  return xs.length ? [...new Set(xs)] : undefined;
};

/**
 * One printer that answered SNMP and IPP at once, as one observation (listed once). The
 * key is the SNMP serial, unless SNMP only gave a MAC key and IPP a real serial (serial, else
 * printer-uuid, else MAC). SNMP's fields win (its counters are the Printer MIB's own); IPP fills
 * what SNMP did not say; how it was seen is the union of both.
 */
export function combineObservations(snmp: Observation, ipp: Observation): Observation {
  const serial = snmp.serial.startsWith('MAC-') && !ipp.serial.startsWith('UUID-') ? ipp.serial : snmp.serial;
  const fields = { ...ipp.fields } as Record<string, unknown>;
  for (const [k, v] of Object.entries(snmp.fields)) if (v !== undefined && !(Array.isArray(v) && v.length === 0)) fields[k] = v;
  const info: Record<string, unknown> = { ...ipp.printerInfo };
  for (const [k, v] of Object.entries(snmp.printerInfo)) if (v !== undefined) info[k] = v;
  for (const k of ['advertised_services', 'detection_reasons', 'open_ports', 'status_messages', 'consumables']) {
    const u = union(snmp.printerInfo[k], ipp.printerInfo[k]);
    if (u) info[k] = u;
  }
  fields.status_messages = info.status_messages ?? [];
  info.serial = serial;
  return {
    ...snmp,
    serial,
    fields: fields as Observation['fields'],
    printerInfo: info,
    discoveryMethods: union(snmp.discoveryMethods, ipp.discoveryMethods) as string[] | undefined,
    source: 'snmp',
  };
}
