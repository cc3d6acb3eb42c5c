// Discovery and collection: runs SNMP scans over the configured targets, turns answers into
// device records and raw snapshots, and polls saved devices. One scan at a time.
//
// Stopping (stop(), at shutdown) must not wait for the network: one AbortSignal for the service's
// life goes to every read (readHost closes its SNMP sessions when it fires, so requests in flight
// fail at once instead of at their timeout), no read starts after it, and a read cut short by it
// is dropped (neither a snapshot nor a "not responding" mark: the device did not fail). What a
// round had fully read before is still written, in one short transaction.
import { setMaxListeners } from 'node:events';
import type { Logger } from '../log/logger.js';
import type { DeviceStore, Reading } from '../store/devices.js';
import type { StorageGuard } from '../store/storage-guard.js';
import type { SettingsStore } from '../settings/store.js';
import type { Settings } from '../settings/settings.js';
import type { DiscoveryUpdate, EventBus } from '../events/bus.js';
import type { Device, Snapshot } from '../model/device.js';
import type { SnmpCredential } from '../snmp/client.js';
import type { UsbPrinters } from '../usb/service.js';
import { scan, readHost, type HostReadResult } from '../snmp/scan.js';
import { localSubnetTargets, parseRangesText } from '../snmp/ranges.js';
import { parsePrinter, readPlan } from '../snmp/parse/printer.js';
import { markUnreachable, mergeObservation, type Observation } from './merge.js';
import { ReadingsKeptError, storeReadings } from './store-readings.js';
import { MdnsListener, type AnnouncedPrinter } from './mdns.js';
import { announcedAt, findSamePrinter, markGoodbye, readAnnounced, readIppDevice, refusal, type AnnouncedRead, type ReadContext } from './announced.js';

export { ReadingsKeptError } from './store-readings.js';

export interface DiscoveryDeps {
  devices: DeviceStore;
  settings: SettingsStore;
  events: EventBus;
  log: Logger;
  now(): number;
  /** Told of every write that fails on storage; keeps the readings that could not be stored. */
  storage?: Pick<StorageGuard, 'failed' | 'keep' | 'wrote'>;
  /** Reads USB printers (they are not reached by SNMP); polled with the network ones. */
  usb?: Pick<UsbPrinters, 'collect' | 'collectSaved'>;
}

/** A scan's progress: what the status route returns and the events stream sends. */
export type ScanState = DiscoveryUpdate;

/** SNMP credentials from settings, in the order they are tried. */
export function credentialsOf(s: Settings): SnmpCredential[] {
  const v3: SnmpCredential[] = s.snmp.v3.map((u) => ({
    version: 'v3',
    user: u.user,
    ...(u.auth_protocol !== 'none' ? { authProtocol: u.auth_protocol, authKey: u.auth_key } : {}),
    ...(u.priv_protocol !== 'none' ? { privProtocol: u.priv_protocol, privKey: u.priv_key } : {}),
  }));
  const communities: SnmpCredential[] = s.snmp.communities.map((community) => ({ version: s.snmp.version, community }));
  return [...v3, ...communities];
}

/** Why an address is scanned: PrinterInfo.discovery_methods of what answers there. */
export type DiscoveryMethod = 'subnet_scan' | 'manual_range';

/** The addresses a scan covers (the box's own subnets and/or the configured ranges), each with why. */
export function scanTargetMethods(s: Settings): Map<string, DiscoveryMethod[]> {
  const targets = new Map<string, DiscoveryMethod[]>();
  const add = (a: string, m: DiscoveryMethod) => targets.set(a, [...(targets.get(a) ?? []), m]);
  // Never beyond the box's own /24s (decisions.md): a wider subnet is scanned only around the box.
  if (s.discovery.subnet_scan) for (const a of localSubnetTargets(undefined, undefined, { clampPrefix: 24 })) add(a, 'subnet_scan');
  if (s.discovery.manual_ranges) for (const a of parseRangesText(s.discovery.ranges_text)) add(a, 'manual_range');
  return targets;
}


export class DiscoveryService {
  private lastScanId = 0;
  private current?: { state: ScanState; abort: AbortController; done: Promise<void> };
  private polling?: Promise<Snapshot[]>;
  /** Aborted by stop(): every read in flight ends at once and none starts after. */
  private readonly lifetime = new AbortController();
  /** Polls under way (rounds and single reads), so that stop() waits for their last write. */
  private readonly polls = new Set<Promise<unknown>>();
  /** mDNS announcements (discovery.mdns_enabled), started by listen(). */
  private mdns?: MdnsListener;
  private stopWatchingSettings?: () => void;
  /** Addresses being read after an announcement: a burst of announcements is one read. */
  private readonly announcedReads = new Map<string, AnnouncedPrinter | null>();

  constructor(private readonly deps: DiscoveryDeps) {
    // Each host being read holds one abort listener (removed when its read ends); reads are
    // bounded by discover_concurrency per round plus single reads from the API.
    setMaxListeners(0, this.lifetime.signal);
  }

  /** True once stop() was called. */
  get stopped(): boolean {
    return this.lifetime.signal.aborted;
  }

  /** What is still running, for the shutdown log: e.g. ["scan 3", "polling round", "1 single read"]. */
  busy(): string[] {
    const out: string[] = [];
    if (this.current?.state.state === 'running') out.push(`scan ${this.current.state.scan_id}`);
    const singles = this.polls.size - (this.polling ? 1 : 0);
    if (this.polling) out.push('polling round');
    if (singles > 0) out.push(`${singles} single read${singles > 1 ? 's' : ''}`);
    return out;
  }

  status(): ScanState | undefined {
    return this.current?.state;
  }

  /** Starts a scan unless one is running; returns its state at once. */
  start(): { state: ScanState; alreadyRunning: boolean } {
    if (this.current?.state.state === 'running') return { state: this.current.state, alreadyRunning: true };
    if (this.stopped) {
      const state: ScanState = { scan_id: ++this.lastScanId, state: 'failed', scanned: 0, total: 0, found: 0, error: 'the agent is shutting down' };
      return { state, alreadyRunning: false };
    }
    const state: ScanState = { scan_id: ++this.lastScanId, state: 'running', scanned: 0, total: 0, found: 0 };
    const abort = new AbortController();
    const done = this.runScan(state, abort.signal);
    this.current = { state, abort, done };
    return { state, alreadyRunning: false };
  }

  /** Waits for the running scan, if any (tests, shutdown). */
  async settle(): Promise<void> {
    await this.current?.done;
  }

  /**
   * Stops the scan and every poll without waiting for the network (see the top of this file);
   * resolves once their last writes are done. Nothing starts afterwards.
   */
  async stop(): Promise<void> {
    this.stopWatchingSettings?.();
    this.mdns?.stop();
    this.lifetime.abort();
    this.current?.abort.abort();
    await Promise.allSettled([this.current?.done, ...this.polls]);
  }

  /** Starts listening for mDNS announcements while discovery.mdns_enabled is on (follows the setting live). */
  listen(): void {
    if (this.stopped || this.stopWatchingSettings) return;
    const apply = (s: Settings) => {
      if (this.stopped) return;
      this.mdns ??= new MdnsListener({
        log: this.deps.log,
        onAnnounce: (p) => this.announced(p),
        onGoodbye: (g) => this.goodbye(g.address),
      });
      if (s.discovery.mdns_enabled && !this.mdns.running) this.mdns.start();
      else if (!s.discovery.mdns_enabled && this.mdns.running) this.mdns.stop();
    };
    this.stopWatchingSettings = this.deps.settings.onChange(apply);
    apply(this.deps.settings.get());
  }

  private readContext(): ReadContext {
    const s = this.deps.settings.get();
    return { settings: s, credentials: credentialsOf(s), signal: this.lifetime.signal, now: this.deps.now(), snmpObservation: toObservation };
  }

  /** An announcement: read the printer (once at a time per address; the latest announcement wins). */
  announced(p: AnnouncedPrinter): void {
    const { log } = this.deps;
    const why = refusal(p.address, this.deps.settings.get());
    if (why) {
      log.info({ ip: p.address, name: p.name, why }, 'mDNS: announced printer not contacted');
      return;
    }
    if (this.announcedReads.has(p.address)) {
      this.announcedReads.set(p.address, p); // read again when the one under way ends
      return;
    }
    this.announcedReads.set(p.address, null);
    const run = async (next: AnnouncedPrinter): Promise<void> => {
      const read = await readAnnounced(next, this.readContext());
      if (this.stopped) return;
      if ('error' in read) log.warn({ ip: next.address, name: next.name, err: read.error }, 'mDNS: announced printer not read');
      else this.storeAnnounced(read);
      const again = this.announcedReads.get(next.address);
      if (again) {
        this.announcedReads.set(next.address, null);
        return run(again);
      }
      this.announcedReads.delete(next.address);
    };
    const tracked = run(p).catch((err: unknown) => {
      this.announcedReads.delete(p.address);
      log.error({ ip: p.address, err: (err as Error).message }, 'mDNS: storing an announced printer failed');
    });
    this.polls.add(tracked);
    void tracked.then(() => this.polls.delete(tracked));
  }

  /** Stores an announced (or IPP-polled) read as the one record of its printer; returns its serial. */
  private storeAnnounced(read: AnnouncedRead): string | undefined {
    const { devices, events } = this.deps;
    const o = read.observation;
    const existing = findSamePrinter(devices, o);
    if (existing) {
      o.serial = existing.serial;
      o.printerInfo.serial = existing.serial;
    }
    const device = mergeObservation(existing, o);
    const raw = { ...(device.raw_data ?? {}) };
    delete raw.mdns_goodbye_at;
    if (read.ipp) raw.ipp = { port: read.ipp.port, resource: read.ipp.resource, tls: read.ipp.tls };
    device.raw_data = raw;
    try {
      this.store([{ device, snapshot: { serial: device.serial, ts: o.now, ...read.metrics }, existed: Boolean(existing) }], 'storing an announced printer');
    } catch (err) {
      if (err instanceof ReadingsKeptError) return device.serial;
      throw err;
    }
    events.emit('device_change', { serial: device.serial, change: existing ? 'updated' : 'discovered' });
    return device.serial;
  }

  /** The printer's last service said goodbye: its record says so (nothing is deleted). */
  private goodbye(address: string): void {
    const { devices, events, log } = this.deps;
    for (const d of announcedAt(devices, address)) {
      try {
        devices.put(markGoodbye(d, this.deps.now()));
      } catch (err) {
        if (!this.deps.storage?.failed(err, 'marking a printer that said goodbye')) throw err;
        continue;
      }
      log.info({ serial: d.serial, ip: address }, 'mDNS: printer said goodbye');
      events.emit('device_change', { serial: d.serial, change: 'updated' });
    }
  }

  private async runScan(state: ScanState, signal: AbortSignal): Promise<void> {
    const { settings, events, log } = this.deps;
    const s = settings.get();
    const publish = () => events.emit('discovery_update', { ...state });
    try {
      const methods = s.discovery.enable_snmp ? scanTargetMethods(s) : new Map<string, DiscoveryMethod[]>();
      const targets = [...methods.keys()];
      state.total = targets.length;
      publish();
      log.info({ scan_id: state.scan_id, targets: targets.length }, 'discovery started');
      let lastPublish = 0;
      const result = await scan({
        targets,
        credentials: credentialsOf(s),
        timeoutMs: s.discovery.snmp_timeout_ms,
        concurrency: s.discovery.discover_concurrency,
        allowedRanges: s.discovery.allowed_ranges,
        port: s.snmp.port,
        planRead: readPlan,
        signal,
        onProgress: (p) => {
          state.scanned = p.scanned;
          // Progress events at most every 250 ms: a /24 must not flood the stream.
          if (Date.now() - lastPublish > 250) {
            lastPublish = Date.now();
            publish();
          }
        },
        onHost: (host) => {
          if (this.record(host, state.scan_id, methods.get(host.address))) state.found++;
        },
      });
      state.scanned = result.scanned;
      if (result.aborted) {
        state.state = 'failed';
        state.error = 'scan stopped: the agent is shutting down';
        log.info({ scan_id: state.scan_id, found: state.found, scanned: result.scanned, total: result.total, ms: result.durationMs }, 'discovery stopped');
      } else {
        state.state = 'done';
        log.info({ scan_id: state.scan_id, found: state.found, ms: result.durationMs, skipped: result.skipped.length }, 'discovery done');
      }
    } catch (err) {
      state.state = 'failed';
      state.error = (err as Error).message;
      log.error({ scan_id: state.scan_id, err: state.error }, 'discovery failed');
    }
    publish();
  }

  /** Stores what one host answered; returns the device serial, or undefined when unusable. */
  private record(host: HostReadResult, scanId?: number, methods?: DiscoveryMethod[]): string | undefined {
    const { devices, events, log } = this.deps;
    const now = this.deps.now();
    const parsed = parsePrinter(host.values, host.address, new Date(now));
    const observation = toObservation(parsed, host.address, now, scanId);
    if (observation) observation.discoveryMethods = methods;
    if (!observation) {
      log.warn({ ip: host.address }, 'printer answered without serial or MAC address; not stored');
      return undefined;
    }
    // One record per printer: an mDNS/IPP record of the same printer (uuid, or MAC when one has no serial) is this one.
    const existing = findSamePrinter(devices, observation);
    if (existing) observation.printerInfo.serial = observation.serial = existing.serial;
    const device = mergeObservation(existing, observation);
    try {
      this.store([{ device, snapshot: { serial: device.serial, ts: now, ...parsed.metrics }, existed: Boolean(existing) }], 'storing a scanned printer');
    } catch (err) {
      if (err instanceof ReadingsKeptError) return device.serial; // the scan goes on
      throw err;
    }
    events.emit('device_change', { serial: device.serial, change: existing ? 'updated' : 'discovered' });
    return device.serial;
  }

  private store(readings: Reading[], what: string): (number | undefined)[] {
    return storeReadings(this.deps, readings, what);
  }

  /** Reads one known device now and stores the snapshot; undefined when it did not answer. */
  async collect(serial: string): Promise<Snapshot | undefined> {
    if (this.deps.devices.get(serial)?.is_usb) return this.deps.usb?.collect(serial);
    const snaps = await this.poll([serial]);
    return snaps[0];
  }

  /** Polls every saved device; the round's snapshots are written in one transaction. */
  async collectSaved(): Promise<Snapshot[]> {
    if (this.polling) return this.polling; // a round is under way: share it, never double it
    if (this.stopped) return Promise.resolve([]);
    const serials = this.deps.devices.listSaved().filter((d) => d.source_type !== 'usb').map((d) => d.serial);
    this.deps.log.info({ devices: serials.length }, 'polling round started');
    const usb = this.deps.usb?.collectSaved() ?? Promise.resolve([]);
    this.polling = Promise.all([this.poll(serials, 'round'), usb])
      .then(([network, plugged]) => [...network, ...plugged])
      .finally(() => (this.polling = undefined));
    return this.polling;
  }

  /** Runs a poll, known to stop() until it has ended. */
  private poll(serials: string[], kind: 'round' | 'single' = 'single'): Promise<Snapshot[]> {
    const p = this.pollNow(serials, kind);
    const tracked = p.then(
      () => undefined,
      () => undefined,
    );
    this.polls.add(tracked);
    void tracked.then(() => this.polls.delete(tracked));
    return p;
  }

  private async pollNow(serials: string[], kind: 'round' | 'single'): Promise<Snapshot[]> {
    const { devices, settings, events, log } = this.deps;
    const signal = this.lifetime.signal;
    if (signal.aborted) return [];
    const s = settings.get();
    const credentials = credentialsOf(s);
    const readings: Reading[] = [];
    const queue = [...serials];
    let cut = 0; // reads cut short by stop()
    const worker = async () => {
      while (!signal.aborted) {
        const serial = queue.shift();
        if (serial === undefined) return;
        const device = devices.get(serial);
        if (!device) continue;
        const now = this.deps.now();
        if (device.source_type === 'ipp') {
          // Seen only by IPP (no SNMP answer when it was found): polled by IPP, and SNMP if it now answers.
          const read = await readIppDevice(device, { ...this.readContext(), now });
          if (signal.aborted) {
            cut++;
            break;
          }
          if (!('error' in read) && findSamePrinter(devices, read.observation)?.serial === serial) {
            read.observation.serial = serial;
            read.observation.printerInfo.serial = serial;
            readings.push({ device: mergeObservation(device, read.observation), snapshot: { serial, ts: now, ...read.metrics }, existed: true });
            continue;
          }
          const current = devices.get(serial);
          if (!current) continue;
          try {
            devices.put(markUnreachable(current, now, 'error' in read ? `no IPP answer (${read.error})` : `a different device answers at ${device.ip}`));
          } catch (err) {
            if (!this.deps.storage?.failed(err, 'marking a device not responding')) throw err;
            continue;
          }
          events.emit('device_change', { serial, change: 'updated' });
          continue;
        }
        let host: HostReadResult | null = null;
        try {
          host = await readHost(device.ip, {
            credentials,
            timeoutMs: s.discovery.snmp_timeout_ms,
            allowedRanges: s.discovery.allowed_ranges,
            port: s.snmp.port,
            planRead: readPlan,
            signal,
          });
        } catch (err) {
          log.warn({ serial, ip: device.ip, err: (err as Error).message }, 'poll failed');
        }
        // Cut short by stop(): the device did not fail, it was not heard out. Neither a snapshot
        // nor a "not responding" mark (a read that had completed is kept).
        if (signal.aborted && (!host || host.partial)) {
          cut++;
          break;
        }
        const parsed = host ? parsePrinter(host.values, device.ip, new Date(now)) : undefined;
        const observation = parsed ? toObservation(parsed, device.ip, now) : undefined;
        if (!parsed || !observation || observation.serial !== serial) {
          // Silent, or another printer now answers at this address: keep the record, say so.
          const why = !parsed ? 'no SNMP answer' : `a different device answers at ${device.ip}`;
          // The record as it is now (a person may have changed it during the read), not the copy.
          const current = devices.get(serial);
          if (!current) continue; // deleted meanwhile
          try {
            devices.put(markUnreachable(current, now, why));
          } catch (err) {
            // Only a status line: on an unwritable card it is marked again at the next round.
            if (!this.deps.storage?.failed(err, 'marking a device not responding')) throw err;
            continue;
          }
          events.emit('device_change', { serial, change: 'updated' });
          continue;
        }
        readings.push({ device: mergeObservation(device, observation), snapshot: { serial, ts: now, ...parsed.metrics }, existed: true });
      }
    };
    await Promise.all(Array.from({ length: Math.min(s.discovery.discover_concurrency, serials.length) }, worker));
    if (signal.aborted && (cut > 0 || queue.length > 0)) {
      log.info({ read: readings.length, cut_short: cut, not_started: queue.length }, kind === 'round' ? 'polling round stopped' : 'poll stopped');
    }
    if (readings.length === 0) return [];
    const ids = this.store(readings, 'storing a polling round');
    const stored = readings.flatMap((r, i) => (ids[i] === undefined ? [] : [{ ...r.snapshot, id: ids[i]! }]));
    for (const s of stored) events.emit('device_change', { serial: s.serial, change: 'metrics' });
    return stored;
  }
}

type Parsed = ReturnType<typeof parsePrinter>;

export function toObservation(parsed: Parsed, ip: string, now: number, scanId?: number): Observation | undefined {
  const info = parsed.info as unknown as Record<string, unknown>;
  const mac = typeof info.mac_address === 'string' ? info.mac_address : undefined;
  const serial = parsed.serial || (mac ? `MAC-${mac.replace(/[^0-9A-Fa-f]/g, '').toUpperCase()}` : undefined);
  if (!serial) return undefined;
  const str = (k: string) => (typeof info[k] === 'string' && info[k] !== '' ? (info[k] as string) : undefined);
  const list = (k: string) => (Array.isArray(info[k]) ? (info[k] as string[]) : undefined);
  return {
    serial,
    ip,
    now,
    scanId,
    fields: {
      manufacturer: str('manufacturer'),
      model: str('model'),
      hostname: str('hostname'),
      firmware: str('firmware'),
      mac_address: mac,
      subnet_mask: str('subnet_mask'),
      gateway: str('gateway'),
      location: str('location'),
      web_ui_url: str('web_ui_url'),
      consumables: list('consumables'),
      status_messages: list('status_messages') ?? [],
    },
    printerInfo: { ...info, serial },
  };
}
