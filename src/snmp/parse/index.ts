// parsePrinter: SNMP values (a quick identify or a full read) -> printer facts.
//
// Generic first: MIB-II, HOST-RESOURCES-MIB (RFC 2790), Printer-MIB (RFC 3805) and the PWG
// IEEE 1284 device ID. A vendor module (src/snmp/vendors) then fills gaps from the vendor's
// private MIB; it never overrides a standard value except where noted (supply levels the
// Printer-MIB reports only as "unknown"/"some remaining").
//
// Precedence:
//   serial:        prtGeneralSerialNumber > vendor serial OID > 1284 SN/SER/SERN > none
//                  (the caller then falls back to the MAC). Trimmed of NUL/whitespace padding;
//                  placeholders such as "0" or "unknown" count as none.
//   manufacturer:  the brand the printer's texts name (rebadged lines: UTAX, Develop, Dell ...)
//                  > 1284 MFG > a maker named in 1284 MDL, hrDeviceDescr, sysDescr > the
//                  sysObjectID enterprise (identity.ts; print-server cards claim HP's)
//   model:         1284 MDL > vendor model OID > hrDeviceDescr > sysDescr, each cleaned of the
//                  brand prefix, firmware versions, service tags, the serial, "series"
//   page_count:    prtMarkerLifeCount (marker 1, counted in impressions or sheets) > vendor total
//                  > mono + colour when the printer reports those two and no total
//   mono/colour:   vendor counters; a printer whose only colorant is black has mono = total
import { agentWordsIn, printerAgent } from '../../model/supply-words.js';
import { storableKey } from '../../model/inherited-keys.js';
import { isExtraCounter } from '../../model/serialize.js';
import { formatTime } from '../../model/time.js';
import type { LearnedOids, PaperTray, PrinterInfo } from '../../model/printer-info.js';
import {
  HR_DEVICE_DESCR,
  HR_DEVICE_PRINTER,
  HR_DEVICE_TYPE,
  IF_PHYS_ADDRESS,
  IF_TYPE,
  IP_AD_ENT_IF_INDEX,
  IP_AD_ENT_NETMASK,
  IP_ROUTE_NEXT_HOP_DEFAULT,
  PPM_PRINTER_IEEE1284_DEVICE_ID,
  PRT_GENERAL_SERIAL_NUMBER,
  PRT_LOCALIZATION_CHARSET,
  PRT_MARKER_COUNTER_UNIT,
  PRT_MARKER_LIFE_COUNT,
  PRT_MARKER_MARK_TECH,
  PRT_MARKER_PROCESS_COLORANTS,
  PRT_MARKER_SUPPLIES_LEVEL,
  PRT_MEDIA_PATH_TYPE,
  SYS_CONTACT,
  SYS_DESCR,
  SYS_LOCATION,
  SYS_NAME,
  SYS_OBJECT_ID,
  SYS_UPTIME,
  VENDOR_DEVICE_ID_OIDS,
} from '../oids.js';
import type { OidValues } from '../types.js';
import { canonicalManufacturer, VENDORS, vendorByName, vendorFor } from '../vendors/index.js';
import type { VendorFacts } from '../vendors/types.js';
import { parseDeviceId, type DeviceId } from './device-id.js';
import { isSupplyAlert, readAlerts, readTrays, statusMessages, type Alert } from './status.js';
import { colorantColours, readSupplies, SOME_REMAINING, type Supply } from './supplies.js';
import { bytesOf, column, enterpriseOf, num, numOf, text, textOf, withOidIndex, type Found } from './values.js';
import { brandInTexts, brandOfEnterprise, cleanModel, makerOfDeviceId } from './identity.js';

export { cleanModel };

export { readPlan } from '../vendors/index.js';

export interface ParsedMetrics {
  page_count?: number;
  mono_pages?: number;
  color_pages?: number;
  scan_count?: number;
  /** The category counters the printer reported (print_pages, copy_pages, duplex_pages ...). */
  extra?: Record<string, number>;
  /**
   * Integer percentages by normalised key for measured levels (see supplies.ts), and -3 for a
   * supply the printer reports as "some remaining" (Printer-MIB's own value, kept so that what a
   * figure is made of it is decided where it is shown: the central server gets PrintMaster's,
   * server/pm-fields.ts). Readers take negatives as unknown (forecast, alerts, roll-ups, the UI).
   */
  toner_levels: Record<string, number>;
}

export interface ParsedPrinter {
  serial?: string;
  info: PrinterInfo;
  metrics: ParsedMetrics;
  /** Every supply with its raw level and state, including the ones without a percentage. */
  supplies: Supply[];
  /** Vendor module used, if any. */
  vendor?: string;
}

/** IANA character set MIBenum (prtLocalizationCharacterSet) -> TextDecoder label. */
const CHARSETS: Record<number, string> = {
  3: 'us-ascii',
  4: 'iso-8859-1',
  5: 'iso-8859-2',
  6: 'iso-8859-3',
  7: 'iso-8859-4',
  8: 'iso-8859-5',
  9: 'iso-8859-6',
  10: 'iso-8859-7',
  11: 'iso-8859-8',
  12: 'iso-8859-9',
  17: 'shift_jis',
  18: 'euc-jp',
  38: 'euc-kr',
  106: 'utf-8',
  113: 'gbk',
  2025: 'gb2312',
  2026: 'big5',
  2250: 'windows-1250',
  2251: 'windows-1251',
  2252: 'windows-1252',
};

const PLACEHOLDER = /^(0+|unknown|n\/?a|none|null|not\s*available|-+|\?+|x+)$/i;

/** Serial text cleaned of NUL/space padding; placeholders count as no serial. */
export function cleanSerial(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  // eslint-disable-next-line no-control-regex
  const t = s.replace(/[\x00-\x1f\x7f]/g, '').trim();
  if (t === '' || PLACEHOLDER.test(t)) return undefined;
  return t;
}

/** "aa:bb:cc:dd:ee:ff" from six bytes; undefined for anything else or all zeros. */
export function formatMac(buf: Buffer | undefined): string | undefined {
  if (!buf || buf.length !== 6 || buf.every((b) => b === 0)) return undefined;
  return [...buf].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** The hrDeviceIndex of the printer: the row typed hrDevicePrinter, else 1. */
function printerDeviceIndex(values: OidValues): string {
  for (const [suffix, v] of column(values, HR_DEVICE_TYPE)) {
    if (v.value === HR_DEVICE_PRINTER) return suffix;
  }
  return '1';
}

function readDeviceId(values: OidValues): { id?: DeviceId; oid?: string } {
  const rows = column(values, PPM_PRINTER_IEEE1284_DEVICE_ID).map(([s]) => `${PPM_PRINTER_IEEE1284_DEVICE_ID}.${s}`);
  for (const oid of [...rows, ...VENDOR_DEVICE_ID_OIDS]) {
    const id = parseDeviceId(text(values, oid));
    if (id && (id.manufacturer || id.model)) return { id, oid };
  }
  return {};
}

/** MAC of the interface that holds the printer's address, else of the first real interface. */
function readMac(values: OidValues, ip: string): Found<string> | undefined {
  const ifIndex = num(values, `${IP_AD_ENT_IF_INDEX}.${ip}`);
  if (ifIndex !== undefined) {
    const oid = `${IF_PHYS_ADDRESS}.${ifIndex}`;
    const mac = formatMac(bytesOf(values.get(oid)));
    if (mac) return { value: mac, oid };
  }
  const types = new Map(column(values, IF_TYPE));
  const rows = column(values, IF_PHYS_ADDRESS);
  // Prefer Ethernet-like interfaces (ifType 6 ethernetCsmacd, 71 ieee80211) when types are known.
  const ordered = [
    ...rows.filter(([i]) => [6, 71].includes(numOf(types.get(i)) ?? -1)),
    ...rows.filter(([i]) => ![6, 71].includes(numOf(types.get(i)) ?? -1)),
  ];
  for (const [i, v] of ordered) {
    const mac = formatMac(bytesOf(v));
    if (mac) return { value: mac, oid: `${IF_PHYS_ADDRESS}.${i}` };
  }
  return undefined;
}

/** Netmask of the printer's address; else the only non-loopback entry of the ipAddrTable. */
function readNetmask(values: OidValues, ip: string): string | undefined {
  const own = text(values, `${IP_AD_ENT_NETMASK}.${ip}`) ?? (values.get(`${IP_AD_ENT_NETMASK}.${ip}`)?.value as string | undefined);
  if (typeof own === 'string' && own) return own;
  // The address we read may not be in the table (NAT, simulation): use the mask when all the
  // printer's own (non-loopback) addresses share it.
  const masks = new Set(
    column(values, IP_AD_ENT_NETMASK)
      .filter(([addr]) => !addr.startsWith('127.'))
      .map(([, v]) => (typeof v.value === 'string' ? v.value : ''))
      .filter((m) => m !== '' && m !== '0.0.0.0'),
  );
  return masks.size === 1 ? [...masks][0] : undefined;
}

function ipText(values: OidValues, oid: string): string | undefined {
  const v = values.get(oid);
  if (!v || typeof v.value !== 'string') return undefined;
  return v.value && v.value !== '0.0.0.0' ? v.value : undefined;
}

/** prtMarkerMarkTech (RFC 3805 PrtMarkerMarkTechTC) -> laser / inkjet. */
function markTech(values: OidValues): { laser?: boolean; inkjet?: boolean } {
  const rows = column(values, PRT_MARKER_MARK_TECH).map(([, v]) => numOf(v)).filter((n): n is number => n !== undefined);
  if (rows.length === 0) return {};
  // 3 electrophotographicLED, 4 electrophotographicLaser, 5 electrophotographicOther;
  // 12 inkjetAqueous, 13 inkjetSolid, 14 inkjetOther.
  const laser = rows.some((t) => t >= 3 && t <= 5);
  const inkjet = rows.some((t) => t >= 12 && t <= 14);
  if (!laser && !inkjet && rows.every((t) => t <= 2)) return {};
  return { laser, inkjet };
}

/** Page count from prtMarkerLifeCount: marker 1 (or the first) when counted in impressions/sheets. */
function lifeCount(values: OidValues): { page?: Found<number>; all: Record<string, number> } {
  const all: Record<string, number> = {};
  let page: Found<number> | undefined;
  for (const [suffix, v] of column(values, PRT_MARKER_LIFE_COUNT)) {
    const n = numOf(v);
    if (n === undefined) continue;
    all[`marker_life_count_${suffix.replace(/\./g, '_')}`] = n;
    const unit = num(values, `${PRT_MARKER_COUNTER_UNIT}.${suffix}`);
    // PrtMarkerCounterUnitTC: 7 impressions, 8 sheets; lengths (3, 4, 16, 17) and hours (11) are not pages.
    const pageUnit = unit === undefined || unit === 7 || unit === 8;
    if (pageUnit && !page) page = { value: n, oid: `${PRT_MARKER_LIFE_COUNT}.${suffix}` };
  }
  return { page, all };
}

function pick<T>(...xs: Array<Found<T> | undefined>): Found<T> | undefined {
  return xs.find((x) => x !== undefined);
}

/** Parses everything a read returned into PrinterInfo and a metrics snapshot. */
export function parsePrinter(values: OidValues, ip: string, now: Date): ParsedPrinter {
  // Dozens of column reads over a few hundred values: sort the OIDs once for all of them.
  return withOidIndex(values, () => parseIndexed(values, ip, now));
}

function parseIndexed(values: OidValues, ip: string, now: Date): ParsedPrinter {
  const charsetNum = column(values, PRT_LOCALIZATION_CHARSET).map(([, v]) => numOf(v)).find((n) => n !== undefined);
  const charset = charsetNum !== undefined ? CHARSETS[charsetNum] : undefined;

  const sysDescr = text(values, SYS_DESCR);
  const sysObjectIdRaw = values.get(SYS_OBJECT_ID)?.value;
  const sysObjectId = typeof sysObjectIdRaw === 'string' ? sysObjectIdRaw : undefined;
  const devIdx = printerDeviceIndex(values);
  const hrDescr = text(values, `${HR_DEVICE_DESCR}.${devIdx}`, charset);
  const { id: deviceId, oid: deviceIdOid } = readDeviceId(values);

  const enterprise = enterpriseOf(sysObjectId);
  // The printer's own texts first (what it reads to its print server over 1284), then the
  // agent's sysDescr, which may be the card's.
  const texts = [deviceId?.manufacturer, deviceId?.model, hrDescr, sysDescr];
  const maker = makerOfDeviceId(deviceId?.manufacturer);
  const vendor = vendorFor(enterprise, texts.slice(1), maker);
  const brand = brandInTexts(texts);
  const genericModel = cleanModel(deviceId?.model, { brand: brand ?? brandOfEnterprise(enterprise) }) ?? cleanModel(hrDescr, { brand: brand ?? brandOfEnterprise(enterprise) });
  const facts: VendorFacts = vendor?.parse?.({ values, deviceId, model: genericModel }) ?? {};

  // --- identity
  const serialStd = pick(
    ...column(values, PRT_GENERAL_SERIAL_NUMBER).map(([s, v]) => {
      const t = cleanSerial(textOf(v));
      return t ? { value: t, oid: `${PRT_GENERAL_SERIAL_NUMBER}.${s}` } : undefined;
    }),
  );
  const vendorSerial = facts.serial && cleanSerial(facts.serial.value) ? { value: cleanSerial(facts.serial.value)!, oid: facts.serial.oid } : undefined;
  const idSerial = cleanSerial(deviceId?.serial);
  const serial = pick(serialStd, vendorSerial, idSerial ? { value: idSerial, oid: deviceIdOid } : undefined);

  // The name the printer gives wins over the enterprise number, which may be a print-server
  // card's (third-party cards claim HP's JetDirect OID): a rebadged brand in its texts, its 1284
  // MFG, a maker its texts name, and only then the enterprise number. A free-text description
  // names a maker only through a known name: its first word is often a product line.
  const manufacturer =
    brand ??
    canonicalManufacturer(maker) ??
    texts.map((t) => vendorByName(t)?.name).find((n) => n !== undefined) ??
    brandOfEnterprise(enterprise) ??
    vendor?.name;

  const modelSources: Array<Found<string> | undefined> = [
    deviceId?.model ? { value: deviceId.model, oid: deviceIdOid } : undefined,
    facts.model,
    hrDescr ? { value: hrDescr, oid: `${HR_DEVICE_DESCR}.${devIdx}` } : undefined,
    sysDescr ? { value: sysDescr, oid: SYS_DESCR } : undefined,
  ];
  let model: Found<string> | undefined;
  for (const src of modelSources) {
    const m = src && cleanModel(src.value, { brand: manufacturer, serial: serial?.value });
    if (m) {
      model = { value: m, oid: src.oid };
      break;
    }
  }

  let firmware = facts.firmware?.value;
  if (!firmware && sysDescr) {
    const m = /\b(?:firmware|fw)\s*(?:ver(?:sion)?\.?)?\s*[:.]?\s*([A-Za-z0-9][\w.\-]*)/i.exec(sysDescr);
    if (m) firmware = m[1];
  }

  const info: PrinterInfo = { ip, last_seen: formatTime(now.getTime()), learned_oids: {} };
  const learned: LearnedOids = info.learned_oids;
  if (manufacturer) info.manufacturer = manufacturer;
  if (model) {
    info.model = model.value;
    if (model.oid) learned.model_oid = model.oid;
  }
  if (serial) {
    info.serial = serial.value;
    if (serial.oid) learned.serial_oid = serial.oid;
  }
  if (sysDescr) info.description = sysDescr;
  // An interface card's own identity, named as the card's (the printer's is above).
  if (facts.print_server?.model) info.print_server = Object.fromEntries(Object.entries(facts.print_server).filter(([, v]) => v)) as PrinterInfo['print_server'];
  const location = text(values, SYS_LOCATION, charset);
  if (location) info.location = location;
  const contact = text(values, SYS_CONTACT, charset);
  if (contact) info.admin_contact = contact;
  const hostname = text(values, SYS_NAME) ?? facts.hostname?.value;
  if (hostname) info.hostname = hostname;
  if (firmware) info.firmware = firmware;
  const ticks = num(values, SYS_UPTIME);
  if (ticks !== undefined && ticks >= 0) info.uptime_seconds = Math.floor(ticks / 100);

  // --- network
  const mac = readMac(values, ip);
  if (mac) info.mac_address = mac.value;
  const mask = readNetmask(values, ip);
  if (mask) info.subnet_mask = mask;
  const gw = ipText(values, IP_ROUTE_NEXT_HOP_DEFAULT);
  if (gw) info.gateway = gw;

  // --- counters
  const life = lifeCount(values);
  const pageFound = life.page ?? facts.page_count;
  const colours = colorantColours(values);
  const processColorants = num(values, `${PRT_MARKER_PROCESS_COLORANTS}.1.1`);
  let isColor: boolean | undefined;
  if (colours.length > 0) isColor = colours.some((c) => c !== 'black');
  else if (processColorants !== undefined && processColorants > 0) isColor = processColorants > 1;

  const metrics: ParsedMetrics = { toner_levels: {} };
  const meters: Record<string, number> = { ...life.all };
  if (pageFound) {
    metrics.page_count = pageFound.value;
    info.page_count = pageFound.value;
    meters.total_pages = pageFound.value;
    if (pageFound.oid) learned.page_count_oid = pageFound.oid;
  }
  // A vendor total that disagrees with Printer-MIB is kept for reference, not used.
  if (life.page && facts.page_count && facts.page_count.value !== life.page.value) meters.vendor_total_pages = facts.page_count.value;
  let mono = facts.mono_pages;
  const color = facts.color_pages;
  if (!mono && isColor === false && pageFound) mono = { value: pageFound.value, oid: pageFound.oid };
  if (mono) {
    metrics.mono_pages = mono.value;
    info.mono_impressions = mono.value;
    meters.mono_pages = mono.value;
    if (mono.oid) learned.mono_pages_oid = mono.oid;
  }
  if (color) {
    metrics.color_pages = color.value;
    info.color_impressions = color.value;
    meters.color_pages = color.value;
    if (color.oid) learned.color_pages_oid = color.oid;
  }
  // No total, but both halves of it: the meter a technician bills from is their sum.
  if (!pageFound && mono && color) {
    metrics.page_count = mono.value + color.value;
    info.page_count = metrics.page_count;
  }
  if (facts.scan_count) {
    metrics.scan_count = facts.scan_count.value;
    meters.scan_count = facts.scan_count.value;
  }
  for (const [k, v] of Object.entries(facts.meters ?? {})) {
    if (Number.isFinite(v)) meters[k] = Math.trunc(v);
    const colour = /^(black|cyan|magenta|yellow)_impressions$/.exec(k)?.[1];
    if (colour) info[`${colour}_impressions` as 'black_impressions'] = Math.trunc(v);
  }
  // The category counters among the meters go into the snapshot (and so into history).
  const extra = Object.fromEntries(Object.entries(meters).filter(([k]) => isExtraCounter(k)));
  if (Object.keys(extra).length > 0) metrics.extra = extra;

  // --- supplies: Printer-MIB rows, then vendor readings where the standard has no percentage.
  const supplies = readSupplies(values, charset);
  for (const vs of facts.supplies ?? []) {
    const same = supplies.find((s) => s.key === vs.key);
    if (!same) supplies.push(vs);
    else if (same.percent === undefined && vs.percent !== undefined) {
      same.percent = vs.percent;
      same.state = 'measured';
      same.source = 'vendor';
      same.oid = vs.oid;
    }
  }
  const consumables: string[] = [];
  for (const s of supplies) {
    if (!consumables.includes(s.key)) consumables.push(s.key);
    if (s.percent !== undefined) metrics.toner_levels[s.key] = s.percent;
    else if (s.state === 'some_remaining' && !Object.hasOwn(metrics.toner_levels, s.key)) metrics.toner_levels[s.key] = SOME_REMAINING;
  }
  if (supplies.length > 0) {
    info.consumables = consumables;
    // PrinterInfo's levels are measurements only (contract 2.5).
    info.toner_levels = Object.fromEntries(Object.entries(metrics.toner_levels).filter(([, v]) => v >= 0));
  }
  const partNumbers = Object.fromEntries(supplies.filter((s) => s.part_number).map((s) => [s.key, s.part_number!]));
  if (Object.keys(partNumbers).length > 0) info.supply_part_numbers = partNumbers;
  const types = Object.fromEntries(supplies.filter((s) => s.type && s.type !== 'other' && s.type !== 'unknown').map((s) => [s.key, s.type!]));
  if (Object.keys(types).length > 0) info.supply_types = types;
  for (const c of ['black', 'cyan', 'magenta', 'yellow'] as const) {
    const s = supplies.find((x) => x.key === c);
    if (!s) continue;
    if (s.percent !== undefined) info[`toner_level_${c}`] = s.percent;
    if (s.description) info[`toner_desc_${c}`] = s.description;
    if (c !== 'black' && s.oid && s.source === 'printer-mib') learned[`${c}_oid`] = s.oid;
  }
  if (supplies.some((s) => s.source === 'printer-mib' && s.oid)) learned.toner_oid_prefix = PRT_MARKER_SUPPLIES_LEVEL;
  if (isColor === undefined && supplies.some((s) => ['cyan', 'magenta', 'yellow'].includes(s.key))) isColor = true;

  // --- status, alerts, trays
  const alerts: Alert[] = readAlerts(values, charset);
  const status = statusMessages(values, alerts, devIdx);
  if (status.length > 0) info.status_messages = status;
  const tonerAlerts: string[] = [];
  for (const s of supplies) {
    if (s.percent === undefined) continue;
    if (s.receptacle || s.key.startsWith('waste')) {
      if (s.percent <= 10) tonerAlerts.push(`${s.key} nearly full`);
    } else if (s.percent === 0) tonerAlerts.push(`${s.key} empty`);
    else if (s.percent <= 10) tonerAlerts.push(`${s.key} low (${s.percent}%)`);
  }
  for (const a of alerts) if (isSupplyAlert(a) && a.message && !tonerAlerts.includes(a.message)) tonerAlerts.push(a.message);
  if (tonerAlerts.length > 0) info.toner_alerts = tonerAlerts;

  const trays: PaperTray[] = readTrays(values, charset);
  if (trays.length > 0) {
    info.paper_trays = trays;
    const st: Record<string, string> = {};
    // A tray's name is the printer's text: one the box could not restore from a backup is renamed.
    for (const t of trays) if (t.status) st[storableKey(t.name ?? String(t.index), 'tray')] = t.status;
    if (Object.keys(st).length > 0) info.paper_tray_status = st;
  }

  // --- capabilities: only what the MIBs (or vendor facts) say.
  const caps = facts.capabilities ?? {};
  const tech = markTech(values);
  const setFlag = (k: keyof PrinterInfo & `${'is' | 'has'}_${string}`, v: boolean | undefined) => {
    if (v !== undefined) (info as unknown as Record<string, unknown>)[k] = v;
  };
  setFlag('is_color', caps.is_color ?? isColor);
  setFlag('is_mono', caps.is_mono ?? (isColor === undefined ? undefined : !isColor));
  setFlag('is_laser', tech.laser ?? caps.is_laser);
  setFlag('is_inkjet', tech.inkjet ?? caps.is_inkjet);
  // hrPrinterDetectedErrorState names its bits lowToner and noToner whatever the printer marks
  // with: a printer whose supplies are ink is said to be low on ink, and not twice when its alert
  // table says so already ("Ink is low.": model/supply-words.ts).
  if (info.status_messages) info.status_messages = agentWordsIn(info.status_messages, printerAgent(info));
  setFlag('is_copier', caps.is_copier);
  setFlag('is_scanner', caps.is_scanner);
  setFlag('is_fax', caps.is_fax);
  const paths = column(values, PRT_MEDIA_PATH_TYPE).map(([, v]) => numOf(v));
  // PrtMediaPathTypeTC: 3 longEdgeBindingDuplex, 4 shortEdgeBindingDuplex, 5 simplex.
  let duplex: boolean | undefined = caps.has_duplex;
  if (paths.some((p) => p === 3 || p === 4)) duplex = true;
  else if (duplex === undefined && paths.length > 0 && paths.every((p) => p === 5)) duplex = false;
  if (duplex !== undefined) {
    info.has_duplex = duplex;
    info.duplex_supported = duplex;
  }
  const hasPrinterMib = [...values.keys()].some((k) => k.startsWith('1.3.6.1.2.1.43.'));
  const isPrinterDevice = hasPrinterMib || column(values, HR_DEVICE_TYPE).some(([, v]) => v.value === HR_DEVICE_PRINTER) || !!deviceId;
  if (isPrinterDevice) info.device_type = info.is_copier || info.is_scanner || info.is_fax ? 'mfp' : 'printer';

  // --- meters and vendor OIDs
  if (Object.keys(meters).length > 0) info.meters = meters;
  const vendorOids = { ...(facts.oids ?? {}) };
  if (deviceIdOid) vendorOids.ieee1284_device_id = deviceIdOid;
  if (Object.keys(vendorOids).length > 0) learned.vendor_specific_oids = vendorOids;

  return { serial: info.serial, info, metrics, supplies, vendor: vendor?.name };
}

/** All vendor modules (for tests and the read planner). */
export { VENDORS };
