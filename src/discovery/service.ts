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
import { neighbourMac, withNeighbourMac } from './neighbours.js';
import { limiter } from './limiter.js';
import { counterFlagOf, judgeSighting, pendingMoveOf, rememberIdentity, withRawData, type CounterFlag, type Fingerprint } from './move-check.js';
import { formatTime } from '../model/time.js';
import { MdnsListener, type AnnouncedPrinter, type AnnounceMethod } from './mdns.js';
import { WsdListener } from './wsd.js';
import { SsdpSearcher } from './ssdp.js';
import { announcedAt, findSamePrinter, markGoodbye, readAnnounced, readIppDevice, readProbedIpp, refusal, SNMP_GRACE_MS, type AnnouncedRead, type ReadContext } from './announced.js';
import { PRINTER_PORTS, PROBE_CONNECTIONS, PROBE_TIMEOUT_MS, probeHosts, readsByIpp, withProbedPorts } from './port-probe.js';
import { SnmpTimeline } from './snmp-timeline.js';
import { paced } from '../loop/pace.js';
import { releaseHeapMemory } from '../loop/release-memory.js';

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
  /** The kernel neighbour table's MAC for an address (default: /proc/net/arp). */
  neighbourMac?: (ip: string) => string | undefined;
  /** Readings a polling round writes per transaction (default ROUND_BATCH). */
  roundBatch?: number;
}

/**
 * Readings a polling round writes per transaction. A round of 2,000 printers held every merged
 * record and snapshot until one transaction at its end, and the agent's RSS grew with the fleet
 * (issue 35); in batches a round holds at most this many, and each batch is on the card (and its
 * events out) as soon as it is full, so a crash or power cut mid-round loses only the readings of
 * the batch being filled. The cost is one commit (an fsync and the B-trees' upper pages) a batch:
 * docs/performance.md, "A large site", has the flash-write figures per batch size.
 */
export const ROUND_BATCH = 250;

/**
 * A single read (POST /devices/metrics/collect) whose page counter was below the last stored one:
 * the reading was flagged on the device, not stored.
 */
export class CounterFlaggedError extends Error {
  constructor(readonly flag: CounterFlag) {
    super(`page counter went down: ${flag.page_count} read at ${flag.ip}, ${flag.stored_page_count} stored; the reading is flagged on the device, not stored (POST /devices/confirm-counter accepts it)`);
  }
}

/** Announced addresses read at once at most (a hostile LAN announcing thousands starts no more). */
const MAX_ANNOUNCED_READS = 32;
const LABEL: Record<AnnounceMethod, string> = { mdns: 'mDNS', wsd: 'WS-Discovery', ssdp: 'SSDP' };

/** Saved addresses read at once at most, to check replies that claim their serial from elsewhere. */
const SIGHTING_CONCURRENCY = 4;
/** IPP reads at once at most of a scan's hosts with 631 open and no SNMP answer. */
const PROBED_IPP_CONCURRENCY = 8;
/** A probed host's IPP read gets at least this, however little of its SNMP timeout is left. */
const MIN_PROBED_IPP_MS = 1000;

/** A scan's bookkeeping for replies that claim a known serial from another address. */
interface ScanRound {
  startedAt: number;
  sightings: Promise<unknown>[];
  run: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Per serial: whether its saved address answered (read once per scan). */
  answers: Map<string, Promise<boolean>>;
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
  /** WS-Discovery (discovery.wsd_enabled) and SSDP (discovery.ssdp_enabled), beside mDNS. */
  private wsd?: WsdListener;
  private ssdp?: SsdpSearcher;
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
    this.wsd?.stop();
    this.ssdp?.stop();
    this.lifetime.abort();
    this.current?.abort.abort();
    await Promise.allSettled([this.current?.done, ...this.polls]);
  }

  /**
   * Starts listening for mDNS announcements while discovery.mdns_enabled is on, WS-Discovery while
   * discovery.wsd_enabled is, and SSDP searches while discovery.ssdp_enabled is (follows the settings live).
   */
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
      this.wsd ??= new WsdListener({ log: this.deps.log, onAnnounce: (p) => this.announced(p), onGoodbye: (g) => this.goodbye(g.address, 'wsd') });
      if (s.discovery.wsd_enabled && !this.wsd.running) this.wsd.start();
      else if (!s.discovery.wsd_enabled && this.wsd.running) this.wsd.stop();
      this.ssdp ??= new SsdpSearcher({ log: this.deps.log, onAnnounce: (p) => this.announced(p) });
      if (s.discovery.ssdp_enabled && !this.ssdp.running) this.ssdp.start();
      else if (!s.discovery.ssdp_enabled && this.ssdp.running) this.ssdp.stop();
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
    const by = p.method ?? 'mdns';
    const why = refusal(p.address, this.deps.settings.get());
    if (why) {
      log.info({ ip: p.address, name: p.name, by, why }, `${LABEL[by]}: announced printer not contacted`);
      return;
    }
    if (this.announcedReads.has(p.address)) {
      this.announcedReads.set(p.address, p); // read again when the one under way ends
      return;
    }
    // A LAN announcing many addresses at once does not start reads without end: the rest are
    // read when they announce themselves again (a Hello, a probe round, an mDNS requery).
    if (this.announcedReads.size >= MAX_ANNOUNCED_READS) {
      log.warn({ ip: p.address, by, reading: this.announcedReads.size }, `${LABEL[by]}: too many announced printers being read, this one not now`);
      return;
    }
    this.announcedReads.set(p.address, null);
    const run = async (next: AnnouncedPrinter): Promise<void> => {
      const read = await readAnnounced(next, this.readContext());
      if (this.stopped) return;
      if ('error' in read) log.warn({ ip: next.address, name: next.name, err: read.error }, `${LABEL[next.method ?? 'mdns']}: announced printer not read`);
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
    const o = withNeighbourMac(read.observation, (ip) => this.neighbour(ip));
    const existing = findSamePrinter(devices, o);
    if (existing) {
      o.serial = existing.serial;
      o.printerInfo.serial = existing.serial;
      if (existing.ip !== o.ip) return this.announcedElsewhere(existing, o);
    }
    const device = mergeObservation(existing, o);
    const raw = { ...(device.raw_data ?? {}) };
    delete raw.mdns_goodbye_at;
    delete raw.wsd_goodbye_at;
    if (read.ipp) raw.ipp = { port: read.ipp.port, resource: read.ipp.resource, tls: read.ipp.tls };
    device.raw_data = raw;
    const snapshot = { serial: device.serial, ts: o.now, ...read.metrics };
    if (existing && this.flagIfCounterDown(device.serial, snapshot, o.ip, o.now)) return device.serial;
    try {
      this.store([{ device, snapshot, existed: Boolean(existing) }], 'storing an announced printer');
    } catch (err) {
      if (err instanceof ReadingsKeptError) return device.serial;
      throw err;
    }
    events.emit('device_change', { serial: device.serial, change: existing ? 'updated' : 'discovered' });
    return device.serial;
  }

  /**
   * An announced printer whose IPP answer claims a known printer at another address. IPP (like
   * SNMP v1/v2c) proves nothing of who answered, so nothing of it is stored and the record does
   * not move by itself: it gets a pending move that a person confirms (POST /devices/confirm-move).
   */
  private announcedElsewhere(existing: Device, o: Observation): string {
    const { devices, events, log } = this.deps;
    const mac = this.neighbour(o.ip);
    const fp: Fingerprint = {
      ip: o.ip,
      ...(mac ? { neighbour_mac: mac } : {}),
      snmp: 'ipp',
      ...(o.fields.model ? { model: o.fields.model } : {}),
      ...(o.fields.manufacturer ? { manufacturer: o.fields.manufacturer } : {}),
    };
    // Told that the saved address answers: an unauthenticated answer never moves a record alone.
    const decision = judgeSighting(existing, fp, this.deps.now(), true, this.deps.now());
    if (decision.move) return existing.serial;
    log.warn({ serial: existing.serial, saved_ip: existing.ip, ip: o.ip }, `printer serial announced at another address: not stored, move pending (${decision.pending.reason})`);
    try {
      devices.put(withRawData(existing, { pending_move: decision.pending }));
    } catch (err) {
      if (!this.deps.storage?.failed(err, 'noting a pending move')) throw err;
      return existing.serial;
    }
    events.emit('device_change', { serial: existing.serial, change: 'updated' });
    return existing.serial;
  }

  /** The printer's last service said goodbye (a WS-Discovery Bye): its record says so (nothing is deleted). */
  private goodbye(address: string, method: AnnounceMethod = 'mdns'): void {
    const { devices, events, log } = this.deps;
    for (const d of announcedAt(devices, address, method)) {
      try {
        devices.put(markGoodbye(d, this.deps.now(), method));
      } catch (err) {
        if (!this.deps.storage?.failed(err, 'marking a printer that said goodbye')) throw err;
        continue;
      }
      log.info({ serial: d.serial, ip: address }, `${LABEL[method]}: printer said goodbye`);
      events.emit('device_change', { serial: d.serial, change: 'updated' });
    }
  }

  private async runScan(state: ScanState, signal: AbortSignal): Promise<void> {
    const { settings, events, log } = this.deps;
    const s = settings.get();
    const publish = () => events.emit('discovery_update', { ...state });
    const started = Date.now();
    try {
      const probing = s.discovery.port_probes_enabled;
      const methods = s.discovery.enable_snmp || probing ? scanTargetMethods(s) : new Map<string, DiscoveryMethod[]>();
      const targets = [...methods.keys()];
      state.total = targets.length;
      publish();
      log.info({ scan_id: state.scan_id, targets: targets.length, port_probes: probing }, 'discovery started');
      let lastPublish = 0;
      const round: ScanRound = { startedAt: this.deps.now(), sightings: [], run: limiter(SIGHTING_CONCURRENCY), answers: new Map() };
      // An address is scanned once its SNMP read and its port probes (each when enabled) are done.
      let snmpScanned = 0;
      let probed = 0;
      // When each phase's last host ended (ms after the start), for the "discovery done" line.
      const phases = { probes_ms: 0, ipp_ms: 0 };
      const scanned = () => Math.min(s.discovery.enable_snmp ? snmpScanned : Infinity, probing ? probed : Infinity);
      const progress = () => {
        state.scanned = scanned();
        // Progress events at most every 250 ms: a /24 must not flood the stream.
        if (Date.now() - lastPublish > 250) {
          lastPublish = Date.now();
          publish();
        }
      };
      // Port probes (discovery/port-probe.ts) run beside SNMP, on the same targets and no others.
      // A probe waits no longer than an SNMP request; enough connections that the probes keep up
      // with the SNMP reads (a host's ports all at once, as many hosts as SNMP reads in flight).
      const probes = probing
        ? probeHosts(targets, {
            allowedRanges: s.discovery.allowed_ranges,
            signal,
            timeoutMs: Math.min(PROBE_TIMEOUT_MS, s.discovery.snmp_timeout_ms),
            connections: Math.max(PROBE_CONNECTIONS, s.discovery.discover_concurrency * PRINTER_PORTS.length),
            onHost: () => (probed++, (phases.probes_ms = Date.now() - started), progress()),
          })
        : undefined;
      const answered = new Set<string>();
      const recorded = new Map<string, Promise<void>>();
      // Hosts with 631 open and no SNMP answer are read by IPP beside their own SNMP read, not after the scan.
      const timeline = s.discovery.enable_snmp ? new SnmpTimeline() : undefined;
      const probedReads = probes ? this.readProbed(probes, answered, recorded, timeline, methods, state.scan_id, signal, () => (phases.ipp_ms = Date.now() - started)) : Promise.resolve(0);
      const recordHost = (host: HostReadResult, open?: number[]) => {
        if (!this.record(host, state.scan_id, methods.get(host.address), round, open)) return;
        state.found++;
        answered.add(host.address);
      };
      const result = await scan({
        targets: s.discovery.enable_snmp ? targets : [],
        credentials: credentialsOf(s),
        timeoutMs: s.discovery.snmp_timeout_ms,
        concurrency: s.discovery.discover_concurrency,
        allowedRanges: s.discovery.allowed_ranges,
        port: s.snmp.port,
        planRead: (identity, address) => {
          timeline?.answered(address);
          return readPlan(identity, address);
        },
        onStart: (address) => timeline?.started(address),
        onScanned: (address) => timeline?.ended(address),
        signal,
        onProgress: (p) => {
          snmpScanned = p.scanned;
          progress();
        },
        onHost: (host) => {
          // With probes, a host's record waits for its open ports (they are on the record).
          const ports = probes?.get(host.address);
          if (!ports) return recordHost(host);
          recorded.set(host.address, ports.then((open) => recordHost(host, open)).catch((err: unknown) => log.error({ ip: host.address, err: (err as Error).message }, 'storing a scanned printer failed')));
        },
      });
      timeline?.finish();
      await Promise.all(recorded.values());
      state.found += await probedReads;
      // Replies that claimed a known serial from another address, each checked against the saved one.
      await Promise.all(round.sightings);
      state.scanned = scanned();
      if (result.aborted || signal.aborted) {
        state.state = 'failed';
        state.error = 'scan stopped: the agent is shutting down';
        log.info({ scan_id: state.scan_id, found: state.found, scanned: state.scanned, total: state.total, ms: Date.now() - started }, 'discovery stopped');
      } else {
        state.state = 'done';
        log.info({ scan_id: state.scan_id, found: state.found, ms: Date.now() - started, snmp_ms: result.durationMs, ...(probing ? phases : {}), skipped: result.skipped.length }, 'discovery done');
      }
    } catch (err) {
      state.state = 'failed';
      state.error = (err as Error).message;
      log.error({ scan_id: state.scan_id, err: state.error }, 'discovery failed');
    }
    releaseHeapMemory(); // a scan's garbage, as a polling round's
    publish();
  }

  /**
   * A scan's hosts with port 631 open that gave no (usable) SNMP answer, read by IPP and stored as
   * announced printers are (one record per printer). A host with other ports open but not 631 is
   * not listed: an open 9100 or web port says nothing of what the host is. Returns how many were stored.
   *
   * Runs beside the SNMP scan (`timeline`: each host's SNMP read; undefined when SNMP is off): a
   * host's IPP read starts once its SNMP read has started and its agent has not answered within
   * SNMP_GRACE_MS, and must end by the time that SNMP read times out, so a silent or mute host
   * costs no more than its SNMP timeout. A host whose agent answered is read by IPP only when its
   * SNMP answer gave no record (after its read ended, as before).
   */
  private async readProbed(
    probes: Map<string, Promise<number[]>>,
    answered: Set<string>,
    recorded: Map<string, Promise<void>>,
    timeline: SnmpTimeline | undefined,
    methods: Map<string, DiscoveryMethod[]>,
    scanId: number,
    signal: AbortSignal,
    onRead: () => void = () => {},
  ): Promise<number> {
    const { log } = this.deps;
    const timeoutMs = this.deps.settings.get().discovery.snmp_timeout_ms;
    // Each read waits for its host's SNMP read, so no more run at once than SNMP reads do.
    const run = limiter(Math.max(PROBED_IPP_CONCURRENCY, this.deps.settings.get().discovery.discover_concurrency));
    const ippRead = (address: string, budgetMs: number) =>
      run(() => (signal.aborted ? Promise.resolve({ error: 'scan stopped' }) : readProbedIpp(address, this.readContext(), 631, Math.max(budgetMs, MIN_PROBED_IPP_MS))));
    let stored = 0;
    await Promise.all(
      [...probes].map(async ([address, ports]) => {
        const open = await ports;
        if (signal.aborted || open.length === 0) return;
        if (!readsByIpp(open)) {
          await timeline?.whenEnded(address);
          if (!answered.has(address)) log.debug({ ip: address, open_ports: open }, 'ports open, no SNMP answer and no IPP port: not listed');
          return;
        }
        let early: ReturnType<typeof ippRead> | undefined;
        if (timeline) {
          await timeline.whenStarted(address);
          await timeline.answeredWithin(address, SNMP_GRACE_MS);
          // Ends when its SNMP identity probe times out (the scan's own cost for this host).
          const startedAt = timeline.startedAt(address);
          if (!timeline.hasAnswered(address)) early = ippRead(address, startedAt === undefined ? timeoutMs : startedAt + timeoutMs - Date.now());
          await timeline.whenEnded(address);
          await recorded.get(address);
        }
        if (answered.has(address) || signal.aborted) return;
        const read = await (early ?? ippRead(address, timeoutMs));
        onRead();
        if (signal.aborted || this.stopped) return;
        if ('error' in read) {
          log.info({ ip: address, open_ports: open, err: read.error }, 'port 631 open but no IPP answer: not listed');
          return;
        }
        const o = read.observation;
        o.scanId = scanId;
        o.discoveryMethods = [...(o.discoveryMethods ?? []), ...(methods.get(address) ?? [])];
        withProbedPorts(o, open);
        try {
          if (this.storeAnnounced(read)) stored++;
        } catch (err) {
          log.error({ ip: address, err: (err as Error).message }, 'storing a printer read by IPP failed');
        }
      }),
    );
    return stored;
  }

  /**
   * Stores what one host answered; returns the device serial, or undefined when unusable. A reply
   * carrying a known serial from another address is not stored: it is checked (pushed to
   * `sightings`) and kept as a pending move (move-check.ts). `open`: the host's probed ports.
   */
  private record(host: HostReadResult, scanId: number, methods: DiscoveryMethod[] | undefined, round: ScanRound, open?: number[]): string | undefined {
    const { devices, events, log } = this.deps;
    const now = this.deps.now();
    const parsed = parsePrinter(host.values, host.address, new Date(now));
    const observation = toObservation(parsed, host.address, now, scanId);
    if (observation) observation.discoveryMethods = methods;
    if (!observation) {
      log.warn({ ip: host.address }, 'printer answered without serial or MAC address; not stored');
      return undefined;
    }
    if (open) withProbedPorts(observation, open);
    withNeighbourMac(observation, (ip) => this.neighbour(ip));
    // One record per printer: an mDNS/IPP record of the same printer (uuid, or MAC when one has no serial) is this one.
    const existing = findSamePrinter(devices, observation);
    if (existing) observation.printerInfo.serial = observation.serial = existing.serial;
    if (existing && existing.ip !== host.address) {
      // Each saved address is read once per scan however many replies claim its serial, and a few
      // at a time: a host answering for every saved printer costs the scan a bounded amount.
      let answers = round.answers.get(existing.serial);
      if (!answers) round.answers.set(existing.serial, (answers = round.run(() => this.savedAddressAnswers(existing))));
      const checked = answers.then((a) => round.run(() => this.sighting(existing, host, observation, round.startedAt, a)));
      round.sightings.push(checked.catch((err) => log.error({ serial: existing.serial, ip: host.address, err: (err as Error).message }, 'checking a printer seen at another address failed')));
      return existing.serial;
    }
    let device = this.trusted(mergeObservation(existing, observation), host);
    const snapshot = { serial: device.serial, ts: now, ...parsed.metrics };
    if (existing && this.flagIfCounterDown(device.serial, snapshot, host.address, now)) return device.serial;
    if (counterFlagOf(device)) device = withRawData(device, { counter_flag: undefined });
    try {
      this.store([{ device, snapshot, existed: Boolean(existing), ...(existing ? { fromIp: existing.ip } : {}) }], 'storing a scanned printer');
    } catch (err) {
      if (err instanceof ReadingsKeptError) return device.serial; // the scan goes on
      throw err;
    }
    events.emit('device_change', { serial: device.serial, change: existing ? 'updated' : 'discovered' });
    return device.serial;
  }

  /** The neighbour MAC and SNMPv3 engine ID seen at a trusted reading, remembered on the record. */
  private trusted(device: Device, host: HostReadResult): Device {
    return rememberIdentity(device, { neighbour_mac: this.neighbour(host.address), engine_id: host.engineId });
  }

  private neighbour(ip: string): string | undefined {
    return (this.deps.neighbourMac ?? neighbourMac)(ip);
  }

  private fingerprint(host: HostReadResult, o: Observation): Fingerprint {
    const mac = this.neighbour(host.address);
    return {
      ip: host.address,
      ...(mac ? { neighbour_mac: mac } : {}),
      ...(o.fields.mac_address ? { reported_mac: o.fields.mac_address } : {}),
      ...(host.engineId ? { engine_id: host.engineId } : {}),
      snmp: host.securityLevel,
      ...(o.fields.model ? { model: o.fields.model } : {}),
      ...(o.fields.manufacturer ? { manufacturer: o.fields.manufacturer } : {}),
    };
  }

  /** One printer's SNMP read with the current settings (a saved or a pending address). */
  private readOne(ip: string): Promise<HostReadResult | null> {
    const s = this.deps.settings.get();
    const { snmp_timeout_ms: timeoutMs, allowed_ranges: allowedRanges } = s.discovery;
    return readHost(ip, { credentials: credentialsOf(s), timeoutMs, allowedRanges, port: s.snmp.port, planRead: readPlan, signal: this.lifetime.signal });
  }

  /** Whether the record's own address answers with its serial now (one read, the usual timeout). */
  private async savedAddressAnswers(d: Device): Promise<boolean> {
    try {
      const host = await this.readOne(d.ip);
      if (!host) return false;
      return toObservation(parsePrinter(host.values, d.ip, new Date(this.deps.now())), d.ip, this.deps.now())?.serial === d.serial;
    } catch {
      return false; // outside allowed_ranges, or not an address at all: it does not answer
    }
  }

  /**
   * A reply with `existing`'s serial from another address. Nothing from it is stored unless the
   * move is proven (move-check.ts); else the record gets (or updates) its pending move. Returns
   * the reading to store when the move was made, for a polling round to write with the others.
   */
  private async sighting(existing: Device, host: HostReadResult, o: Observation, roundStartedAt: number, savedAnswers?: boolean, forRound = false): Promise<Reading | undefined> {
    const { devices, events, log } = this.deps;
    const fp = this.fingerprint(host, o);
    const answers = savedAnswers ?? (await this.savedAddressAnswers(existing));
    if (this.lifetime.signal.aborted) return undefined;
    const current = devices.get(existing.serial);
    if (!current || current.ip === host.address) return undefined; // deleted, or moved meanwhile
    const decision = judgeSighting(current, fp, this.deps.now(), answers, roundStartedAt);
    if (decision.move) {
      log.warn({ serial: current.serial, from: current.ip, to: host.address, checks: decision.checks }, 'printer moved: the same MAC or SNMPv3 engine at the new address two rounds running, the old address silent');
      const snapshot = { serial: current.serial, ts: o.now, ...parsePrinter(host.values, host.address, new Date(o.now)).metrics };
      if (this.flagIfCounterDown(current.serial, snapshot, host.address, o.now)) return undefined; // a person decides both
      const moved = this.trusted(mergeObservation(withRawData(current, { pending_move: undefined, counter_flag: undefined }), { ...o, ip: host.address }), host);
      const reading: Reading = { device: { ...moved, ip: host.address }, snapshot, existed: true, fromIp: current.ip };
      if (!forRound) this.storeMoved(reading);
      return reading;
    }
    log.warn({ serial: current.serial, saved_ip: current.ip, ip: host.address, checks: decision.pending.checks, snmp: fp.snmp }, `printer serial seen at another address: not stored, move pending (${decision.pending.reason})`);
    try {
      devices.put(withRawData(current, { pending_move: decision.pending }));
    } catch (err) {
      if (!this.deps.storage?.failed(err, 'noting a pending move')) throw err;
      return undefined;
    }
    events.emit('device_change', { serial: current.serial, change: 'updated' });
    return undefined;
  }

  /** Reads a device's pending address; the reading to store when the move is made there and then. */
  private async pollPendingAddress(device: Device, roundStartedAt: number): Promise<Reading | undefined> {
    const pending = pendingMoveOf(device);
    if (!pending) return undefined;
    let host: HostReadResult | null = null;
    try {
      host = await this.readOne(pending.ip);
    } catch {
      return undefined;
    }
    if (!host || host.partial) return undefined;
    const now = this.deps.now();
    const o = toObservation(parsePrinter(host.values, pending.ip, new Date(now)), pending.ip, now);
    if (o?.serial !== device.serial) return undefined;
    // The saved address was just read and did not answer.
    return this.sighting(device, host, o, roundStartedAt, false, true);
  }

  /** A scan's proven move, stored at once (a polling round writes it with its other readings). */
  private storeMoved(reading: Reading): void {
    try {
      this.store([reading], 'storing a moved printer');
    } catch (err) {
      if (err instanceof ReadingsKeptError) return;
      throw err;
    }
    this.deps.events.emit('device_change', { serial: reading.device.serial, change: 'updated' });
  }

  /**
   * A reading whose page counter is below the last stored one is not stored: the device is flagged
   * (raw_data.counter_flag) until a person accepts it or the counter is back (the caller then
   * drops the flag from the record it stores). Returns the flag when flagged.
   */
  private flagIfCounterDown(serial: string, snapshot: Omit<Snapshot, 'id'>, ip: string, now: number): CounterFlag | undefined {
    const { devices, events, log } = this.deps;
    const stored = devices.latestPageCount(serial);
    const current = devices.get(serial);
    if (!current) return undefined;
    if (stored === undefined || !snapshot.page_count || snapshot.page_count >= stored) {
      // Back at or above what is stored: a flag from an earlier reading no longer stands.
      const before = counterFlagOf(current);
      if (before) log.info({ serial, page_count: snapshot.page_count, stored_page_count: stored }, 'page counter back at or above the stored one: flag cleared');
      return undefined;
    }
    const flag: CounterFlag = {
      ip,
      seen_at: formatTime(now),
      page_count: snapshot.page_count,
      stored_page_count: stored,
      reading: {
        page_count: snapshot.page_count,
        ...(snapshot.color_pages ? { color_pages: snapshot.color_pages } : {}),
        ...(snapshot.mono_pages ? { mono_pages: snapshot.mono_pages } : {}),
        ...(snapshot.scan_count ? { scan_count: snapshot.scan_count } : {}),
      },
    };
    log.warn({ serial, ip, page_count: flag.page_count, stored_page_count: stored }, 'page counter went down: reading flagged on the device, not stored');
    try {
      devices.put(withRawData(current, { counter_flag: flag }));
    } catch (err) {
      if (!this.deps.storage?.failed(err, 'flagging a page counter')) throw err;
      return flag;
    }
    events.emit('device_change', { serial, change: 'updated' });
    return flag;
  }

  private store(readings: Reading[], what: string): (number | undefined)[] {
    return storeReadings(this.deps, readings, what);
  }

  /** Reads one known device now and stores the snapshot; undefined when it did not answer. */
  async collect(serial: string): Promise<Snapshot | undefined> {
    if (this.deps.devices.get(serial)?.is_usb) return this.deps.usb?.collect(serial);
    const flagged = new Map<string, CounterFlag>();
    const snaps = await this.poll([serial], 'single', flagged);
    const flag = flagged.get(serial);
    if (!snaps[0] && flag) throw new CounterFlaggedError(flag);
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
  private poll(serials: string[], kind: 'round' | 'single' = 'single', flagged = new Map<string, CounterFlag>()): Promise<Snapshot[]> {
    const p = this.pollNow(serials, kind, flagged);
    const tracked = p.then(
      () => undefined,
      () => undefined,
    );
    this.polls.add(tracked);
    void tracked.then(() => this.polls.delete(tracked));
    return p;
  }

  /** `flagged`: filled with the readings whose page counter went down (not stored). */
  private async pollNow(serials: string[], kind: 'round' | 'single', flagged: Map<string, CounterFlag>): Promise<Snapshot[]> {
    const { devices, settings, events, log } = this.deps;
    const signal = this.lifetime.signal;
    if (signal.aborted) return [];
    const s = settings.get();
    const credentials = credentialsOf(s);
    const roundStartedAt = this.deps.now();
    // The readings not written yet: at most `batch` (see ROUND_BATCH); then only their snapshots.
    let readings: Reading[] = [];
    const stored: Snapshot[] = [];
    let taken = 0;
    const batch = Math.max(1, this.deps.roundBatch ?? ROUND_BATCH);
    let kept = 0; // readings the storage guard keeps (the card did not take their batch)
    let keptError: ReadingsKeptError | undefined;
    let failed: { err: unknown } | undefined; // a write that failed otherwise: the round ends
    const flush = () => {
      const writing = readings;
      readings = [];
      if (writing.length === 0) return;
      taken += writing.length;
      let ids: (number | undefined)[];
      try {
        ids = this.store(writing, kind === 'round' ? 'storing a polling round' : 'storing a poll');
      } catch (err) {
        // The guard keeps these and writes them when it can; the round goes on, the caller is told at its end.
        if (err instanceof ReadingsKeptError) {
          kept += writing.length;
          keptError ??= err;
        } else failed ??= { err };
        return;
      }
      writing.forEach((r, i) => {
        if (ids[i] === undefined) return;
        stored.push({ ...r.snapshot, id: ids[i]! });
        events.emit('device_change', { serial: r.snapshot.serial, change: 'metrics' });
      });
    };
    const push = (r: Reading) => {
      readings.push(r);
      if (readings.length >= batch) flush();
    };
    const queue = [...serials];
    let cut = 0; // reads cut short by stop()
    const worker = async () => {
      while (!signal.aborted && !failed) {
        await paced();
        if (signal.aborted || failed) break;
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
            push({ device: mergeObservation(device, read.observation), snapshot: { serial, ts: now, ...read.metrics }, existed: true });
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
        if (!parsed && device.raw_data?.pending_move) {
          // Silent where it is saved, and seen elsewhere before: this may be the round that
          // confirms the move (move-check.ts), or another sighting of it.
          const moved = await this.pollPendingAddress(device, roundStartedAt);
          if (moved) {
            push(moved);
            continue;
          }
        }
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
        const snapshot = { serial, ts: now, ...parsed.metrics };
        const flag = this.flagIfCounterDown(serial, snapshot, device.ip, now);
        if (flag) {
          flagged.set(serial, flag);
          continue;
        }
        let read = this.trusted(mergeObservation(device, observation), host!);
        if (counterFlagOf(read)) read = withRawData(read, { counter_flag: undefined });
        push({ device: read, snapshot, existed: true, fromIp: device.ip });
      }
    };
    await Promise.all(Array.from({ length: Math.min(s.discovery.discover_concurrency, serials.length) }, worker));
    if (signal.aborted && (cut > 0 || queue.length > 0)) {
      log.info({ read: taken + readings.length, cut_short: cut, not_started: queue.length }, kind === 'round' ? 'polling round stopped' : 'poll stopped');
    }
    if (!failed) flush();
    if (failed) throw failed.err;
    if (keptError) throw kept === keptError.count ? keptError : new ReadingsKeptError(kept, keptError.cause);
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
