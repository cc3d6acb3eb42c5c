// Printers that announce themselves (mDNS, WS-Discovery, SSDP): each announcement passes the
// safety rules (announced.ts refusal) and the gate (announce-gate.ts: one IPP read per address a
// minute), is read by IPP and SNMP, and becomes ONE record per physical printer. A known printer
// announced at a new address goes to the move check (sightings.ts); a print queue on a print
// server is not a printer (print-queues.ts); a goodbye or an expiry marks the record, never deletes it.
import type { Device } from '../model/device.js';
import { mergeObservation } from './merge.js';
import type { DiscoveryContext } from './context.js';
import { flagIfCounterDown } from './counter-check.js';
import { counterFlagOf, rememberIdentity, withTrustChange } from './move-check.js';
import { withNeighbourMac } from './neighbours.js';
import { AnnounceGate, type GateClock } from './announce-gate.js';
import { announcedAt, findSamePrinter, markGone, readAnnounced, refusal, withIppTarget, type AnnouncedRead, type GoneWhy } from './announced.js';
import { readNetworkPrinter } from '../ipp/client.js';
import { printQueueOf, type PrintQueue } from '../ipp/print-queue.js';
import { PrintQueues, type QueueEntry } from './print-queues.js';
import type { AnnouncedPrinter, AnnounceMethod } from './announced-printer.js';
import type { Sightings } from './sightings.js';
import { ReadingsKeptError } from '../store/store-readings.js';
import { errorText } from '../shared/error-text.js';

export const LABEL: Record<AnnounceMethod, string> = { mdns: 'mDNS', wsd: 'WS-Discovery', ssdp: 'SSDP' };

/** An address is read by IPP at most once this long from its announcements (later ones coalesce). */
export const ANNOUNCED_READ_WINDOW_MS = 60_000;
/** Announced addresses read at once at most (a LAN announcing thousands starts no more). */
const ANNOUNCED_READ_CONCURRENCY = 32;
/** Announced addresses tracked at most (reading, waiting, or inside their window). */
const MAX_ANNOUNCED_ADDRESSES = 4096;

export class Announcements {
  /** The print servers' queues seen (not printers). */
  private readonly queues = new PrintQueues();
  private readonly gate: AnnounceGate<AnnouncedPrinter>;
  private droppedSince = 0;
  private dropLoggedAt = -Infinity;

  constructor(
    private readonly ctx: DiscoveryContext,
    private readonly sightings: Sightings,
    clock?: GateClock,
  ) {
    this.gate = new AnnounceGate<AnnouncedPrinter>({
      windowMs: ANNOUNCED_READ_WINDOW_MS,
      concurrency: ANNOUNCED_READ_CONCURRENCY,
      maxAddresses: MAX_ANNOUNCED_ADDRESSES,
      read: (_address, p) => this.read(p),
      clock,
    });
  }

  /** An announcement: read the printer, unless its address may not be contacted. */
  announced(p: AnnouncedPrinter): void {
    const { log } = this.ctx.deps;
    const by = p.method ?? 'mdns';
    const why = refusal(p.address, this.ctx.deps.settings.get());
    if (why) {
      log.info({ ip: p.address, name: p.name, by, why }, `${LABEL[by]}: announced printer not contacted`);
      return;
    }
    if (this.gate.offer(p.address, p) !== 'dropped') return;
    this.droppedSince++;
    const now = this.ctx.now();
    if (now - this.dropLoggedAt >= 60_000) {
      log.warn({ ip: p.address, by, dropped: this.droppedSince, tracked: this.gate.size }, `${LABEL[by]}: too many announced addresses at once, announcements dropped`);
      this.dropLoggedAt = now;
      this.droppedSince = 0;
    }
  }

  /** Nothing is read after this; resolves when the reads under way have ended. */
  close(): Promise<void> {
    return this.gate.close();
  }

  private async read(p: AnnouncedPrinter): Promise<void> {
    const { log } = this.ctx.deps;
    if (this.ctx.stopped) return;
    const by = p.method ?? 'mdns';
    try {
      // A print server announces only queues (each IPP instance's TXT says so): each is read for
      // what it prints to, none is a printer.
      const instances = p.instances ?? [];
      const queues = instances.flatMap((i) => {
        const q = printQueueOf({ txt: i.txt, resource: i.resource });
        return q ? [{ i, q }] : [];
      });
      if (queues.length > 0 && queues.length === instances.length) {
        for (const { i, q } of queues) await this.readQueue(p.address, i, q, by);
        return;
      }
      const read = await readAnnounced(p, this.ctx.readContext());
      if (this.ctx.stopped) return;
      if ('error' in read) log.warn({ ip: p.address, name: p.name, err: read.error }, `${LABEL[by]}: announced printer not read`);
      else if ('queue' in read) this.queueSeen(read.address, read.queue, by);
      else await this.store(read);
    } catch (err) {
      log.error({ ip: p.address, err: errorText(err) }, `${LABEL[p.method ?? 'mdns']}: storing an announced printer failed`);
    }
  }

  /**
   * One queue a print server announced, read for what it prints to. Its TXT alone says it is a
   * queue, not where it prints: a busy server is asked again (twice, a few seconds apart), since
   * the server does not announce the queue again unless it changes.
   */
  private async readQueue(server: string, i: NonNullable<AnnouncedPrinter['instances']>[number], fromTxt: PrintQueue, by: string): Promise<void> {
    const s = this.ctx.deps.settings.get();
    for (const waitMs of [0, 2000, 5000]) {
      if (waitMs) await new Promise((r) => setTimeout(r, waitMs).unref());
      if (this.ctx.stopped) return;
      const state = await readNetworkPrinter(
        { address: server, port: i.port, resource: i.resource, tls: i.tls },
        { timeoutMs: Math.max(2000, s.discovery.snmp_timeout_ms), allowedRanges: s.discovery.allowed_ranges, signal: this.ctx.signal },
      ).catch(() => undefined);
      const q = state && printQueueOf({ txt: i.txt, attributes: state, resource: i.resource });
      if (q) return void this.queueSeen(server, q, by);
      if (waitMs === 0) this.queueSeen(server, fromTxt, by); // listed meanwhile from its TXT
    }
  }

  /** A print queue seen at `server`: listed as a queue (linked to its printer when it can be), never stored as a printer. */
  queueSeen(server: string, q: PrintQueue, by: string): QueueEntry {
    const isNew = !this.queues.has(server, q.queue);
    const entry = this.queues.seen(server, q, by, this.ctx.now());
    if (isNew) this.ctx.deps.log.info({ ip: server, queue: q.queue, server_kind: q.server_kind, device_uri: q.device_uri, why: q.why }, 'print queue on a print server: listed as a queue, not as a printer');
    return entry;
  }

  /** The queues seen, each linked to the known printer it prints to when it can be. */
  queueList(): QueueEntry[] {
    const known = this.ctx.deps.devices
      .listAll()
      .filter((d) => !d.is_usb)
      .map((d) => ({ serial: d.serial, ip: d.ip, hostname: d.hostname, printer_uuid: typeof d.printer_info?.printer_uuid === 'string' ? d.printer_info.printer_uuid : undefined }));
    return this.queues.list(known);
  }

  /**
   * Stores an announced (or scan-probed IPP) read as the one record of its printer; returns its
   * serial. Its reading is stored unless the printer's last one is younger than the polling
   * interval (a printer announcing every few seconds is not a meter read every few seconds).
   */
  async store(read: AnnouncedRead): Promise<string | undefined> {
    const { devices, settings } = this.ctx.deps;
    const o = withNeighbourMac(read.observation, (ip) => this.ctx.neighbour(ip));
    const existing = findSamePrinter(devices, o);
    if (existing) {
      o.serial = existing.serial;
      o.printerInfo.serial = existing.serial;
      if (existing.ip !== o.ip) {
        await this.sightings.fromAnnouncement(existing, read);
        return existing.serial;
      }
    }
    const merged = mergeObservation(existing, o);
    // It announced itself: a goodbye said before no longer stands.
    const { mdns_goodbye_at: _mdns, wsd_goodbye_at: _wsd, ...raw } = merged.raw_data ?? {};
    let device: Device = withIppTarget({ ...merged, raw_data: raw }, read.ipp);
    device = rememberIdentity(device, { neighbour_mac: this.ctx.neighbour(o.ip) });
    const snapshot = { serial: device.serial, ts: o.now, ...read.metrics };
    const change = existing ? 'updated' : 'discovered';
    const last = existing ? devices.latestReadingAt(existing.serial) : undefined;
    const intervalMs = settings.get().collection.interval_minutes * 60_000;
    if (last !== undefined && o.now - last < intervalMs) {
      this.ctx.writer.put(device, change, 'storing an announced printer');
      return device.serial;
    }
    if (existing && flagIfCounterDown(this.ctx, device.serial, snapshot, o.ip, o.now)) return device.serial;
    if (counterFlagOf(device)) device = withTrustChange(device, { counter_flag: undefined });
    try {
      this.ctx.writer.store([{ device, snapshot, existed: Boolean(existing) }], 'storing an announced printer', () => change);
    } catch (err) {
      if (!(err instanceof ReadingsKeptError)) throw err;
    }
    return device.serial;
  }

  /**
   * The printer's last service said goodbye (mDNS TTL 0, a WS-Discovery Bye) or its announcement
   * expired without a refresh: its record says so (nothing is deleted).
   */
  gone(address: string, method: AnnounceMethod = 'mdns', why: GoneWhy = 'goodbye'): void {
    const { devices, log } = this.ctx.deps;
    this.gate.reset(address);
    for (const d of announcedAt(devices, address, method)) {
      if (!this.ctx.writer.put(markGone(d, this.ctx.now(), method, why), 'updated', 'marking a printer that said goodbye')) continue;
      log.info({ serial: d.serial, ip: address, why }, why === 'goodbye' ? `${LABEL[method]}: printer said goodbye` : `${LABEL[method]}: printer's announcement expired (no answer to the re-queries)`);
    }
  }
}
