// The mDNS record cache of the printer browser (mdns.ts): what the LAN's responders told about
// printer services, kept as RFC 6762 says, with no sockets and an injected clock (unit-tested with
// a fake one). Records are indexed by name, so a packet costs the same whether ten or a thousand
// services are known.
//
// - Instances come only from a PTR of a browsed service type; SRV and TXT attach to a known
//   instance, A records to the host a known SRV targets. Anything else in a packet is ignored, so
//   a LAN cannot grow the cache with names nobody asked for.
// - A record's TTL is renewed by every answer or re-announcement (clamped to 75 min). TTL 0 is a
//   goodbye: the record goes 1 s later (RFC 6762 10.1), unless announced again meanwhile. A record
//   with the cache-flush bit replaces the same name's older records of that type after 1 s (10.2):
//   an address change is followed at once.
// - While a record is still wanted, it is asked for again at 80, 85, 90 and 95 % of its TTL (5.2;
//   tick() returns the questions, the listener sends them); a responder that stops answering (a
//   printer whose power was cut) is gone when the TTL runs out.
// - Per printer address (instances grouped by their IPv4 address, as the service reads them):
//   'changed' when an instance is new or its address, port or TXT changed (a re-announcement that
//   changes nothing is only a refresh: the service reads a printer on each change), 'gone' when
//   the address's last instance said goodbye or expired. An instance whose host moved is reported
//   at the new address with previousAddress; the old address is then not reported for it.
// - Caps against a flooding LAN: 32 instances per source address, 1024 in all, packets beyond
//   50/s per source dropped; what was dropped is counted.
import type { Packet } from 'dns-packet';
import type { AnnouncedPrinter } from './announced-printer.js';
import { storableKey } from '../model/inherited-keys.js';
import { parseIPv4 } from '../shared/ranges.js';
import { resourceOf } from '../ipp/client.js';

/** The DNS-SD service types browsed, as full names under local. (lower case). */
export const SERVICE_NAMES = ['_ipp._tcp.local', '_ipps._tcp.local', '_printer._tcp.local', '_pdl-datastream._tcp.local'] as const;

const MAX_TXT_KEYS = 64;
const MAX_TXT_VALUE = 255;

/** TXT as a key/value object, bounded, keys in lower case (RFC 6763 6.4: keys are case-insensitive). */
export function txtOf(raw: unknown): Record<string, string> {
  // The keys are the announcer's: own-property tests, and a key the box could not restore from a
  // backup (`constructor`, `__proto__`) renamed (`txt_constructor`), never dropped.
  const out: Record<string, string> = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [k, v] of Object.entries(raw as Record<string, unknown>).slice(0, MAX_TXT_KEYS)) {
    if (typeof v !== 'string' && !Buffer.isBuffer(v)) continue;
    const value = String(v).replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, MAX_TXT_VALUE);
    const key = storableKey(k.toLowerCase().slice(0, 32), 'txt');
    if (key && !Object.hasOwn(out, key)) out[key] = value;
  }
  return out;
}

/** A TXT record's strings ("key=value"; a key alone is a flag with no value, left out), bounded. */
function txtFromRdata(data: unknown): Record<string, string> {
  const parts = Array.isArray(data) ? data : [data];
  const raw = Object.create(null) as Record<string, string>;
  for (const p of parts.slice(0, MAX_TXT_KEYS * 2)) {
    if (!Buffer.isBuffer(p) && typeof p !== 'string') continue;
    const s = (Buffer.isBuffer(p) ? p : Buffer.from(p)).toString('utf8', 0, 512);
    const eq = s.indexOf('=');
    if (eq <= 0) continue;
    const key = s.slice(0, eq);
    if (!Object.hasOwn(raw, key.toLowerCase())) raw[key.toLowerCase()] = s.slice(eq + 1);
  }
  return txtOf(raw);
}

export interface CacheLimits {
  /** TTLs above this (seconds) are clamped. */
  maxTtlS: number;
  maxInstancesPerSource: number;
  maxInstances: number;
  /** Packets per second per source address (token bucket refill; the burst is the same). */
  packetsPerSecond: number;
  /** Source addresses whose rate is tracked at once. */
  maxSources: number;
}

export const DEFAULT_LIMITS: CacheLimits = { maxTtlS: 4500, maxInstancesPerSource: 32, maxInstances: 1024, packetsPerSecond: 50, maxSources: 4096 };

export interface CacheOptions {
  now(): number;
  limits?: Partial<CacheLimits>;
  /** In [0, 1): the re-query jitter (RFC 6762 5.2: 0-2 % of the TTL). */
  random?: () => number;
}

export type GoneWhy = 'goodbye' | 'expired';

export type CacheEvent =
  | { kind: 'changed'; address: string; previousAddress?: string }
  | { kind: 'gone'; address: string; name: string; host?: string; why: GoneWhy };

export interface Question {
  name: string;
  type: 'PTR' | 'SRV' | 'TXT' | 'A';
}

export interface CacheResult {
  events: CacheEvent[];
  /** Questions to send now (a record to resolve, or one near its TTL's end). */
  questions: Question[];
}

export interface Dropped {
  /** Packets over a source's rate. */
  rate_limited: number;
  /** New instances refused by the per-source or total cap. */
  over_caps: number;
}

interface Rec {
  /** When the TTL was last renewed. */
  at: number;
  ttlMs: number;
  expiresAt: number;
  /** Re-queries sent since the renewal (4 at most: 80, 85, 90, 95 %). */
  sent: number;
  nextQueryAt: number;
  /** Going because of a TTL 0 (a goodbye), not a cache flush. */
  goodbye: boolean;
  /** Going because a record with the cache-flush bit replaced it. */
  flushed: boolean;
}

interface Instance {
  key: string;
  /** The instance label, e.g. "Lab Printer". */
  label: string;
  /** The service type, e.g. "_ipp._tcp". */
  type: string;
  /** Its browse name, e.g. "_ipp._tcp.local" (the PTR's name). */
  service: string;
  source: string;
  created: number;
  ptr: Rec;
  srv?: Rec & { target: string; port: number };
  txtRec?: Rec;
  txt: Record<string, string>;
  /** Where and what was last reported: a change of either is a 'changed'. */
  reportedAddress?: string;
  reportedSig?: string;
}

interface Host {
  name: string;
  /** Its A record was asked for (once: a responder that never announces one is read at its source address). */
  asked: boolean;
  addresses: Map<string, Rec & { firstSeen: number }>;
  instances: Set<string>;
}

/** An instance whose PTR came without an SRV is forgotten after this. */
const UNRESOLVED_GRACE_MS = 10_000;
const MAX_ADDRESSES_PER_HOST = 8;
const REQUERY_AT = [0.8, 0.85, 0.9, 0.95];
/** IPP instances listed per address at most: a print server sharing more is listed in part. */
const MAX_INSTANCES_LISTED = 16;

const lower = (s: string) => s.toLowerCase();
/** DNS names from dns-packet escape dots and backslashes inside a label. */
const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

export class MdnsCache {
  private readonly limits: CacheLimits;
  private readonly random: () => number;
  private readonly instances = new Map<string, Instance>();
  private readonly hosts = new Map<string, Host>();
  /** Printer address -> keys of the instances reported there. */
  private readonly byAddress = new Map<string, Set<string>>();
  private readonly perSource = new Map<string, number>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly counters: Dropped = { rate_limited: 0, over_caps: 0 };
  /** Nothing is due before this: tick() returns at once. */
  private nextDue = Infinity;

  constructor(private readonly opts: CacheOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.random = opts.random ?? Math.random;
  }

  dropped(): Dropped {
    return { ...this.counters };
  }

  size(): { instances: number; hosts: number; addresses: number; sources: number } {
    return { instances: this.instances.size, hosts: this.hosts.size, addresses: this.byAddress.size, sources: this.buckets.size };
  }

  /** The questions that start browsing: every printer service type. */
  browseQuestions(): Question[] {
    return SERVICE_NAMES.map((name) => ({ name, type: 'PTR' as const }));
  }

  /** A packet from the LAN (any kind; only responses from port 5353 are read). */
  ingest(packet: Packet, from: { address: string; port: number }): CacheResult {
    const out: CacheResult = { events: [], questions: [] };
    const now = this.opts.now();
    if (!this.allow(from.address, now)) return out;
    // RFC 6762 6: a response not from port 5353 is not an mDNS response.
    if (packet.type !== 'response' || from.port !== 5353) return out;
    const records = [...(packet.answers ?? []), ...(packet.additionals ?? [])];
    // PTRs first (they make instances), then SRV/TXT (they make hosts), then A records.
    const touched = new Set<Instance>();
    for (const r of records) if (r.type === 'PTR') this.ptr(r.name, r.data as string, r.ttl ?? 0, from.address, now, touched);
    for (const r of records) {
      if (r.type === 'SRV') this.srv(r.name, r.data as { target?: string; port?: number }, r.ttl ?? 0, r.flush === true, now, touched);
      else if (r.type === 'TXT') this.txt(r.name, r.data, r.ttl ?? 0, now, touched);
    }
    for (const r of records) if (r.type === 'A') this.a(r.name, r.data as string, r.ttl ?? 0, r.flush === true, now, touched);
    for (const inst of touched) {
      if (!this.instances.has(inst.key)) continue;
      // What is missing is asked for once: a new instance's SRV and TXT, its host's address.
      if (!inst.srv) {
        if (inst.created === now && inst.ptr.at === now) out.questions.push({ name: inst.key, type: 'SRV' }, { name: inst.key, type: 'TXT' });
      } else {
        const host = this.hosts.get(lower(inst.srv.target));
        if (host && !host.asked && this.liveAddresses(host.name).length === 0) {
          host.asked = true;
          out.questions.push({ name: host.name, type: 'A' });
        }
      }
      this.evaluate(inst, out.events);
    }
    return out;
  }

  /** Expires what ran out, and returns the re-queries due. Call it often (e.g. every 500 ms). */
  tick(): CacheResult {
    const out: CacheResult = { events: [], questions: [] };
    const now = this.opts.now();
    if (now < this.nextDue) return out;
    let next = Infinity;
    const asked = new Set<string>();
    const ask = (q: Question) => {
      const k = `${q.type} ${q.name}`;
      if (!asked.has(k)) {
        asked.add(k);
        out.questions.push(q);
      }
    };
    const due = (rec: Rec, q: Question): 'alive' | 'dead' => {
      if (rec.expiresAt <= now) return 'dead';
      if (rec.sent < REQUERY_AT.length && rec.nextQueryAt <= now) {
        ask(q);
        rec.sent++;
        rec.nextQueryAt = this.queryAt(rec);
      }
      next = Math.min(next, rec.expiresAt, rec.sent < REQUERY_AT.length ? rec.nextQueryAt : Infinity);
      return 'alive';
    };
    // Hosts first: an address gone moves or ends the instances on it below.
    const moved = new Set<Instance>();
    for (const host of this.hosts.values()) {
      for (const [addr, rec] of host.addresses) {
        if (due(rec, { name: host.name, type: 'A' }) === 'dead') {
          host.addresses.delete(addr);
          host.asked = false;
          for (const k of host.instances) {
            const inst = this.instances.get(k);
            if (inst) moved.add(inst);
          }
        }
      }
    }
    for (const inst of [...this.instances.values()]) {
      const ptrDead = due(inst.ptr, { name: inst.service, type: 'PTR' }) === 'dead';
      let srvDead = false;
      let why: GoneWhy = 'expired';
      if (ptrDead && inst.ptr.goodbye) why = 'goodbye';
      if (inst.srv) {
        srvDead = due(inst.srv, { name: inst.key, type: 'SRV' }) === 'dead';
        if (srvDead && inst.srv.goodbye) why = 'goodbye';
      }
      if (inst.txtRec && due(inst.txtRec, { name: inst.key, type: 'TXT' }) === 'dead') inst.txtRec = undefined; // its last value stays
      if (ptrDead || srvDead) {
        this.remove(inst, why, out.events);
        continue;
      }
      if (!inst.srv) {
        if (now - inst.created >= UNRESOLVED_GRACE_MS) this.remove(inst, 'expired', out.events);
        else next = Math.min(next, inst.created + UNRESOLVED_GRACE_MS);
        continue;
      }
      if (moved.has(inst)) this.evaluate(inst, out.events);
    }
    this.nextDue = next;
    return out;
  }

  /** What is announced at `address` now: its instances as one printer, or undefined. */
  /** The printer (or print server) at an address as one announcement, every IPP instance listed. */
  printerAt(address: string): AnnouncedPrinter | undefined {
    const keys = this.byAddress.get(address);
    if (!keys || keys.size === 0) return undefined;
    const all = [...keys].map((k) => this.instances.get(k)!).filter((i) => i?.srv);
    if (all.length === 0) return undefined;
    const ofType = (t: string) => all.find((i) => i.type === t);
    const ipp = ofType('_ipp._tcp');
    const ipps = ofType('_ipps._tcp');
    const main = ipp ?? ipps ?? all[0]!;
    // The IPP service's TXT first: it carries what IPP Everywhere defines (rp, UUID, adminurl ...).
    const txt: Record<string, string> = {};
    for (const i of [ipp, ipps, ...all]) if (i) for (const [k, v] of Object.entries(i.txt)) if (!Object.hasOwn(txt, k)) txt[k] = v;
    const via = ipp ?? ipps;
    return {
      address,
      host: main.srv!.target,
      name: main.label,
      services: [...new Set(all.map((i) => i.type))].sort(),
      txt,
      ...(via ? { ipp: { port: via.srv!.port, tls: via === ipps && !ipp, resource: resourceOf(via.txt.rp) } } : {}),
      instances: all
        .filter((i) => i.type === '_ipp._tcp' || i.type === '_ipps._tcp')
        .slice(0, MAX_INSTANCES_LISTED)
        .map((i) => ({ name: i.label, port: i.srv!.port, tls: i.type === '_ipps._tcp', resource: resourceOf(i.txt.rp), txt: i.txt })),
    };
  }

  // --- records ---------------------------------------------------------------------------------

  private ptr(name: string, data: string, ttl: number, source: string, now: number, touched: Set<Instance>): void {
    if (typeof name !== 'string' || typeof data !== 'string') return;
    const type = lower(name);
    if (!(SERVICE_NAMES as readonly string[]).includes(type)) return;
    const key = lower(data);
    if (!key.endsWith(`.${type}`) || key.length === type.length + 1) return;
    let inst = this.instances.get(key);
    if (!inst) {
      if (ttl === 0) return; // a goodbye for something never known
      const fromSource = this.perSource.get(source) ?? 0;
      if (fromSource >= this.limits.maxInstancesPerSource || this.instances.size >= this.limits.maxInstances) {
        this.counters.over_caps++;
        return;
      }
      this.perSource.set(source, fromSource + 1);
      inst = { key, label: unescape(data.slice(0, data.length - type.length - 1)), type: type.slice(0, -'.local'.length), service: type, source, created: now, ptr: this.newRec(), txt: {} };
      this.instances.set(key, inst);
      this.nextDue = Math.min(this.nextDue, now + UNRESOLVED_GRACE_MS);
    }
    this.renew(inst.ptr, ttl, now);
    touched.add(inst);
  }

  private srv(name: string, data: { target?: string; port?: number }, ttl: number, flush: boolean, now: number, touched: Set<Instance>): void {
    const inst = typeof name === 'string' ? this.instances.get(lower(name)) : undefined;
    if (!inst || !data || typeof data.target !== 'string' || typeof data.port !== 'number') return;
    const target = data.target;
    const same = inst.srv && lower(inst.srv.target) === lower(target) && inst.srv.port === data.port;
    if (ttl === 0) {
      // A goodbye for an SRV that is no longer the current one changes nothing.
      if (same) this.renew(inst.srv!, 0, now);
      touched.add(inst);
      return;
    }
    if (!same) {
      if (inst.srv && !flush) return; // a second SRV without the flush bit: keep the first
      if (inst.srv) this.unlinkHost(inst);
      inst.srv = { ...this.newRec(), target, port: data.port };
      const h = lower(target);
      let host = this.hosts.get(h);
      if (!host) this.hosts.set(h, (host = { name: h, asked: false, addresses: new Map(), instances: new Set() }));
      host.instances.add(inst.key);
    }
    this.renew(inst.srv!, ttl, now);
    touched.add(inst);
  }

  private txt(name: string, data: unknown, ttl: number, now: number, touched: Set<Instance>): void {
    const inst = typeof name === 'string' ? this.instances.get(lower(name)) : undefined;
    if (!inst) return;
    if (ttl === 0) {
      if (inst.txtRec) this.renew(inst.txtRec, 0, now);
      return;
    }
    inst.txtRec ??= this.newRec();
    this.renew(inst.txtRec, ttl, now);
    inst.txt = txtFromRdata(data);
    touched.add(inst);
  }

  private a(name: string, data: string, ttl: number, flush: boolean, now: number, touched: Set<Instance>): void {
    const host = typeof name === 'string' ? this.hosts.get(lower(name)) : undefined;
    if (!host || typeof data !== 'string' || parseIPv4(data) === null) return;
    let rec = host.addresses.get(data);
    if (ttl === 0) {
      if (rec) this.renew(rec, 0, now);
    } else {
      if (flush) {
        // RFC 6762 10.2: the name's other A records older than 1 s are replaced, 1 s from now.
        for (const [addr, other] of host.addresses) {
          if (addr !== data && now - other.at > 1000 && other.expiresAt > now + 1000) {
            other.expiresAt = now + 1000;
            other.sent = REQUERY_AT.length;
            other.flushed = true;
            this.nextDue = Math.min(this.nextDue, other.expiresAt);
          }
        }
      }
      if (!rec) {
        if (host.addresses.size >= MAX_ADDRESSES_PER_HOST) return;
        host.addresses.set(data, (rec = { ...this.newRec(), firstSeen: now }));
      }
      this.renew(rec, ttl, now);
    }
    for (const k of host.instances) {
      const inst = this.instances.get(k);
      if (inst) touched.add(inst);
    }
  }

  private newRec(): Rec {
    return { at: 0, ttlMs: 0, expiresAt: 0, sent: 0, nextQueryAt: Infinity, goodbye: false, flushed: false };
  }

  private renew(rec: Rec, ttlS: number, now: number): void {
    if (ttlS <= 0) {
      // RFC 6762 10.1: a goodbye is kept 1 s (a re-announcement meanwhile keeps the record).
      rec.goodbye = true;
      rec.expiresAt = Math.min(rec.expiresAt || now + 1000, now + 1000);
      rec.sent = REQUERY_AT.length;
    } else {
      rec.at = now;
      rec.ttlMs = Math.min(ttlS, this.limits.maxTtlS) * 1000;
      rec.expiresAt = now + rec.ttlMs;
      rec.sent = 0;
      rec.goodbye = false;
      rec.flushed = false;
      rec.nextQueryAt = this.queryAt(rec);
    }
    this.nextDue = Math.min(this.nextDue, rec.expiresAt, rec.sent < REQUERY_AT.length ? rec.nextQueryAt : Infinity);
  }

  /** When the next re-query of `rec` is due (RFC 6762 5.2: 80 % + k * 5 % of the TTL, plus 0-2 %). */
  private queryAt(rec: Rec): number {
    if (rec.sent >= REQUERY_AT.length) return Infinity;
    return rec.at + rec.ttlMs * (REQUERY_AT[rec.sent]! + this.random() * 0.02);
  }

  // --- instances and addresses -----------------------------------------------------------------

  /** The addresses of a host still usable: not said goodbye to, not replaced by a flush. */
  private liveAddresses(target: string): (Rec & { firstSeen: number; address: string })[] {
    const host = this.hosts.get(lower(target));
    if (!host) return [];
    return [...host.addresses].filter(([, r]) => !r.goodbye && !r.flushed).map(([address, r]) => ({ ...r, address }));
  }

  /** The address an instance is reported at: its host's (the one reported, else the newest), else its source's. */
  private addressOf(inst: Instance): string | undefined {
    if (!inst.srv || inst.srv.goodbye || inst.ptr.goodbye) return undefined;
    const live = this.liveAddresses(inst.srv.target);
    if (live.some((a) => a.address === inst.reportedAddress)) return inst.reportedAddress;
    if (live.length) return live.reduce((a, b) => (b.firstSeen > a.firstSeen ? b : a)).address;
    return parseIPv4(inst.source) !== null ? inst.source : undefined;
  }

  /** Reports a new or changed instance (a refresh that changes nothing reports nothing). */
  private evaluate(inst: Instance, events: CacheEvent[]): void {
    const address = this.addressOf(inst);
    if (!address) return; // not resolved yet, or going (tick() reports it when it is gone)
    const sig = JSON.stringify([address, inst.srv!.port, inst.srv!.target, inst.txt]);
    if (sig === inst.reportedSig) return;
    inst.reportedSig = sig;
    const previous = inst.reportedAddress;
    if (previous !== undefined && previous !== address) this.ungroup(inst, previous);
    inst.reportedAddress = address;
    let at = this.byAddress.get(address);
    if (!at) this.byAddress.set(address, (at = new Set()));
    at.add(inst.key);
    const pending = events.find((e) => e.kind === 'changed' && e.address === address);
    if (pending && pending.kind === 'changed') {
      if (previous !== undefined && previous !== address) pending.previousAddress ??= previous;
      return;
    }
    events.push({ kind: 'changed', address, ...(previous !== undefined && previous !== address ? { previousAddress: previous } : {}) });
  }

  private ungroup(inst: Instance, address: string): boolean {
    const at = this.byAddress.get(address);
    if (!at) return false;
    at.delete(inst.key);
    if (at.size > 0) return false;
    this.byAddress.delete(address);
    return true;
  }

  private remove(inst: Instance, why: GoneWhy, events: CacheEvent[]): void {
    this.instances.delete(inst.key);
    const n = (this.perSource.get(inst.source) ?? 1) - 1;
    if (n > 0) this.perSource.set(inst.source, n);
    else this.perSource.delete(inst.source);
    this.unlinkHost(inst);
    if (inst.reportedAddress !== undefined && this.ungroup(inst, inst.reportedAddress)) {
      events.push({ kind: 'gone', address: inst.reportedAddress, name: inst.label, ...(inst.srv ? { host: inst.srv.target } : {}), why });
    }
  }

  private unlinkHost(inst: Instance): void {
    if (!inst.srv) return;
    const h = lower(inst.srv.target);
    const host = this.hosts.get(h);
    if (!host) return;
    host.instances.delete(inst.key);
    if (host.instances.size === 0) this.hosts.delete(h);
  }

  // --- flood guard -----------------------------------------------------------------------------

  /** A token bucket per source address: packets beyond the rate are dropped and counted. */
  private allow(source: string, now: number): boolean {
    const rate = this.limits.packetsPerSecond;
    let b = this.buckets.get(source);
    if (!b) {
      if (this.buckets.size >= this.limits.maxSources) {
        // Sources whose bucket refilled are quiet: forgetting them changes nothing.
        for (const [s, o] of this.buckets) if (o.tokens + ((now - o.at) / 1000) * rate >= rate) this.buckets.delete(s);
        if (this.buckets.size >= this.limits.maxSources) {
          this.counters.rate_limited++;
          return false;
        }
      }
      this.buckets.set(source, (b = { tokens: rate, at: now }));
    }
    b.tokens = Math.min(rate, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    if (b.tokens < 1) {
      this.counters.rate_limited++;
      return false;
    }
    b.tokens -= 1;
    return true;
  }
}
