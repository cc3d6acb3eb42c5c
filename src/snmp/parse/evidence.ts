// Is a host that answered SNMP a printer? Sites are full of SNMP agents that are not printers
// (servers running Net-SNMP, switches, UPSes, NAS boxes, cameras): answering `public` proves
// nothing. A printer shows itself in one of the ways printers' agents do:
//   - Printer-MIB (RFC 3805): any value answered under 1.3.6.1.2.1.43 (prtGeneral, prtMarker,
//     prtMarkerSupplies ...);
//   - HOST-RESOURCES-MIB (RFC 2790): an hrDeviceTable row typed hrDevicePrinter, or a row of
//     hrPrinterTable (hrPrinterStatus);
//   - an IEEE 1284 Device ID naming a maker or model, in the PWG Port Monitor MIB or one of the
//     vendor OIDs that carry it (oids.ts VENDOR_DEVICE_ID_OIDS);
//   - a maker's private printer MIB: the vendor module the host's identity points to (vendors/)
//     found printer data there: page counters, meters or supplies. A model or serial alone is not
//     enough: makers' enterprise numbers also cover their switches, cameras and servers.
// Any one suffices. What is read for this comes from the read plan (oids.ts): the Printer-MIB
// and hrDevice/hrPrinter walks, the 1284 GETs and the vendor's GETs and walks.
import {
  HR_DEVICE_DESCR,
  HR_DEVICE_PRINTER,
  HR_DEVICE_TYPE,
  HR_PRINTER_STATUS,
  PPM_PRINTER_IEEE1284_DEVICE_ID,
  SYS_DESCR,
  SYS_OBJECT_ID,
  VENDOR_DEVICE_ID_OIDS,
} from '../oids.js';
import type { OidValues, SnmpValue } from '../types.js';
import { vendorFor } from '../vendors/index.js';
import type { VendorFacts } from '../vendors/types.js';
import { parseDeviceId } from './device-id.js';
import { makerOfDeviceId } from './identity.js';
import { column, enterpriseOf, text, textOf } from './values.js';

export type PrinterEvidence = { printer: true; reasons: string[] } | { printer: false; why: string };

const PRINTER_MIB = '1.3.6.1.2.1.43';

/** Printer-MIB groups by their arc under 43, to say which ones answered. */
const PRINTER_MIB_GROUPS: Record<string, string> = {
  '5': 'prtGeneral',
  '6': 'prtCover',
  '7': 'prtLocalization',
  '8': 'prtInput',
  '9': 'prtOutput',
  '10': 'prtMarker',
  '11': 'prtMarkerSupplies',
  '12': 'prtMarkerColorant',
  '13': 'prtMediaPath',
  '14': 'prtChannel',
  '15': 'prtInterpreter',
  '16': 'prtConsoleDisplayBuffer',
  '17': 'prtConsoleLight',
  '18': 'prtAlert',
};

/** hrDeviceType values (HOST-RESOURCES-TYPES, hrDeviceTypes 1.3.6.1.2.1.25.3.1.N), to describe a host. */
const HR_DEVICE_TYPES: Record<string, string> = {
  '1': 'other',
  '2': 'unknown',
  '3': 'processor',
  '4': 'network',
  '5': 'printer',
  '6': 'disk',
  '10': 'video',
  '11': 'audio',
  '12': 'coprocessor',
  '13': 'keyboard',
  '14': 'modem',
  '15': 'parallel port',
  '16': 'pointing',
  '17': 'serial port',
  '18': 'tape',
  '19': 'clock',
  '20': 'volatile memory',
  '21': 'non-volatile memory',
};

/** An answer that carries a value (noSuchObject and friends never reach the map; NULL is no answer). */
function answered(v: SnmpValue | undefined): boolean {
  return v !== undefined && v.value !== null;
}

function short(s: string, max = 60): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function printerMibGroups(values: OidValues): string[] {
  const groups = new Set<string>();
  for (const [oid, v] of values) {
    if (!oid.startsWith(`${PRINTER_MIB}.`) || !answered(v)) continue;
    const arc = oid.slice(PRINTER_MIB.length + 1).split('.')[0];
    groups.add(PRINTER_MIB_GROUPS[arc] ?? `Printer-MIB ${arc}`);
  }
  return [...groups];
}

function deviceIds(values: OidValues): Array<{ oid: string; manufacturer?: string; model?: string }> {
  const oids = [...column(values, PPM_PRINTER_IEEE1284_DEVICE_ID).map(([s]) => `${PPM_PRINTER_IEEE1284_DEVICE_ID}.${s}`), ...VENDOR_DEVICE_ID_OIDS];
  const out: Array<{ oid: string; manufacturer?: string; model?: string }> = [];
  for (const oid of oids) {
    const id = parseDeviceId(text(values, oid));
    if (id && (id.manufacturer || id.model)) out.push({ oid, manufacturer: id.manufacturer, model: id.model });
  }
  return out;
}

/** What the vendor module found that only a printer reports; empty when none. */
function vendorPrinterData(facts: VendorFacts): string[] {
  const found: string[] = [];
  if (facts.page_count || facts.mono_pages || facts.color_pages) found.push('page counters');
  if (facts.scan_count) found.push('scan counter');
  if (facts.meters && Object.keys(facts.meters).length > 0) found.push('meters');
  if (facts.supplies && facts.supplies.length > 0) found.push('supplies');
  return found;
}

function vendorEvidence(values: OidValues): string | undefined {
  const sysObjectId = values.get(SYS_OBJECT_ID)?.value;
  const enterprise = enterpriseOf(typeof sysObjectId === 'string' ? sysObjectId : undefined);
  const texts = [text(values, `${HR_DEVICE_DESCR}.1`), text(values, SYS_DESCR)];
  const maker = deviceIds(values).map((d) => makerOfDeviceId(d.manufacturer)).find((m) => m !== undefined);
  const vendor = vendorFor(enterprise, texts, maker);
  if (!vendor?.parse) return undefined;
  let facts: VendorFacts;
  try {
    facts = vendor.parse({ values });
  } catch {
    return undefined; // a vendor module that chokes on odd values proves nothing
  }
  const found = vendorPrinterData(facts);
  return found.length > 0 ? `${vendor.name} printer MIB: ${found.join(', ')}` : undefined;
}

/** The host's hrDevice rows as "2 processor, 3 network", for saying what it is instead. */
function hrDeviceSummary(values: OidValues): string | undefined {
  const counts = new Map<string, number>();
  for (const [, v] of column(values, HR_DEVICE_TYPE)) {
    const t = typeof v.value === 'string' && v.value.startsWith('1.3.6.1.2.1.25.3.1.') ? v.value.slice('1.3.6.1.2.1.25.3.1.'.length) : '';
    const name = HR_DEVICE_TYPES[t] ?? 'other';
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  if (counts.size === 0) return undefined;
  return [...counts].map(([name, n]) => `${n} ${name}`).join(', ');
}

/** Decides from what a host answered whether it is a printer, and says why (or why not). */
export function printerEvidence(values: OidValues): PrinterEvidence {
  const reasons: string[] = [];

  const groups = printerMibGroups(values);
  if (groups.length > 0) reasons.push(`Printer-MIB answered (${groups.join(', ')})`);

  const printerRows = column(values, HR_DEVICE_TYPE).filter(([, v]) => v.value === HR_DEVICE_PRINTER);
  for (const [idx] of printerRows.slice(0, 4)) {
    const descr = text(values, `${HR_DEVICE_DESCR}.${idx}`);
    reasons.push(`hrDeviceType.${idx} = hrDevicePrinter${descr ? ` ("${short(descr)}")` : ''}`);
  }
  const status = column(values, HR_PRINTER_STATUS).filter(([, v]) => answered(v));
  if (status.length > 0) reasons.push(`hrPrinterStatus answered (row ${status.map(([i]) => i).slice(0, 4).join(', ')})`);

  const ids = deviceIds(values);
  if (ids.length > 0) {
    const id = ids[0];
    const what = [id.manufacturer, id.model].filter(Boolean).join(' ');
    reasons.push(`IEEE 1284 Device ID at ${id.oid} ("${short(what)}")`);
  }

  const vendor = vendorEvidence(values);
  if (vendor) reasons.push(vendor);

  if (reasons.length > 0) return { printer: true, reasons };

  const sysDescr = textOf(values.get(SYS_DESCR));
  const sysObjectId = values.get(SYS_OBJECT_ID)?.value;
  const seen = [
    sysDescr ? `sysDescr "${short(sysDescr)}"` : 'no sysDescr',
    typeof sysObjectId === 'string' ? `sysObjectID ${sysObjectId}` : undefined,
  ].filter(Boolean);
  const devices = hrDeviceSummary(values);
  return {
    printer: false,
    why:
      `answers SNMP (${seen.join(', ')}), no Printer-MIB, no hrDevicePrinter, no hrPrinterStatus, ` +
      `no 1284 Device ID, no printer data in a maker's MIB${devices ? `; its hrDeviceTable lists ${devices}` : ''}`,
  };
}
