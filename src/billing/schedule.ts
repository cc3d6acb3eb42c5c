// Billing meter reads: at the billing day and time (Settings `billing`, read in its own
// time zone: billing-time.ts) every saved printer is polled through the ordinary poll path, and
// its reading (with the reading's own time) is kept as the period's meter read (store/meter-reads.ts).
//
// - The period's due time is a target computed from the settings (billing-time.ts), never "a
//   month since the last run": a tick compares the clock with that instant. Retries of the silent
//   printers are planned from targets too (shared/due-times.ts), every RETRY_MS.
// - Retries last RETRY_WINDOW_MS (the billing day) from the due time. A printer still silent then
//   gets the stored reading nearest the due time (within NEAREST_MAX_MS either side), marked
//   `nearest`; with none that close, a `missing` read says so.
// - A read is kept once: a period's printers with a read are never polled for it again, across
//   restarts (the table is the state). A box that was off through the whole billing day takes the
//   nearest readings at its first check after it.
// - Only printers saved by the due time are owed a read for the period (created_at <= due).
// - A changed zone, day or time moves the current period's due time at the next check; a period
//   already read is not read again.
import type { Snapshot } from '../model/device.js';
import type { MeterReadStore, MeterRead } from '../store/meter-reads.js';
import { READ_COUNTERS } from '../store/meter-reads.js';
import { DueTimes } from '../shared/due-times.js';
import { currentPeriod, type BillingPeriod, type BillingTimeSettings } from '../model/billing-time.js';
import { errorText } from '../shared/error-text.js';

/** Silent printers are polled again this often within the billing day. */
export const RETRY_MS = 30 * 60_000;
/** How long after the due time a silent printer is retried: the billing day. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;
/** The farthest a `nearest` read may be from the billing time. */
export const NEAREST_MAX_MS = 7 * 24 * 3_600_000;

export interface BillingSettings extends BillingTimeSettings {
  enabled: boolean;
}

export interface BillingDeps {
  settings(): BillingSettings;
  reads: MeterReadStore;
  /** Saved printers with when each was first stored (a printer saved after the due time owes no read). */
  savedPrinters(): { serial: string; created_at: number }[];
  /**
   * Polls these printers now through the ordinary poll path and returns the snapshots stored (a
   * silent printer has none). `first`: the period's first attempt (a whole round).
   */
  poll(serials: string[], first: boolean): Promise<Snapshot[]>;
  /** The stored reading nearest `t` within `maxDistance` ms (store/metrics.ts nearestReading). */
  nearest(serial: string, t: number, maxDistance: number): Snapshot | undefined;
  now(): number;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

function readOf(s: Snapshot, p: BillingPeriod, source: 'poll' | 'nearest', attempts: number): MeterRead {
  const counters: MeterRead['counters'] = {};
  for (const c of READ_COUNTERS) if (typeof s[c] === 'number') counters[c] = s[c];
  return { serial: s.serial, period: p.period, due_at: p.due, read_at: s.ts, source, counters, ...(s.extra ? { extra: s.extra } : {}), attempts };
}

export class BillingSchedule {
  private readonly retries = new DueTimes(0);
  /** The period being polled and how many attempts it has had in this process. */
  private polling?: { period: string; due: number; attempts: number };
  private running?: Promise<void>;

  constructor(private readonly deps: BillingDeps) {}

  /** One check (the minute tick): polls, retries or falls back as the clock says; never two at once. */
  check(): Promise<void> {
    this.running ??= this.checkOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  private async checkOnce(): Promise<void> {
    const { deps } = this;
    const s = deps.settings();
    if (!s.enabled) return;
    const t = deps.now();
    const p = currentPeriod(t, s);
    const done = deps.reads.readSerials(p.period);
    const owed = deps.savedPrinters().filter((d) => d.created_at <= p.due && !done.has(d.serial)).map((d) => d.serial);
    if (!owed.length) return;
    if (this.polling?.period !== p.period || this.polling.due !== p.due) this.polling = { period: p.period, due: p.due, attempts: 0 };
    if (t >= p.due + RETRY_WINDOW_MS) return this.fallBack(p, owed, this.polling.attempts);
    // The first attempt at once; then one every RETRY_MS after it, planned from targets.
    if (this.polling.attempts > 0 && !this.retries.take(t, RETRY_MS)) return;
    if (this.polling.attempts === 0) this.retries.start(t, RETRY_MS);
    const attempts = ++this.polling.attempts;
    let snaps: Snapshot[] = [];
    try {
      snaps = await deps.poll(owed, attempts === 1);
    } catch (err) {
      deps.log.warn({ period: p.period, err: errorText(err) }, 'billing read: the poll failed; retried within the billing day');
    }
    const wanted = new Set(owed);
    let stored = 0;
    for (const snap of snaps) {
      // A round under way when the billing time came may bring readings from before it: not this period's.
      if (!wanted.has(snap.serial) || snap.ts < p.due) continue;
      wanted.delete(snap.serial);
      if (deps.reads.insert(readOf(snap, p, 'poll', attempts), deps.now())) stored++;
    }
    deps.log.info(
      { period: p.period, due: new Date(p.due).toISOString(), attempt: attempts, read: stored, silent: wanted.size },
      wanted.size ? 'billing read: some printers did not answer; retried within the billing day' : 'billing read done',
    );
  }

  /** The billing day is over: the silent printers' nearest stored readings, or `missing`. */
  private fallBack(p: BillingPeriod, owed: string[], attempts: number): void {
    const { deps } = this;
    let nearest = 0;
    for (const serial of owed) {
      const snap = deps.nearest(serial, p.due, NEAREST_MAX_MS);
      if (snap) nearest++;
      const read: MeterRead = snap
        ? readOf(snap, p, 'nearest', attempts)
        : { serial, period: p.period, due_at: p.due, read_at: null, source: 'missing', counters: {}, attempts };
      deps.reads.insert(read, deps.now());
    }
    deps.log.warn({ period: p.period, nearest, missing: owed.length - nearest }, 'billing read: printers silent all billing day took their nearest stored reading');
  }
}
