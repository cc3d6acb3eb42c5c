// Bounds on the device records discovery creates, so that a LAN that keeps making up printers (an
// IPP responder answering a new serial each time, Hellos from many addresses) cannot grow the
// database, the listings and the CPU they cost without end:
//
// - At most `newPerAddressPerHour` NEW identities (records that did not exist) from one address in
//   any hour (a sliding window): beyond, the new record is not stored (counted, logged once a
//   minute). A known printer is never refused: only its first record counts.
// - At most `maxUnsaved` unsaved records in total: a new one over it evicts the unsaved record seen
//   longest ago (deleted with its history, as POST /devices/delete does; counted, logged once a minute). Saved
//   printers are never evicted, nor counted.
//
// Why these numbers: 2,000 is the largest site the box is sized and measured for
// (docs/performance.md, 2,000 printers); an unsaved record is a printer nobody chose yet, and the
// ones seen longest ago are the likeliest gone. 16 a hour from one address: a real address gains a
// new printer when one is swapped or DHCP hands it to another (a few a day at most), and a print
// server's queues are not records; a responder inventing identities gets 16 an hour, and the
// announcement gate already reads it once a minute at most.
//
// The one gate: RecordWriter.store (record-writer.ts) asks admit() for every reading of a record
// that did not exist, whichever path (scan, announcement) read it.
import type { Logger } from '../log/logger.js';
import type { DeviceStore } from '../store/devices.js';
import { errorText } from '../shared/error-text.js';

export interface RecordLimits {
  maxUnsaved: number;
  newPerAddressPerHour: number;
  /** Addresses whose hour is tracked at once (beyond, a new address's new records are refused until an hour passes). */
  maxAddresses: number;
}

export const RECORD_LIMITS: RecordLimits = { maxUnsaved: 2000, newPerAddressPerHour: 16, maxAddresses: 4096 };

export interface RecordCapsStatus {
  limits: { unsaved: number; new_per_address_per_hour: number };
  /** Unsaved records deleted to make room for newer ones, since the agent started. */
  evicted: number;
  /** New records refused because their address made too many this hour, since the agent started. */
  refused: number;
}

export interface RecordCapsOptions {
  devices: Pick<DeviceStore, 'get' | 'countUnsaved' | 'oldestUnsaved' | 'delete'>;
  log: Logger;
  now(): number;
  limits?: Partial<RecordLimits>;
}

export interface Admission {
  admitted: boolean;
  /** Serials deleted to make room (their change is 'deleted'). */
  evicted: string[];
}

const HOUR_MS = 3_600_000;
const LOG_EVERY_MS = 60_000;

export class RecordCaps {
  private readonly limits: RecordLimits;
  /** Address -> when its new records of the last hour were made, oldest first (at most newPerAddressPerHour). */
  private readonly recent = new Map<string, number[]>();
  private evictedCount = 0;
  private refusedCount = 0;
  private logged = { refusedAt: -Infinity, refused: 0, evictedAt: -Infinity, evicted: 0 };

  constructor(private readonly opts: RecordCapsOptions) {
    this.limits = { ...RECORD_LIMITS, ...opts.limits };
  }

  /**
   * Whether a record `serial` read at `address` may be written. A record that exists always may;
   * a new one may if its address is under its hourly count, after room was made among the unsaved.
   */
  admit(serial: string, address: string): Admission {
    const { devices } = this.opts;
    if (devices.get(serial)) return { admitted: true, evicted: [] };
    const now = this.opts.now();
    const times = this.hourOf(address, now);
    if (!times || times.length >= this.limits.newPerAddressPerHour) {
      this.refuse(serial, address, now);
      return { admitted: false, evicted: [] };
    }
    const evicted = this.makeRoom(serial);
    if (evicted === undefined) return { admitted: false, evicted: [] };
    times.push(now);
    return { admitted: true, evicted };
  }

  status(): RecordCapsStatus {
    return {
      limits: { unsaved: this.limits.maxUnsaved, new_per_address_per_hour: this.limits.newPerAddressPerHour },
      evicted: this.evictedCount,
      refused: this.refusedCount,
    };
  }

  /** The address's new-record times inside the last hour (a live array to push to); undefined when no more addresses can be tracked. */
  private hourOf(address: string, now: number): number[] | undefined {
    let times = this.recent.get(address);
    if (times) {
      while (times.length && now - times[0]! >= HOUR_MS) times.shift();
      return times;
    }
    if (this.recent.size >= this.limits.maxAddresses) {
      // Only when the table is full: every address whose hour has passed is forgotten at once.
      for (const [a, t] of this.recent) if (t.length === 0 || now - t[t.length - 1]! >= HOUR_MS) this.recent.delete(a);
      if (this.recent.size >= this.limits.maxAddresses) return undefined;
    }
    this.recent.set(address, (times = []));
    return times;
  }

  /** Deletes the oldest unsaved records until one more fits; the serials deleted, or undefined when the store refused. */
  private makeRoom(incoming: string): string[] | undefined {
    const { devices, log } = this.opts;
    const over = devices.countUnsaved() - this.limits.maxUnsaved + 1;
    if (over <= 0) return [];
    const evicted: string[] = [];
    for (const serial of devices.oldestUnsaved(over)) {
      try {
        if (devices.delete(serial)) evicted.push(serial);
      } catch (err) {
        // A card that refuses a delete refuses the insert too: the new record waits for its next reading.
        log.warn({ serial, err: errorText(err) }, 'unsaved printer record not deleted to make room; new record not stored');
        return undefined;
      }
    }
    this.evictedCount += evicted.length;
    const now = this.opts.now();
    if (now - this.logged.evictedAt >= LOG_EVERY_MS) {
      log.warn({ evicted: this.evictedCount - this.logged.evicted, last: evicted, for: incoming, limit: this.limits.maxUnsaved }, 'too many unsaved printer records: the ones seen longest ago deleted');
      this.logged.evictedAt = now;
      this.logged.evicted = this.evictedCount;
    }
    return evicted;
  }

  private refuse(serial: string, address: string, now: number): void {
    this.refusedCount++;
    if (now - this.logged.refusedAt < LOG_EVERY_MS) return;
    this.opts.log.warn(
      { ip: address, serial, refused: this.refusedCount - this.logged.refused, limit: this.limits.newPerAddressPerHour },
      'an address made too many new printer records this hour: new ones not stored',
    );
    this.logged.refusedAt = now;
    this.logged.refused = this.refusedCount;
  }
}
