// Printers found by SSDP (UPnP): an M-SEARCH for urn:schemas-upnp-org:device:Printer:1 sent to
// 239.255.255.250:1900 when searching starts and every requeryMs; each answer's LOCATION (the
// device description URL, http://<ip>:<port>/...) gives the address read by IPP and SNMP like an
// mDNS announcement (announced.ts). Off by default (discovery.ssdp_enabled), as in the reference.
// Answers are HTTP-like header blocks from the LAN: bounded, and only an IPv4 literal is taken.
// Each datagram is charged to its sender before it is read (source-guard.ts: a rate per source
// address), and the printers a round announces are capped per answering host and in total; what
// a flood made the searcher drop is in status().
import type { RemoteInfo } from 'node:dgram';
import type { Logger } from '../log/logger.js';
import type { AnnouncedPrinter } from './announced-printer.js';
import { queryEachInterface, type QueryRound } from './multicast.js';
import { ipv4Host } from './wsd.js';
import { SourceGuard, type GuardLimits, type GuardStatus } from './source-guard.js';

export const SSDP_GROUP = '239.255.255.250';
export const SSDP_PORT = 1900;
export const SSDP_PRINTER = 'urn:schemas-upnp-org:device:Printer:1';
const MAX_SSDP_DATAGRAM = 4096;

export const M_SEARCH = `M-SEARCH * HTTP/1.1\r\nHOST: ${SSDP_GROUP}:${SSDP_PORT}\r\nMAN: "ssdp:discover"\r\nMX: 2\r\nST: ${SSDP_PRINTER}\r\n\r\n`;

export interface SsdpAnswer {
  location: string;
  address: string;
  st: string;
  usn?: string;
  uuid?: string;
}

/** A 200 answer to the printer M-SEARCH with an IPv4 LOCATION, else undefined. */
export function parseSsdpAnswer(datagram: Buffer | string): SsdpAnswer | undefined {
  if (Buffer.byteLength(datagram) > MAX_SSDP_DATAGRAM) return undefined;
  const lines = String(datagram).split('\r\n');
  if (!/^HTTP\/1\.[01] 200\b/.test(lines[0] ?? '')) return undefined;
  // Header names are the sender's: none of them may find a prototype's property instead of its own.
  const h = Object.create(null) as Record<string, string>;
  for (const line of lines.slice(1, 32)) {
    const i = line.indexOf(':');
    if (i > 0) h[line.slice(0, i).trim().toLowerCase()] ??= line.slice(i + 1).replace(/[\x00-\x1f\x7f]+/g, ' ').trim().slice(0, 512);
  }
  if (h.st !== SSDP_PRINTER || !h.location) return undefined;
  const address = ipv4Host(h.location);
  if (!address) return undefined;
  const uuid = /^uuid:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/i.exec(h.usn ?? '')?.[1]?.toLowerCase();
  return { location: h.location, address, st: h.st, ...(h.usn ? { usn: h.usn } : {}), ...(uuid ? { uuid } : {}) };
}

export interface SsdpSearcherOptions {
  log: Logger;
  onAnnounce(p: AnnouncedPrinter): void;
  requeryMs?: number;
  limits?: Partial<GuardLimits>;
  /** The guard's clock (tests). */
  now?: () => number;
}

/**
 * A device answers an M-SEARCH once per interface and service (a few datagrams a round); 20 a
 * second from one address is far above that. The endpoints here are the printer addresses one
 * round announced (forgotten when the next round starts): 32 per answering host, 1,024 in all.
 */
export const SSDP_LIMITS: GuardLimits = { packetsPerSecond: 20, maxSources: 4096, maxEndpointsPerSource: 32, maxEndpoints: 1024, endpointTtlMs: Infinity };

export class SsdpSearcher {
  private requery?: NodeJS.Timeout;
  private round?: QueryRound;
  /** Printer address (LOCATION's host) -> the answer that announced it in this round. */
  private readonly guard: SourceGuard<string>;

  constructor(private readonly opts: SsdpSearcherOptions) {
    this.guard = new SourceGuard({ limits: { ...SSDP_LIMITS, ...opts.limits }, log: opts.log, what: 'SSDP', ...(opts.now ? { now: opts.now } : {}) });
  }

  /** What a flood made the searcher drop, and the addresses this round announced (GET /discover/status). */
  status(): GuardStatus {
    return this.guard.status();
  }

  get running(): boolean {
    return this.requery !== undefined;
  }

  start(): void {
    if (this.requery) return;
    this.requery = setInterval(() => this.search(), this.opts.requeryMs ?? 15 * 60_000);
    this.requery.unref();
    this.opts.log.info({ st: SSDP_PRINTER }, 'SSDP: searching for printers');
    this.search();
  }

  stop(): void {
    if (!this.requery) return;
    clearInterval(this.requery);
    this.requery = undefined;
    this.round?.close();
    this.guard.clear();
    this.opts.log.info('SSDP: stopped searching');
  }

  search(): void {
    this.round?.close();
    // One answer per address and round (a device answers once per interface, some twice).
    this.guard.clearEndpoints();
    this.round = queryEachInterface({
      payload: Buffer.from(M_SEARCH),
      group: SSDP_GROUP,
      port: SSDP_PORT,
      lingerMs: 10_000,
      maxBytes: MAX_SSDP_DATAGRAM,
      log: this.opts.log,
      what: 'SSDP M-SEARCH',
      onMessage: (msg, from) => this.received(msg, from),
    });
  }

  /** An answer from the LAN: charged to its sender before it is read; each printer address announced once a round. */
  received(msg: Buffer, from: Pick<RemoteInfo, 'address'>): void {
    if (!this.guard.allow(from.address)) return;
    const a = parseSsdpAnswer(msg);
    if (!a || this.guard.get(a.address) !== undefined) return;
    if (!this.guard.remember(a.address, from.address, a.location)) return;
    this.opts.onAnnounce({
      address: a.address,
      name: a.usn ?? a.location,
      services: [],
      txt: a.uuid ? { uuid: a.uuid } : {},
      method: 'ssdp',
      seen: [`ssdp: ${a.st} at ${a.location}`],
    });
  }
}
