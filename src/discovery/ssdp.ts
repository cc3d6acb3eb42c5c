// Printers found by SSDP (UPnP): an M-SEARCH for urn:schemas-upnp-org:device:Printer:1 sent to
// 239.255.255.250:1900 when searching starts and every requeryMs; each answer's LOCATION (the
// device description URL, http://<ip>:<port>/...) gives the address read by IPP and SNMP like an
// mDNS announcement (announced.ts). Off by default (discovery.ssdp_enabled), as in the reference.
// Answers are HTTP-like header blocks from the LAN: bounded, and only an IPv4 literal is taken.
import type { Logger } from '../log/logger.js';
import type { AnnouncedPrinter } from './mdns.js';
import { queryEachInterface, type QueryRound } from './multicast.js';
import { ipv4Host } from './wsd.js';

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
}

export class SsdpSearcher {
  private requery?: NodeJS.Timeout;
  private round?: QueryRound;

  constructor(private readonly opts: SsdpSearcherOptions) {}

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
    this.opts.log.info('SSDP: stopped searching');
  }

  search(): void {
    this.round?.close();
    // One answer per address and round (a device answers once per interface, some twice).
    const seen = new Set<string>();
    this.round = queryEachInterface({
      payload: Buffer.from(M_SEARCH),
      group: SSDP_GROUP,
      port: SSDP_PORT,
      lingerMs: 10_000,
      maxBytes: MAX_SSDP_DATAGRAM,
      log: this.opts.log,
      what: 'SSDP M-SEARCH',
      onMessage: (msg) => {
        const a = parseSsdpAnswer(msg);
        if (!a || seen.has(a.address) || seen.size >= 1024) return;
        seen.add(a.address);
        this.opts.onAnnounce({
          address: a.address,
          name: a.usn ?? a.location,
          services: [],
          txt: a.uuid ? { uuid: a.uuid } : {},
          method: 'ssdp',
          seen: [`ssdp: ${a.st} at ${a.location}`],
        });
      },
    });
  }
}
