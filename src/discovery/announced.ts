// Printers that announced themselves by mDNS: each announcement is checked against the safety
// rules, read by IPP (and by SNMP when it answers, at the same time), and stored as ONE record per
// physical printer (merged by serial, else printer-uuid, else MAC). A goodbye marks the record,
// never deletes it. Saved IPP-only printers are polled here too (readIppDevice).
import type { Device } from '../model/device.js';
import type { Settings } from '../settings/settings.js';
import type { DeviceStore } from '../store/devices.js';
import { readHost } from '../snmp/scan.js';
import { inAllowedRanges, localSubnets, parseCidr, parseIPv4, parseRangesText } from '../shared/ranges.js';
import { parsePrinter, readPlan } from '../snmp/parse/printer.js';
import type { SnmpCredential } from '../snmp/client.js';
import { readNetworkPrinter, type IppTarget } from '../ipp/client.js';
import { printQueueOf, type PrintQueue } from '../ipp/print-queue.js';
import { announcedBy, combineObservations, ippMetrics, ippObservation, type Announcement } from '../ipp/observation.js';
import type { Observation } from '../model/observation.js';
import type { AnnouncedPrinter, AnnounceMethod } from './announced-printer.js';
import { OFFLINE } from './status-lines.js';

/** The status line of a printer whose last mDNS service said goodbye. */
export const SAID_GOODBYE = `${OFFLINE}said goodbye on mDNS`;
/** How an announced printer went: it said goodbye (mDNS TTL 0, a Bye), or its announcement expired unanswered. */
export type GoneWhy = 'goodbye' | 'expired';
const METHOD_NAME: Record<AnnounceMethod, string> = { mdns: 'mDNS', wsd: 'WS-Discovery', ssdp: 'SSDP' };
/** The status line of a printer that said goodbye by the given method, or whose announcement expired. */
export function saidGoodbye(method: AnnounceMethod = 'mdns', why: GoneWhy = 'goodbye'): string {
  return why === 'goodbye' ? `${OFFLINE}said goodbye on ${METHOD_NAME[method]}` : `${OFFLINE}no longer announced on ${METHOD_NAME[method]} (its announcement expired unanswered)`;
}
const isGoodbyeLine = (m: string) => m.startsWith(OFFLINE);

/**
 * Why an announced address may not be contacted, or undefined when it may: it must be on one of
 * the box's own subnets (never beyond its /24, docs/decisions/0017-scan-scope.md) or in the
 * configured ranges, and inside discovery.allowed_ranges.
 */
export function refusal(address: string, s: Settings, subnets = localSubnets()): string | undefined {
  const n = parseIPv4(address);
  if (n === null) return 'not an IPv4 address';
  if (!inAllowedRanges(address, s.discovery.allowed_ranges)) return 'outside discovery.allowed_ranges';
  const own = subnets.some((sub) => {
    const c = parseCidr(`${sub.address}/${Math.max(sub.prefix, 24)}`)!;
    const mask = c.prefix === 0 ? 0 : (0xffffffff << (32 - c.prefix)) >>> 0;
    return ((n & mask) >>> 0) === ((parseIPv4(sub.address)! & mask) >>> 0);
  });
  if (own) return undefined;
  if (s.discovery.manual_ranges && parseRangesText(s.discovery.ranges_text).includes(address)) return undefined;
  return "not on the box's own subnets nor in the configured ranges";
}

/** What answered IPP is a print queue on a print server (CUPS, Windows), not a printer. */
export interface QueueRead {
  queue: PrintQueue;
  address: string;
}

export interface AnnouncedRead {
  observation: Observation;
  metrics: { page_count?: number; mono_pages?: number; color_pages?: number; toner_levels?: Record<string, unknown> };
  /** Where IPP answered, kept on the record so that polls read it there again. */
  ipp?: IppTarget;
}

export interface ReadContext {
  settings: Settings;
  credentials: SnmpCredential[];
  signal: AbortSignal;
  now: number;
  /** The SNMP observation builder of discovery/service.ts. */
  snmpObservation(parsed: ReturnType<typeof parsePrinter>, ip: string, now: number): Observation | undefined;
}

/** Reads an announced printer by IPP and SNMP at once; undefined (with why) when neither gave a record. */
export async function readAnnounced(p: AnnouncedPrinter, ctx: ReadContext): Promise<AnnouncedRead | QueueRead | { error: string }> {
  const target: IppTarget = p.ipp ? { address: p.address, ...p.ipp } : { address: p.address, port: 631, resource: '/ipp/print', tls: false };
  const announcement: Announcement = { services: p.services, txt: p.txt, host: p.host, ...(p.method ? { method: p.method } : {}), ...(p.seen ? { seen: p.seen } : {}) };
  return readBoth(target, announcement, ctx);
}

/**
 * After IPP answered, how long a silent SNMP agent is still waited for. A printer that answers
 * SNMP does so within milliseconds on a LAN; one that does not would hold the listing for the
 * whole SNMP timeout (the goal: listed within 2 s of its announcement).
 */
export const SNMP_GRACE_MS = 250;

async function readBoth(target: IppTarget, announcement: Announcement | undefined, ctx: ReadContext, ippTimeoutMs = Math.max(2000, ctx.settings.discovery.snmp_timeout_ms)): Promise<AnnouncedRead | QueueRead | { error: string }> {
  const { settings: s, now } = ctx;
  // SNMP gets its own abort (cut when it stays silent), also cut by the service's.
  const snmpAbort = new AbortController();
  const cut = () => snmpAbort.abort();
  ctx.signal.addEventListener('abort', cut, { once: true });
  let snmpAnswered = false;
  let answeredNow: () => void = () => {};
  const answered = new Promise<void>((r) => (answeredNow = r));
  const snmpRead =
    s.discovery.enable_snmp && ctx.credentials.length
      ? readHost(target.address, {
          credentials: ctx.credentials,
          timeoutMs: s.discovery.snmp_timeout_ms,
          allowedRanges: s.discovery.allowed_ranges,
          port: s.snmp.port,
          // Called once the agent answered the identity probe: from then on its read is waited for.
          planRead: (identity, address) => {
            snmpAnswered = true;
            answeredNow();
            return readPlan(identity, address);
          },
          signal: snmpAbort.signal,
        }).catch(() => null)
      : Promise.resolve(null);
  let snmpDone = false;
  void snmpRead.then(() => (snmpDone = true));
  const ipp = await readNetworkPrinter(target, { timeoutMs: ippTimeoutMs, allowedRanges: s.discovery.allowed_ranges, signal: ctx.signal }).then(
    (state) => ({ state }),
    (err: Error) => ({ error: err.message }),
  );
  let snmp: Awaited<typeof snmpRead> = null;
  if ('error' in ipp || snmpDone || snmpAnswered) snmp = await snmpRead;
  else {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([answered, snmpRead, new Promise<void>((r) => (timer = setTimeout(r, SNMP_GRACE_MS)))]);
    clearTimeout(timer);
    if (snmpAnswered || snmpDone) snmp = await snmpRead;
    else {
      snmpAbort.abort();
      await snmpRead;
    }
  }
  ctx.signal.removeEventListener('abort', cut);
  // A print server's queue answers IPP like a printer: it is listed as a queue, whatever SNMP said
  // (the server's own SNMP agent, if any, describes the server).
  const queue = 'state' in ipp ? printQueueOf({ txt: announcement?.txt, attributes: ipp.state, resource: target.resource }) : undefined;
  if (queue) return { queue, address: target.address };
  const ippObs = 'state' in ipp ? ippObservation({ ip: target.address, port: target.port, tls: target.tls, state: ipp.state, now, announcement }) : undefined;
  const parsed = snmp && !snmp.partial ? parsePrinter(snmp.values, target.address, new Date(now)) : undefined;
  const snmpObs = parsed ? ctx.snmpObservation(parsed, target.address, now) : undefined;
  if (snmpObs) snmpObs.discoveryMethods = [...announcedBy(announcement), 'snmp'];
  if (snmpObs && ippObs) return { observation: combineObservations(snmpObs, ippObs), metrics: parsed!.metrics, ipp: target };
  if (snmpObs) return { observation: snmpObs, metrics: parsed!.metrics };
  if (ippObs && 'state' in ipp) return { observation: ippObs, metrics: ippMetrics(ipp.state), ipp: target };
  return { error: 'error' in ipp ? ipp.error : 'the printer gave neither a serial nor a printer-uuid' };
}

/** Where a record's printer answers IPP, as stored by the last announced read. */
export function ippTargetOf(d: Device): IppTarget | undefined {
  const t = (d.raw_data as { ipp?: unknown } | undefined)?.ipp as Partial<IppTarget> | undefined;
  if (!t || typeof t.port !== 'number' || typeof t.resource !== 'string') return undefined;
  return { address: d.ip, port: t.port, resource: t.resource, tls: t.tls === true };
}

/** A saved IPP-only printer, polled by IPP (SNMP too when it has started answering). */
export async function readIppDevice(d: Device, ctx: ReadContext): Promise<AnnouncedRead | { error: string }> {
  const target = ippTargetOf(d) ?? { address: d.ip, port: 631, resource: '/ipp/print', tls: false };
  const read = await readBoth(target, undefined, ctx);
  return 'queue' in read ? { error: `a print queue (${read.queue.queue} on a print server) answers there, not the printer` } : read;
}

/**
 * A host a range scan found with port 631 open and no SNMP answer (discovery/port-probe.ts): read
 * by IPP at IPP Everywhere's resource, plain first, then over TLS on the same port when the plain
 * request failed (a printer that only speaks ipps there). SNMP is not asked again.
 *
 * Both attempts share one budget, `timeoutMs` (default: the announced reads' IPP timeout): a port
 * that accepts and then says nothing costs the scan one timeout, as a silent SNMP agent does, not
 * one per attempt. A plain request to a TLS-only port fails at once (the TLS stack rejects it), so
 * the TLS attempt gets most of the budget when it is the one that can succeed; after a plain
 * request that used it all, TLS is not tried.
 */
export async function readProbedIpp(address: string, ctx: ReadContext, port = 631, timeoutMs = Math.max(2000, ctx.settings.discovery.snmp_timeout_ms)): Promise<AnnouncedRead | QueueRead | { error: string }> {
  const ippOnly = { ...ctx, credentials: [] };
  const deadline = Date.now() + timeoutMs;
  const plain = await readBoth({ address, port, resource: '/ipp/print', tls: false }, undefined, ippOnly, timeoutMs);
  if (!('error' in plain) || ctx.signal.aborted) return plain;
  const left = deadline - Date.now();
  if (left < MIN_TLS_ATTEMPT_MS) return { error: `${plain.error}; over TLS: not tried, the ${timeoutMs} ms were spent` };
  const tls = await readBoth({ address, port, resource: '/ipp/print', tls: true }, undefined, ippOnly, left);
  return 'error' in tls ? { error: `${plain.error}; over TLS: ${tls.error}` } : tls;
}

/** Below this, what is left of a probed read's budget is not worth a TLS handshake and a request. */
const MIN_TLS_ATTEMPT_MS = 100;

/**
 * The record an observation belongs to (one record per physical printer): the one with
 * its serial; else the one with its printer-uuid; else the one with its MAC address, when one of
 * the two has no serial of its own (a `UUID-` or `MAC-` key: two different serials are two
 * printers). The caller gives the observation that record's key.
 */
export function findSamePrinter(devices: Pick<DeviceStore, 'get' | 'withPrinterUuid' | 'withMac'>, o: Observation): Device | undefined {
  const bySerial = devices.get(o.serial);
  if (bySerial) return bySerial;
  const uuid = typeof o.printerInfo.printer_uuid === 'string' && o.printerInfo.printer_uuid !== '' ? o.printerInfo.printer_uuid : undefined;
  const mac = o.fields.mac_address?.toLowerCase();
  const keyless = (serial: string) => /^(UUID|MAC)-/.test(serial);
  // Indexed lookups (store migration 15): an announced read costs the same however many records exist.
  return (
    (uuid ? devices.withPrinterUuid(uuid).find((d) => !d.is_usb) : undefined) ??
    (mac ? devices.withMac(mac).find((d) => !d.is_usb && (keyless(d.serial) || keyless(o.serial))) : undefined)
  );
}

/** Records at an address whose printer was seen by `method` (the ones its goodbye concerns). */
export function announcedAt(devices: Pick<DeviceStore, 'atAddress'>, address: string, method: AnnounceMethod = 'mdns'): Device[] {
  return devices.atAddress(address).filter((d) => Array.isArray(d.printer_info?.discovery_methods) && (d.printer_info.discovery_methods as string[]).includes(method));
}

/** A printer that said goodbye or whose announcement expired: kept, said to be gone, last_seen untouched. */
export function markGone(d: Device, now: number, method: AnnounceMethod = 'mdns', why: GoneWhy = 'goodbye'): Device {
  const line = saidGoodbye(method, why);
  const others = (d.status_messages ?? []).filter((m) => !isGoodbyeLine(m));
  const status_messages = [line, ...others].slice(0, 32);
  // PrinterInfo carries the status lines the listings show: it says so too.
  const printer_info = d.printer_info ? { ...d.printer_info, status_messages } : d.printer_info;
  return { ...d, status_messages, printer_info, raw_data: { ...(d.raw_data ?? {}), [`${method}_goodbye_at`]: new Date(now).toISOString() } };
}

/** `d` with where its printer answers IPP (raw_data.ipp), so that polls read it there again. */
export function withIppTarget(d: Device, ipp: IppTarget | undefined): Device {
  if (!ipp) return d;
  return { ...d, raw_data: { ...(d.raw_data ?? {}), ipp: { port: ipp.port, resource: ipp.resource, tls: ipp.tls } } };
}

/** Whether an IPP read is of the record's printer: its serial, or its printer-uuid. */
export function sameIppPrinter(d: Device, o: Observation): boolean {
  if (o.serial === d.serial) return true;
  const uuid = o.printerInfo.printer_uuid;
  return typeof uuid === 'string' && uuid !== '' && d.printer_info?.printer_uuid === uuid;
}
