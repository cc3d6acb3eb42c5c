// Printer status: HOST-RESOURCES hrPrinterDetectedErrorState / hrDeviceStatus, Printer-MIB
// prtAlertTable, prtCoverTable, and paper trays (prtInputTable).
import type { PaperTray } from '../../model/printer-info.js';
import { HR_DEVICE_STATUS, HR_PRINTER_DETECTED_ERROR_STATE, PRT_ALERT_TABLE, PRT_COVER_TABLE, PRT_INPUT_TABLE } from '../oids.js';
import type { OidValues } from '../types.js';
import { bytesOf, column, columnMap, numOf, percent, textOf } from './values.js';

/**
 * hrPrinterDetectedErrorState bits (RFC 2790 / RFC 3805 update): bit 0 is the most significant
 * bit of the first octet.
 */
export const ERROR_STATE_BITS: readonly string[] = [
  'Low paper', // 0 lowPaper
  'No paper', // 1 noPaper
  'Low toner', // 2 lowToner
  'No toner', // 3 noToner
  'Door open', // 4 doorOpen
  'Paper jam', // 5 jammed
  'Offline', // 6 offline
  'Service requested', // 7 serviceRequested
  'Input tray missing', // 8 inputTrayMissing
  'Output tray missing', // 9 outputTrayMissing
  'Marker supply missing', // 10 markerSupplyMissing
  'Output nearly full', // 11 outputNearFull
  'Output full', // 12 outputFull
  'Input tray empty', // 13 inputTrayEmpty
  'Overdue preventive maintenance', // 14 overduePreventMaint
];

/** Messages for the bits set in an hrPrinterDetectedErrorState octet string. */
export function decodeErrorState(buf: Buffer | undefined): string[] {
  const out: string[] = [];
  if (!buf) return out;
  for (let bit = 0; bit < ERROR_STATE_BITS.length; bit++) {
    const byte = buf[bit >> 3];
    if (byte === undefined) break;
    if (byte & (0x80 >> (bit & 7))) out.push(ERROR_STATE_BITS[bit]);
  }
  return out;
}

/** hrDeviceStatus (RFC 2790). */
export const HR_DEVICE_STATUS_NAMES: Record<number, string> = { 1: 'unknown', 2: 'running', 3: 'warning', 4: 'testing', 5: 'down' };

/** RFC 3805 PrtAlertCodeTC, as short human messages (used when an alert has no description). */
export const ALERT_CODES: Record<number, string> = {
  1: 'Other alert',
  2: 'Unknown alert',
  3: 'Cover open',
  4: 'Cover closed',
  5: 'Interlock open',
  6: 'Interlock closed',
  7: 'Configuration change',
  8: 'Paper jam',
  9: 'Subunit missing',
  10: 'Subunit life almost over',
  11: 'Subunit life over',
  12: 'Subunit almost empty',
  13: 'Subunit empty',
  14: 'Subunit almost full',
  15: 'Subunit full',
  16: 'Subunit near limit',
  17: 'Subunit at limit',
  18: 'Subunit opened',
  19: 'Subunit closed',
  20: 'Subunit turned on',
  21: 'Subunit turned off',
  22: 'Subunit offline',
  23: 'Subunit power saver',
  24: 'Subunit warming up',
  25: 'Subunit added',
  26: 'Subunit removed',
  27: 'Subunit resource added',
  28: 'Subunit resource removed',
  29: 'Subunit recoverable failure',
  30: 'Subunit unrecoverable failure',
  31: 'Subunit recoverable storage error',
  32: 'Subunit unrecoverable storage error',
  33: 'Subunit motor failure',
  34: 'Subunit memory exhausted',
  35: 'Subunit under temperature',
  36: 'Subunit over temperature',
  37: 'Subunit timing failure',
  38: 'Subunit thermistor failure',
  501: 'Door open',
  502: 'Door closed',
  503: 'Powered up',
  504: 'Powered down',
  505: 'Printer reset (NMS)',
  506: 'Printer reset (manual)',
  507: 'Ready to print',
  801: 'Input tray missing',
  802: 'Input media size change',
  803: 'Input media weight change',
  804: 'Input media type change',
  805: 'Input media colour change',
  806: 'Input media form parts change',
  807: 'Input media supply low',
  808: 'Input media supply empty',
  809: 'Input media change request',
  810: 'Manual input request',
  811: 'Input tray position failure',
  812: 'Input tray elevation failure',
  813: 'Cannot feed size selected',
  901: 'Output tray missing',
  902: 'Output tray almost full',
  903: 'Output tray full',
  904: 'Output mailbox select failure',
  1001: 'Fuser under temperature',
  1002: 'Fuser over temperature',
  1003: 'Fuser timing failure',
  1004: 'Fuser thermistor failure',
  1005: 'Adjusting print quality',
  1101: 'Toner empty',
  1102: 'Ink empty',
  1103: 'Print ribbon empty',
  1104: 'Toner almost empty',
  1105: 'Ink almost empty',
  1106: 'Print ribbon almost empty',
  1107: 'Waste toner receptacle almost full',
  1108: 'Waste ink receptacle almost full',
  1109: 'Waste toner receptacle full',
  1110: 'Waste ink receptacle full',
  1111: 'OPC life almost over',
  1112: 'OPC life over',
  1113: 'Developer almost empty',
  1114: 'Developer empty',
  1115: 'Toner cartridge missing',
  1301: 'Media path tray missing',
  1302: 'Media path tray almost full',
  1303: 'Media path tray full',
  1304: 'Cannot duplex media selected',
  1501: 'Interpreter memory increase',
  1502: 'Interpreter memory decrease',
  1503: 'Interpreter cartridge added',
  1504: 'Interpreter cartridge deleted',
  1505: 'Interpreter resource added',
  1506: 'Interpreter resource deleted',
  1507: 'Interpreter resource unavailable',
  1509: 'Interpreter complex page encountered',
  1801: 'Binary change entry removed',
};

/** Alert codes that report an event, not a condition needing attention. */
const INFORMATIONAL_CODES = new Set([4, 6, 7, 19, 20, 25, 26, 27, 28, 502, 503, 504, 505, 506, 507, 802, 803, 804, 805, 806, 1501, 1502, 1503, 1504, 1505, 1506, 1801]);

/**
 * Alert codes for conditions a person must come to the printer for (a cover or door open, a jam,
 * no paper). A printer's own description says them in its own words ("Cover is Open", "Jam Tray 1",
 * "Abdeckung offen"): the code's name is put before such a description, so that whoever reads
 * status_messages (the alert rules) knows the condition whatever words the printer chose.
 */
const CONDITION_CODES = new Set([3, 5, 8, 501, 808]);

/** prtAlertGroup value for the marker supplies table (PrtAlertGroupTC). */
const GROUP_MARKER_SUPPLIES = 11;

export interface Alert {
  index: string;
  severity?: number;
  group?: number;
  code?: number;
  description?: string;
  /** Text used in status_messages: the description, else the code's name. */
  message?: string;
}

/**
 * prtAlertTable rows. Alerts with a description keep it (led by the code's name for a condition,
 * see CONDITION_CODES); alerts without one get the alert code's name, except informational events
 * (power up, cover closed, ...).
 */
export function readAlerts(values: OidValues, charset?: string): Alert[] {
  const base = PRT_ALERT_TABLE;
  const sev = columnMap(values, `${base}.2`);
  const group = columnMap(values, `${base}.4`);
  const code = columnMap(values, `${base}.7`);
  const desc = columnMap(values, `${base}.8`);
  const idx = new Set<string>([...sev.keys(), ...code.keys(), ...desc.keys()]);
  const out: Alert[] = [];
  for (const index of idx) {
    const a: Alert = {
      index,
      severity: numOf(sev.get(index)),
      group: numOf(group.get(index)),
      code: numOf(code.get(index)),
      description: textOf(desc.get(index), charset),
    };
    if (a.description) a.message = conditionNamed(a.code, a.description);
    else if (a.code !== undefined && !INFORMATIONAL_CODES.has(a.code)) a.message = ALERT_CODES[a.code] ?? `Alert ${a.code}`;
    out.push(a);
  }
  return out.sort((x, y) => Number(x.index.split('.').pop()) - Number(y.index.split('.').pop()));
}

/** `description`, led by the code's name when the code is a condition and the text does not already say it. */
function conditionNamed(code: number | undefined, description: string): string {
  if (code === undefined || !CONDITION_CODES.has(code)) return description;
  const name = ALERT_CODES[code];
  return description.toLowerCase().includes(name.toLowerCase()) ? description : `${name}: ${description}`;
}

export function isSupplyAlert(a: Alert): boolean {
  return a.group === GROUP_MARKER_SUPPLIES || (a.code !== undefined && a.code >= 1101 && a.code <= 1115);
}

/** Status messages from hrPrinterDetectedErrorState, hrDeviceStatus and the alert table. */
export function statusMessages(values: OidValues, alerts: Alert[], printerDeviceIndex = '1'): string[] {
  const out: string[] = [];
  const add = (m: string | undefined) => {
    if (m && !out.includes(m)) out.push(m);
  };
  for (const [, v] of column(values, HR_PRINTER_DETECTED_ERROR_STATE)) {
    for (const m of decodeErrorState(bytesOf(v))) add(m);
  }
  // hrDeviceStatus of the printer device only (other rows are disks, network cards, ...).
  if (numOf(values.get(`${HR_DEVICE_STATUS}.${printerDeviceIndex}`)) === 5) add('Device down');
  for (const a of alerts) add(a.message);
  for (const m of openCovers(values)) add(m);
  return out;
}

/** PrtCoverStatusTC values that mean open: coverOpen (3), interlockOpen (5). */
const OPEN_COVER_STATUS: Record<number, string> = { 3: 'Cover open', 5: 'Interlock open' };

/**
 * prtCoverTable rows whose status says open, as "Cover open: Front Cover". Some printers report an
 * open cover only here, with nothing in the alert table or the error-state bits.
 */
export function openCovers(values: OidValues): string[] {
  const status = columnMap(values, `${PRT_COVER_TABLE}.3`);
  const descr = columnMap(values, `${PRT_COVER_TABLE}.2`);
  const out: string[] = [];
  for (const [index, v] of status) {
    const name = OPEN_COVER_STATUS[numOf(v) ?? 0];
    if (!name) continue;
    const d = textOf(descr.get(index));
    out.push(d ? `${name}: ${d}` : name);
  }
  return out;
}

/**
 * PrtSubUnitStatusTC as text: availability (low three bits: 0 idle, 2 standby, 4 active,
 * 6 busy, 1 on request, 3 broken, 5 unknown) plus 8 non-critical alerts, 16 critical alerts,
 * 32 off-line, 64 transitioning.
 */
export function subUnitStatus(v: number): string {
  const avail: Record<number, string> = {
    0: 'available_idle',
    2: 'available_standby',
    4: 'available_active',
    6: 'available_busy',
    1: 'unavailable_on_request',
    3: 'unavailable_broken',
    5: 'unknown',
    7: 'unknown',
  };
  const parts = [avail[v & 7]];
  if (v & 8) parts.push('non_critical_alerts');
  if (v & 16) parts.push('critical_alerts');
  if (v & 32) parts.push('offline');
  if (v & 64) parts.push('transitioning');
  return parts.join(',');
}

/** prtInputTable as PaperTray (contract 2.5); sentinels (-1, -2, -3) pass through. */
export function readTrays(values: OidValues, charset?: string): PaperTray[] {
  const b = PRT_INPUT_TABLE;
  const max = columnMap(values, `${b}.9`);
  const cur = columnMap(values, `${b}.10`);
  const status = columnMap(values, `${b}.11`);
  const mediaName = columnMap(values, `${b}.12`);
  const name = columnMap(values, `${b}.13`);
  const descr = columnMap(values, `${b}.18`);
  const mediaType = columnMap(values, `${b}.21`);
  const idx = new Set<string>([...max.keys(), ...cur.keys(), ...name.keys(), ...descr.keys()]);
  const out: PaperTray[] = [];
  for (const index of idx) {
    const m = numOf(max.get(index)) ?? -2;
    const c = numOf(cur.get(index)) ?? -2;
    const tray: PaperTray = { index: Number(index.split('.').pop()), current_level: c, max_capacity: m };
    const n = textOf(name.get(index), charset) ?? textOf(descr.get(index), charset);
    if (n) tray.name = n;
    const mt = [textOf(mediaType.get(index), charset), textOf(mediaName.get(index), charset)].find(
      (s) => s !== undefined && s.toLowerCase() !== 'unknown',
    );
    if (mt) tray.media_type = mt;
    const p = percent(c, m);
    if (p !== undefined) tray.level_percent = p;
    const s = numOf(status.get(index));
    if (s !== undefined) tray.status = subUnitStatus(s);
    out.push(tray);
  }
  return out.sort((x, y) => x.index - y.index);
}
