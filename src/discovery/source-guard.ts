// Flood bounds for an announcement listener (WS-Discovery, SSDP): what one LAN host may cost the
// box. Each datagram is charged to its sender before it is parsed (a token bucket per source
// address: a 32 KiB SOAP message costs more to read than to send), and the endpoints the listener
// remembers are capped per source and in total. What was dropped is counted (status(), shown in
// GET /discover/status) and logged at most once a minute. Everything here is a Map lookup: the cost
// of a packet does not grow with the number of endpoints or sources known.
//
// mDNS keeps the same bounds inside its record cache (mdns-cache.ts); this is their form for
// listeners whose only state is the endpoints they heard.
import type { Logger } from '../log/logger.js';

export interface GuardLimits {
  /** Packets per second per source address (token bucket refill; the burst is the same). */
  packetsPerSecond: number;
  /** Source addresses whose rate is tracked at once (beyond, a new source's packets are dropped until a quiet one is forgotten). */
  maxSources: number;
  /** Endpoints remembered per source address. */
  maxEndpointsPerSource: number;
  /** Endpoints remembered in total. */
  maxEndpoints: number;
  /** An endpoint not heard of for this long is forgotten (it makes room for new ones). */
  endpointTtlMs: number;
}

export interface GuardDropped {
  /** Datagrams over their source's rate (dropped unparsed). */
  rate_limited: number;
  /** New endpoints refused by the per-source or total cap. */
  over_caps: number;
}

/** A listener's flood status (GET /discover/status `wsd`, `ssdp`). */
export interface GuardStatus {
  dropped: GuardDropped;
  /** Endpoints remembered now, and the source addresses they came from. */
  endpoints: number;
  sources: number;
  limits: { packets_per_second: number; endpoints_per_source: number; endpoints: number };
}

export interface SourceGuardOptions {
  limits: GuardLimits;
  log: Logger;
  /** The protocol's name in the log ("WS-Discovery"). */
  what: string;
  now?: () => number;
}

const LOG_EVERY_MS = 60_000;

interface Endpoint<T> {
  source: string;
  at: number;
  value: T;
}

export class SourceGuard<T> {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Endpoint key -> its entry; Map order is least recently heard first (a refresh moves it last). */
  private readonly endpoints = new Map<string, Endpoint<T>>();
  private readonly perSource = new Map<string, number>();
  private readonly counters: GuardDropped = { rate_limited: 0, over_caps: 0 };
  private logged = { at: -Infinity, rate_limited: 0, over_caps: 0 };
  private readonly now: () => number;

  constructor(private readonly opts: SourceGuardOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Charges one datagram to `source`; false when over its rate (drop it unread). */
  allow(source: string): boolean {
    const now = this.now();
    const { packetsPerSecond: rate, maxSources } = this.opts.limits;
    let b = this.buckets.get(source);
    if (!b) {
      if (this.buckets.size >= maxSources) {
        // Sources whose bucket has refilled are quiet: forgetting them changes nothing. This runs
        // only when the table is full, and empties it of every quiet source at once.
        for (const [s, o] of this.buckets) if (o.tokens + ((now - o.at) / 1000) * rate >= rate) this.buckets.delete(s);
        if (this.buckets.size >= maxSources) return this.drop('rate_limited', now);
      }
      this.buckets.set(source, (b = { tokens: rate, at: now }));
    }
    b.tokens = Math.min(rate, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    if (b.tokens < 1) return this.drop('rate_limited', now);
    b.tokens -= 1;
    return true;
  }

  /** The endpoint remembered under `key`, if any. */
  get(key: string): T | undefined {
    return this.endpoints.get(key)?.value;
  }

  /** When `key` was last remembered (epoch ms), if it is. */
  heardAt(key: string): number | undefined {
    return this.endpoints.get(key)?.at;
  }

  /**
   * Remembers (or refreshes) an endpoint heard from `source`; false when it is new and a cap
   * refuses it (counted). A known endpoint is always refreshed, whoever repeats it.
   */
  remember(key: string, source: string, value: T): boolean {
    const now = this.now();
    const known = this.endpoints.get(key);
    if (known) {
      this.endpoints.delete(key);
      this.endpoints.set(key, { source: known.source, at: now, value });
      return true;
    }
    this.expire(now);
    const { maxEndpointsPerSource, maxEndpoints } = this.opts.limits;
    const fromSource = this.perSource.get(source) ?? 0;
    if (fromSource >= maxEndpointsPerSource || this.endpoints.size >= maxEndpoints) return this.drop('over_caps', now);
    this.perSource.set(source, fromSource + 1);
    this.endpoints.set(key, { source, at: now, value });
    return true;
  }

  /** Forgets an endpoint (its Bye); returns what was remembered. */
  forget(key: string): T | undefined {
    const e = this.endpoints.get(key);
    if (!e) return undefined;
    this.endpoints.delete(key);
    const n = (this.perSource.get(e.source) ?? 1) - 1;
    if (n > 0) this.perSource.set(e.source, n);
    else this.perSource.delete(e.source);
    return e.value;
  }

  /** Forgets every endpoint (a new query round starts); rates and counters stay. */
  clearEndpoints(): void {
    this.endpoints.clear();
    this.perSource.clear();
  }

  /** Forgets every endpoint and rate (the listener stopped); the counters stay. */
  clear(): void {
    this.clearEndpoints();
    this.buckets.clear();
  }

  status(): GuardStatus {
    const l = this.opts.limits;
    return {
      dropped: { ...this.counters },
      endpoints: this.endpoints.size,
      sources: this.perSource.size,
      limits: { packets_per_second: l.packetsPerSecond, endpoints_per_source: l.maxEndpointsPerSource, endpoints: l.maxEndpoints },
    };
  }

  /** Forgets endpoints not heard of for endpointTtlMs: the oldest are first in the Map, so this stops at the first one still fresh. */
  private expire(now: number): void {
    for (const [key, e] of this.endpoints) {
      if (now - e.at < this.opts.limits.endpointTtlMs) break;
      this.forget(key);
    }
  }

  private drop(kind: keyof GuardDropped, now: number): false {
    this.counters[kind]++;
    if (now - this.logged.at >= LOG_EVERY_MS) {
      const c = this.counters;
      this.opts.log.warn(
        { rate_limited: c.rate_limited - this.logged.rate_limited, over_caps: c.over_caps - this.logged.over_caps, endpoints: this.endpoints.size, sources: this.buckets.size },
        `${this.opts.what}: flood, packets or endpoints dropped`,
      );
      this.logged = { at: now, ...c };
    }
    return false;
  }
}
