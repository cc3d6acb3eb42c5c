// Printers that announce themselves by mDNS/DNS-SD (RFC 6762/6763): AirPrint, Mopria and IPP
// Everywhere printers announce _ipp._tcp / _ipps._tcp, older ones _printer._tcp (LPD) and
// _pdl-datastream._tcp (port 9100). This is the browser: the sockets (multicast-dns, one per
// interface of the box) and the timers; what the records mean, how long they live and when to ask
// again is mdns-cache.ts. One printer's services are grouped by its IPv4 address (a printer
// announces several at once: one read, not four), and the listener says when its last service
// said goodbye or stopped answering.
//
// One socket per IPv4 interface, each sending from that interface: a query leaves every
// interface whether or not the box has a default route. They all listen on 0.0.0.0:5353, so
// Linux hands each of them every mDNS packet of every interface: a packet is read by the socket
// of the interface whose subnet it came from (once), one from no own subnet by the first socket.
//
// Everything here comes from the LAN: TXT keys and values are bounded, names are never resolved
// through the system (the address read is the one announced, else the packet's source, checked
// by the caller against the safety rules), and a flood is capped and counted (mdns-cache.ts).
import { networkInterfaces } from 'node:os';
import type { RemoteInfo } from 'node:dgram';
import makeMdns from 'multicast-dns';
import type { Packet } from 'dns-packet';
import type { Logger } from '../log/logger.js';
import type { AnnouncedPrinter } from './announced-printer.js';
import { DEFAULT_LIMITS, MdnsCache, type CacheLimits, type CacheResult, type GoneWhy, type Question } from './mdns-cache.js';

export { txtOf } from './mdns-cache.js';

/** The DNS-SD service types browsed (_<type>._tcp.local). */
export const PRINTER_SERVICE_TYPES = ['ipp', 'ipps', 'printer', 'pdl-datastream'] as const;

export interface OwnInterface {
  name: string;
  address: string;
  netmask: string;
}

export interface MdnsStatus {
  /** The interfaces listened on, with the last error of one that failed (bind or send). */
  interfaces: { name: string; address: string; error?: string }[];
  /** What a flooding LAN made the cache drop since start(). */
  dropped: { rate_limited: number; over_caps: number };
  /** Services (instance names) remembered now, and the source addresses whose rate is tracked. */
  services: number;
  sources: number;
  limits: { packets_per_second: number; services_per_source: number; services: number; max_ttl_s: number };
}

export interface MdnsListenerOptions {
  log: Logger;
  onAnnounce(p: AnnouncedPrinter): void;
  /** The last service at the address said goodbye (TTL 0) or expired (stopped answering). */
  onGoodbye(p: { address: string; name: string; host?: string; why: GoneWhy }): void;
  /** Services of one printer arriving within this are one announcement. */
  settleMs?: number;
  /** The browse queries are repeated this often (after the first three at start). */
  requeryMs?: number;
  /** The box's interfaces are looked at again this often (added ones joined, gone ones closed). */
  interfacesMs?: number;
  /** The clock of the cache (tests). */
  now?: () => number;
  /** The box's up, non-loopback IPv4 interfaces (tests); default os.networkInterfaces(). */
  interfaces?: () => OwnInterface[];
  limits?: Partial<CacheLimits>;
  /** UDP port (tests; mDNS is 5353). */
  port?: number;
}

/** The box's up, non-loopback IPv4 interfaces (libuv lists only interfaces that are up). */
export function ownInterfaces(): OwnInterface[] {
  const out: OwnInterface[] = [];
  for (const [name, list] of Object.entries(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) out.push({ name, address: a.address, netmask: a.netmask });
  }
  return out;
}

const TICK_MS = 500;
const FLOOD_LOG_MS = 60_000;
/** Questions per query packet (well under the 9000-byte mDNS packet). */
const QUESTIONS_PER_PACKET = 32;

const toInt = (ip: string) => ip.split('.').reduce((n, o) => ((n << 8) | Number(o)) >>> 0, 0);
const sameSubnet = (a: string, b: string, mask: string) => ((toInt(a) & toInt(mask)) >>> 0) === ((toInt(b) & toInt(mask)) >>> 0);

interface Socket extends OwnInterface {
  key: string;
  mdns: ReturnType<typeof makeMdns>;
  error?: string;
  /** Errors already logged for this interface: each is logged once. */
  logged: Set<string>;
}

export class MdnsListener {
  private cache?: MdnsCache;
  private readonly sockets = new Map<string, Socket>();
  private timers: NodeJS.Timeout[] = [];
  /** Printer address -> the settle window's timer and the address it moved from. */
  private readonly pending = new Map<string, { timer: NodeJS.Timeout; previousAddress?: string }>();
  private lastInterfaceCheck = 0;
  private flood = { loggedAt: -Infinity, rate_limited: 0, over_caps: 0 };

  constructor(private readonly opts: MdnsListenerOptions) {}

  get running(): boolean {
    return this.cache !== undefined;
  }

  status(): MdnsStatus {
    const size = this.cache?.size();
    const limits = { ...DEFAULT_LIMITS, ...this.opts.limits };
    return {
      interfaces: [...this.sockets.values()].map((s) => ({ name: s.name, address: s.address, ...(s.error ? { error: s.error } : {}) })),
      dropped: this.cache?.dropped() ?? { rate_limited: 0, over_caps: 0 },
      services: size?.instances ?? 0,
      sources: size?.sources ?? 0,
      limits: { packets_per_second: limits.packetsPerSecond, services_per_source: limits.maxInstancesPerSource, services: limits.maxInstances, max_ttl_s: limits.maxTtlS },
    };
  }

  start(): void {
    if (this.cache) return;
    const now = this.opts.now ?? Date.now;
    this.cache = new MdnsCache({ now, ...(this.opts.limits ? { limits: this.opts.limits } : {}) });
    this.flood = { loggedAt: -Infinity, rate_limited: 0, over_caps: 0 };
    this.checkInterfaces();
    // RFC 6762 5.2: the first browse queries 1 s apart, then doubling; later ones rarely (the
    // cache asks again for what it holds before it runs out).
    const browse = () => this.send(this.cache!.browseQuestions());
    this.later(1000, browse);
    this.later(3000, browse);
    this.every(this.opts.requeryMs ?? 5 * 60_000, browse);
    this.every(TICK_MS, () => this.handle(this.cache!.tick()));
    this.every(this.opts.interfacesMs ?? 30_000, () => this.checkInterfaces());
    this.opts.log.info(
      { types: PRINTER_SERVICE_TYPES.map((t) => `_${t}._tcp`), interfaces: [...this.sockets.values()].map((s) => `${s.name} ${s.address}`) },
      'mDNS: listening for printers',
    );
  }

  stop(): void {
    if (!this.cache) return;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const s of this.sockets.values()) s.mdns.destroy();
    this.sockets.clear();
    this.cache = undefined;
    this.opts.log.info('mDNS: stopped listening');
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(fn, ms);
    t.unref();
    this.timers.push(t);
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.push(t);
  }

  /** Joins interfaces that came up (and sends them the browse queries), closes those gone. */
  private checkInterfaces(): void {
    if (!this.cache) return;
    this.lastInterfaceCheck = Date.now();
    const seen = new Set<string>();
    for (const i of (this.opts.interfaces ?? ownInterfaces)()) {
      const key = `${i.name}/${i.address}`;
      seen.add(key);
      if (!this.sockets.has(key)) this.open(key, i);
    }
    for (const [key, s] of this.sockets) {
      if (seen.has(key)) continue;
      this.sockets.delete(key);
      s.mdns.destroy();
      this.opts.log.info({ interface: s.name, address: s.address }, 'mDNS: interface gone, no longer listened on');
    }
  }

  private open(key: string, i: OwnInterface): void {
    const { log } = this.opts;
    const mdns = makeMdns({ interface: i.address, bind: '0.0.0.0', port: this.opts.port ?? 5353, reuseAddr: true, ttl: 255, loopback: false });
    const s: Socket = { ...i, key, mdns, logged: new Set() };
    this.sockets.set(key, s);
    // Socket errors (bind, joining the group) are reported; a malformed packet is only dropped.
    const failed = (err: Error & { code?: string; syscall?: string }) => {
      if (!err.syscall && !err.code) return;
      this.failed(s, err, 'socket error');
    };
    mdns.on('error', failed);
    mdns.on('warning', failed);
    mdns.on('packet', (packet: Packet, from: RemoteInfo) => this.packet(s, packet, from));
    mdns.once('ready', () => {
      if (this.sockets.get(key) === s && this.cache) this.sendOn(s, this.cache.browseQuestions());
    });
    log.debug({ interface: i.name, address: i.address }, 'mDNS: listening on interface');
  }

  private failed(s: Socket, err: Error & { code?: string }, what: string): void {
    const message = err.code ? `${err.code}: ${err.message}` : err.message;
    s.error = message;
    if (s.logged.has(message)) return;
    s.logged.add(message);
    this.opts.log.warn({ interface: s.name, address: s.address, err: message }, `mDNS: ${what}`);
  }

  private packet(s: Socket, packet: Packet, from: RemoteInfo): void {
    if (!this.cache || this.sockets.get(s.key) !== s) return;
    if (!this.isMine(s, from.address)) return;
    this.handle(this.cache.ingest(packet, from));
  }

  /** Whether this interface's socket reads a packet from `address` (each packet read once). */
  private isMine(s: Socket, address: string): boolean {
    if (sameSubnet(address, s.address, s.netmask)) return true;
    for (const o of this.sockets.values()) if (o !== s && sameSubnet(address, o.address, o.netmask)) return false;
    return this.sockets.values().next().value === s;
  }

  private handle(r: CacheResult): void {
    for (const e of r.events) {
      if (e.kind === 'changed') this.settle(e.address, e.previousAddress);
      else {
        const p = this.pending.get(e.address);
        if (p) clearTimeout(p.timer);
        this.pending.delete(e.address);
        this.opts.onGoodbye({ address: e.address, name: e.name, ...(e.host ? { host: e.host } : {}), why: e.why });
      }
    }
    if (r.questions.length) {
      // A re-query is a moment to follow the interfaces too (at most every 5 s).
      if (Date.now() - this.lastInterfaceCheck > 5000) this.checkInterfaces();
      this.send(r.questions);
    }
    this.reportFlood();
  }

  /** Wait a moment for the printer's other services: one announcement, one read. */
  private settle(address: string, previousAddress?: string): void {
    const p = this.pending.get(address);
    if (p) {
      p.previousAddress ??= previousAddress;
      return;
    }
    const timer = setTimeout(() => {
      const entry = this.pending.get(address);
      this.pending.delete(address);
      const printer = this.cache?.printerAt(address);
      if (printer) this.opts.onAnnounce({ ...printer, ...(entry?.previousAddress ? { previousAddress: entry.previousAddress } : {}) });
    }, this.opts.settleMs ?? 150);
    timer.unref();
    this.pending.set(address, { timer, ...(previousAddress ? { previousAddress } : {}) });
  }

  private send(questions: Question[]): void {
    for (const s of this.sockets.values()) this.sendOn(s, questions);
  }

  private sendOn(s: Socket, questions: Question[]): void {
    for (let i = 0; i < questions.length; i += QUESTIONS_PER_PACKET) {
      const chunk = questions.slice(i, i + QUESTIONS_PER_PACKET).map((q) => ({ name: q.name, type: q.type, class: 'IN' as const }));
      s.mdns.query({ questions: chunk }, (err: Error | null) => {
        if (err) this.failed(s, err, 'query not sent');
        else s.error = undefined;
      });
    }
  }

  /** What a flood made the cache drop, at most once a minute. */
  private reportFlood(): void {
    if (!this.cache) return;
    const d = this.cache.dropped();
    if (d.rate_limited === this.flood.rate_limited && d.over_caps === this.flood.over_caps) return;
    const now = Date.now();
    if (now - this.flood.loggedAt < FLOOD_LOG_MS) return;
    this.opts.log.warn(
      { rate_limited: d.rate_limited - this.flood.rate_limited, over_caps: d.over_caps - this.flood.over_caps, ...this.cache.size() },
      'mDNS: flood, packets or services dropped',
    );
    this.flood = { loggedAt: now, ...d };
  }
}
