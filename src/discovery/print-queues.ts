// Print queues that print servers share (CUPS, Windows): not printers. A queue announces itself
// and answers IPP like a printer, so without this every shared queue became a second record of
// the printer it serves (ipp/print-queue.ts tells them apart). They are listed here, in memory (a
// server re-announces its queues, and a scan finds them again), each linked to the known printer
// it prints to when its device-uri names that printer beyond doubt (ipp/print-queue.ts
// queueLinkOf), and never offered as a printer to save.
import { queueLinkOf, type KnownPrinter, type PrintQueue } from '../ipp/print-queue.js';
import { formatTime } from '../model/time.js';

/** Queues remembered at most (the least recently seen is forgotten first). */
const MAX_QUEUES = 256;

export interface QueueEntry extends PrintQueue {
  /** The print server's address. */
  server: string;
  /** How it was found: "mdns", "wsd", "port_probe". */
  found_by: string;
  first_seen_at: string;
  seen_at: string;
  /** The known printer it prints to, when its device-uri names one beyond doubt. */
  printer_serial?: string;
  /** Why it is linked to that printer. */
  link?: string;
}

export class PrintQueues {
  private readonly byKey = new Map<string, QueueEntry>();

  /** A queue seen at `server`: remembered (or refreshed). */
  seen(server: string, q: PrintQueue, foundBy: string, now: number): QueueEntry {
    const key = `${server}\n${q.queue}`;
    const before = this.byKey.get(key);
    const at = formatTime(now);
    // What an earlier, fuller sighting learned (its device-uri from IPP) is not lost to a TXT-only one.
    const known = Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined)) as unknown as PrintQueue;
    const entry: QueueEntry = {
      ...before,
      ...known,
      server,
      found_by: before && before.found_by !== foundBy ? [...new Set([...before.found_by.split(', '), foundBy])].sort().join(', ') : foundBy,
      first_seen_at: before?.first_seen_at ?? at,
      seen_at: at,
    };
    this.byKey.delete(key); // re-inserted last: the map's order is the order of last sightings
    this.byKey.set(key, entry);
    while (this.byKey.size > MAX_QUEUES) this.byKey.delete(this.byKey.keys().next().value!);
    return entry;
  }

  /**
   * Every queue remembered, the last seen first, each linked to the known printer it prints to
   * when it can be (linked when asked: the printer may have been found after its queue).
   */
  list(known: readonly KnownPrinter[]): QueueEntry[] {
    return [...this.byKey.values()].reverse().map((e) => {
      const link = queueLinkOf(e, known);
      return link ? { ...e, printer_serial: link.serial, link: link.why } : e;
    });
  }

  /** Whether a queue of that name at that server is remembered. */
  has(server: string, queue: string): boolean {
    return this.byKey.has(`${server}\n${queue}`);
  }
}
