// Printers that announce themselves by mDNS/DNS-SD (RFC 6762/6763): AirPrint, Mopria and IPP
// Everywhere printers announce _ipp._tcp / _ipps._tcp, older ones _printer._tcp (LPD) and
// _pdl-datastream._tcp (port 9100). bonjour-service does the DNS (browsing, announcements,
// goodbyes); this groups one printer's services by its IPv4 address (a printer announces several
// at once: one read, not four) and says when its last service said goodbye.
//
// Everything here comes from the LAN: TXT keys and values are bounded, names are never resolved
// (the address read is the one announced, checked by the caller against the safety rules).
import { Bonjour, type Browser, type Service } from 'bonjour-service';
import type { Logger } from '../log/logger.js';
import { parseIPv4 } from '../snmp/ranges.js';
import { resourceOf } from '../ipp/client.js';

/** The DNS-SD service types browsed, as bonjour-service names them. */
export const PRINTER_SERVICE_TYPES = ['ipp', 'ipps', 'printer', 'pdl-datastream'] as const;

export interface AnnouncedPrinter {
  /** The IPv4 address announced (A record), else the address the announcement came from. */
  address: string;
  /** The announced host name (e.g. "printer-7.local"). */
  host?: string;
  /** The DNS-SD instance name ("Lab Printer"); WS-Discovery's endpoint, SSDP's USN. */
  name: string;
  /** Service types announced at this address, e.g. ["_ipp._tcp", "_ipps._tcp"]. */
  services: string[];
  /** TXT of the announced services, keys in lower case (RFC 6763 6.4: keys are case-insensitive). */
  txt: Record<string, string>;
  /** Where IPP answers: _ipp._tcp's port, else _ipps._tcp's (TLS); none when neither was announced. */
  ipp?: { port: number; tls: boolean; resource: string };
  /** How it announced itself: mDNS (the default), WS-Discovery (wsd.ts) or SSDP (ssdp.ts). */
  method?: AnnounceMethod;
  /** What was seen, for detection_reasons (WS-Discovery and SSDP; mDNS says its service types). */
  seen?: string[];
}

export type AnnounceMethod = 'mdns' | 'wsd' | 'ssdp';

export interface MdnsListenerOptions {
  log: Logger;
  onAnnounce(p: AnnouncedPrinter): void;
  /** The last service at the address said goodbye (TTL 0) or expired. */
  onGoodbye(p: { address: string; name: string; host?: string }): void;
  /** Services of one printer arriving within this are one announcement. */
  settleMs?: number;
  /** Browse queries are repeated this often (and interfaces joined since are joined). */
  requeryMs?: number;
}

const MAX_TXT_KEYS = 64;
const MAX_TXT_VALUE = 255;

/** TXT as bonjour-service decoded it, bounded, keys in lower case. */
export function txtOf(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [k, v] of Object.entries(raw as Record<string, unknown>).slice(0, MAX_TXT_KEYS)) {
    if (typeof v !== 'string' && !Buffer.isBuffer(v)) continue;
    const value = String(v).replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, MAX_TXT_VALUE);
    const key = k.toLowerCase().slice(0, 32);
    if (key && !(key in out)) out[key] = value;
  }
  return out;
}

function addressOf(s: Service): string | undefined {
  const v4 = (s.addresses ?? []).find((a) => parseIPv4(a) !== null);
  if (v4) return v4;
  const from = s.referer?.address;
  return from && parseIPv4(from) !== null ? from : undefined;
}

interface AtAddress {
  /** fqdn -> the service as last announced. */
  services: Map<string, Service>;
  timer?: NodeJS.Timeout;
}

export class MdnsListener {
  private bonjour?: Bonjour;
  private browsers: Browser[] = [];
  private requery?: NodeJS.Timeout;
  private readonly byAddress = new Map<string, AtAddress>();

  constructor(private readonly opts: MdnsListenerOptions) {}

  get running(): boolean {
    return this.bonjour !== undefined;
  }

  start(): void {
    if (this.bonjour) return;
    const { log } = this.opts;
    const bonjour = new Bonjour({}, (err: Error) => log.warn({ err: err.message }, 'mDNS: error'));
    this.bonjour = bonjour;
    // The multicast socket's errors (port 5353 taken, an interface gone) are reported, never thrown.
    const mdns = (bonjour as unknown as { server: { mdns: NodeJS.EventEmitter & { update?(): void } } }).server.mdns;
    mdns.on('error', (err: Error) => log.warn({ err: err.message }, 'mDNS: socket error'));
    mdns.on('warning', (err: Error) => log.debug({ err: err.message }, 'mDNS: socket warning'));
    for (const type of PRINTER_SERVICE_TYPES) {
      const b = bonjour.find({ type, protocol: 'tcp' });
      b.on('up', (s: Service) => this.seen(s));
      b.on('txt-update', (s: Service) => this.seen(s));
      b.on('srv-update', (s: Service) => this.seen(s));
      b.on('down', (s: Service) => this.gone(s));
      this.browsers.push(b);
    }
    const requeryMs = this.opts.requeryMs ?? 5 * 60_000;
    this.requery = setInterval(() => {
      mdns.update?.();
      for (const b of this.browsers) {
        b.expire();
        b.update();
      }
    }, requeryMs);
    this.requery.unref();
    log.info({ types: PRINTER_SERVICE_TYPES.map((t) => `_${t}._tcp`) }, 'mDNS: listening for printers');
  }

  stop(): void {
    if (!this.bonjour) return;
    clearInterval(this.requery);
    for (const b of this.browsers) b.stop();
    for (const a of this.byAddress.values()) clearTimeout(a.timer);
    this.byAddress.clear();
    this.browsers = [];
    this.bonjour.destroy();
    this.bonjour = undefined;
    this.opts.log.info('mDNS: stopped listening');
  }

  private seen(s: Service): void {
    const address = addressOf(s);
    if (!address || !s.fqdn) return;
    let at = this.byAddress.get(address);
    if (!at) {
      if (this.byAddress.size >= 4096) return; // a LAN flooding announcements does not grow this without end
      this.byAddress.set(address, (at = { services: new Map() }));
    }
    // A service that moved to another address is gone from the old one.
    for (const [other, o] of this.byAddress) if (other !== address && o.services.delete(s.fqdn) && o.services.size === 0) this.byAddress.delete(other);
    at.services.set(s.fqdn, s);
    // Wait a moment for the printer's other services: one announcement, one read.
    if (!at.timer) {
      const entry = at;
      at.timer = setTimeout(() => {
        entry.timer = undefined;
        if (this.byAddress.get(address) === entry) this.opts.onAnnounce(this.announced(address, entry));
      }, this.opts.settleMs ?? 150);
    }
  }

  private gone(s: Service): void {
    for (const [address, at] of this.byAddress) {
      if (!at.services.delete(s.fqdn)) continue;
      if (at.services.size > 0) continue;
      clearTimeout(at.timer);
      this.byAddress.delete(address);
      this.opts.onGoodbye({ address, name: s.name, host: s.host });
    }
  }

  private announced(address: string, at: AtAddress): AnnouncedPrinter {
    const all = [...at.services.values()];
    const ofType = (t: string) => all.find((s) => s.type === t);
    const ipp = ofType('ipp');
    const ipps = ofType('ipps');
    const main = ipp ?? ipps ?? all[0]!;
    // The IPP service's TXT first: it carries what IPP Everywhere defines (rp, UUID, adminurl ...).
    const txt: Record<string, string> = {};
    for (const s of [ipp, ipps, ...all]) if (s) for (const [k, v] of Object.entries(txtOf(s.txt))) if (!(k in txt)) txt[k] = v;
    const via = ipp ?? ipps;
    return {
      address,
      host: main.host,
      name: main.name,
      services: [...new Set(all.map((s) => `_${s.type}._${s.protocol ?? 'tcp'}`))].sort(),
      txt,
      ...(via ? { ipp: { port: via.port, tls: via === ipps && !ipp, resource: resourceOf(txtOf(via.txt).rp) } } : {}),
    };
  }
}
