// Announcements in check. A host may announce as often as it likes: a printer re-announcing every
// few seconds, a host cycling through hundreds of names, a flood. Each announcement would be an
// IPP read of the address and a stored reading; through this gate an address is read at most once
// a window (later announcements coalesce: the newest is read when the window ends), and at most
// `concurrency` addresses at once (the rest wait their turn, none is dropped while under `maxAddresses`).
import { limiter } from './limiter.js';

export interface GateClock {
  now(): number;
  /** Runs fn after ms; returns the cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const realClock: GateClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

export interface AnnounceGateOptions<T> {
  /** An address is read at most once this long. */
  windowMs: number;
  /** Reads at once at most. */
  concurrency: number;
  /** Addresses tracked at most (being read, waiting, or inside their window): beyond, dropped. */
  maxAddresses: number;
  read(address: string, item: T): Promise<void>;
  clock?: GateClock;
}

interface Entry<T> {
  lastStart: number;
  running: boolean;
  next?: T;
  cancel?: () => void;
  /** A goodbye came while a read was under way. */
  afterGoodbye?: boolean;
}

export type Offered = 'read' | 'coalesced' | 'dropped';

export class AnnounceGate<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly run: <R>(fn: () => Promise<R>) => Promise<R>;
  private readonly clock: GateClock;
  private closed = false;
  /** Reads under way or waiting for a turn: stop() waits for them. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly opts: AnnounceGateOptions<T>) {
    this.run = limiter(opts.concurrency);
    this.clock = opts.clock ?? realClock;
  }

  /** Offers an announcement of `address`: read now, later (coalesced), or dropped (too many addresses). */
  offer(address: string, item: T): Offered {
    if (this.closed) return 'dropped';
    const e = this.entries.get(address);
    if (!e) {
      if (this.entries.size >= this.opts.maxAddresses) return 'dropped';
      const entry: Entry<T> = { lastStart: 0, running: false };
      this.entries.set(address, entry);
      this.start(address, entry, item);
      return 'read';
    }
    e.next = item; // the newest wins
    if (!e.running && !e.cancel) this.wait(address, e);
    return 'coalesced';
  }

  /**
   * The address said goodbye: what it announced before is stale (dropped), and its next
   * announcement is news (the printer is back, or renumbered), read at once rather than at the
   * end of the window.
   */
  reset(address: string): void {
    const e = this.entries.get(address);
    if (!e) return;
    e.next = undefined;
    if (e.running) {
      e.afterGoodbye = true; // when the read under way ends, the window is over
      return;
    }
    e.cancel?.();
    this.entries.delete(address);
  }

  /** Addresses tracked now. */
  get size(): number {
    return this.entries.size;
  }

  /** Nothing is read after this; resolves when the reads under way have ended. */
  async close(): Promise<void> {
    this.closed = true;
    for (const e of this.entries.values()) e.cancel?.();
    this.entries.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private start(address: string, e: Entry<T>, item: T): void {
    e.running = true;
    e.next = undefined;
    const p = this.run(async () => {
      if (this.closed) return;
      e.lastStart = this.clock.now();
      await this.opts.read(address, item);
    })
      .catch(() => undefined) // read() reports its own failures
      .finally(() => {
        this.inFlight.delete(p);
        e.running = false;
        if (e.afterGoodbye) {
          e.afterGoodbye = false;
          e.lastStart = -Infinity;
        }
        if (this.entries.get(address) === e) this.wait(address, e);
      });
    this.inFlight.add(p);
  }

  /** Until the window ends: then the newest announcement waiting is read, or the address forgotten. */
  private wait(address: string, e: Entry<T>): void {
    const due = () => {
      e.cancel = undefined;
      if (this.entries.get(address) !== e) return;
      if (e.next === undefined) this.entries.delete(address);
      else this.start(address, e, e.next);
    };
    const left = e.lastStart + this.opts.windowMs - this.clock.now();
    if (left <= 0) due();
    else e.cancel = this.clock.setTimer(due, left);
  }
}
