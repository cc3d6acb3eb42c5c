// Discovery and collection, the facade the rest of the agent uses: range scans (scan-run.ts),
// announcements by mDNS, WS-Discovery and SSDP (announcements.ts), the move check of printers seen
// at another address (sightings.ts) and polling of saved printers (polling.ts). Every record is
// written through one RecordWriter (record-writer.ts). One scan at a time, one polling round at a time.
//
// Stopping (stop(), at shutdown) must not wait for the network: one AbortSignal for the service's
// life goes to every read (readHost closes its SNMP sessions when it fires, so requests in flight
// fail at once instead of at their timeout), and no read starts after it.
import { setMaxListeners } from 'node:events';
import type { Settings } from '../settings/settings.js';
import type { Snapshot } from '../model/device.js';
import { MdnsListener, type MdnsStatus } from './mdns.js';
import type { QueueEntry } from './print-queues.js';
import { WsdListener } from './wsd.js';
import { SsdpSearcher } from './ssdp.js';
import { DiscoveryContext, type DiscoveryDeps } from './context.js';
import { RecordWriter } from './record-writer.js';
import { Sightings } from './sightings.js';
import { Announcements } from './announcements.js';
import { ScanRun, type NotPrinter, type ScanState, type UnkeyedPrinter } from './scan-run.js';
import { poll } from './polling.js';
import { CounterFlaggedError } from './counter-check.js';
import type { CounterFlag } from './move-check.js';
import type { GateClock } from './announce-gate.js';
import type { GuardStatus } from './source-guard.js';
import { RecordCaps, type RecordCapsStatus } from './record-caps.js';

export type { DiscoveryDeps } from './context.js';

export interface DiscoveryOverview {
  scan: ScanState | null;
  not_printer_hosts: NotPrinter[];
  unkeyed_printers: UnkeyedPrinter[];
  awaiting_save: number;
  print_queues: QueueEntry[];
  mdns: MdnsStatus | null;
  /** WS-Discovery's and SSDP's flood bounds (null while the listener is off). */
  wsd: GuardStatus | null;
  ssdp: GuardStatus | null;
  /** The bounds on unsaved device records (record-caps.ts). */
  records: RecordCapsStatus;
}
export type { ScanState } from './scan-run.js';
export { ROUND_BATCH } from './polling.js';
export { CounterFlaggedError } from './counter-check.js';
export { ReadingsKeptError } from '../store/store-readings.js';

export class DiscoveryService {
  private lastScanId = 0;
  private current?: { state: ScanState; abort: AbortController; done: Promise<void> };
  private polling?: Promise<Snapshot[]>;
  /** Aborted by stop(): every read in flight ends at once and none starts after. */
  private readonly lifetime = new AbortController();
  /** Polls under way (rounds and single reads), so that stop() waits for their last write. */
  private readonly polls = new Set<Promise<unknown>>();
  private readonly ctx: DiscoveryContext;
  private readonly sightings: Sightings;
  private readonly announcements: Announcements;
  private readonly scans: ScanRun;
  /** mDNS announcements (discovery.mdns_enabled), started by listen(). */
  private mdns?: MdnsListener;
  /** WS-Discovery (discovery.wsd_enabled) and SSDP (discovery.ssdp_enabled), beside mDNS. */
  private wsd?: WsdListener;
  private ssdp?: SsdpSearcher;
  private stopWatchingSettings?: () => void;
  private readonly caps: RecordCaps;

  /** `announceClock`: the announcement gate's clock (tests). */
  constructor(private readonly deps: DiscoveryDeps, announceClock?: GateClock) {
    // Each host being read holds one abort listener (removed when its read ends); reads are
    // bounded by discover_concurrency per round plus single reads from the API.
    setMaxListeners(0, this.lifetime.signal);
    const track = (p: Promise<unknown>) => {
      const tracked = p.then(
        () => undefined,
        () => undefined,
      );
      this.polls.add(tracked);
      void tracked.then(() => this.polls.delete(tracked));
    };
    this.caps = new RecordCaps({ devices: deps.devices, log: deps.log, now: () => deps.now() });
    this.ctx = new DiscoveryContext(deps, this.lifetime.signal, new RecordWriter(deps, this.caps), track);
    this.sightings = new Sightings(this.ctx);
    this.announcements = new Announcements(this.ctx, this.sightings, announceClock);
    this.scans = new ScanRun(this.ctx, this.sightings, this.announcements);
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

  /**
   * What discovery sees beyond the printers it lists (GET /discover/status): the last scan, the
   * hosts it heard that are not printers and why, the print servers' queues, and the listeners
   * (mDNS per interface, with what failed and what a flood made it drop).
   */
  overview(): DiscoveryOverview {
    return {
      scan: this.current?.state ?? null,
      not_printer_hosts: this.scans.notPrinters,
      unkeyed_printers: this.scans.unkeyed,
      awaiting_save: this.deps.devices.countAwaitingSave(),
      print_queues: this.announcements.queueList(),
      mdns: this.mdns?.running ? this.mdns.status() : null,
      wsd: this.wsd?.running ? this.wsd.status() : null,
      ssdp: this.ssdp?.running ? this.ssdp.status() : null,
      records: this.caps.status(),
    };
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
    const done = this.scans.run(state, abort.signal);
    this.current = { state, abort, done };
    return { state, alreadyRunning: false };
  }

  /** Waits for the running scan, if any (tests, shutdown). */
  async settle(): Promise<void> {
    await this.current?.done;
  }

  /**
   * Stops the scan, the announced reads and every poll without waiting for the network (see the
   * top of this file); resolves once their last writes are done. Nothing starts afterwards.
   */
  async stop(): Promise<void> {
    this.stopWatchingSettings?.();
    this.mdns?.stop();
    this.wsd?.stop();
    this.ssdp?.stop();
    this.lifetime.abort();
    this.current?.abort.abort();
    await Promise.allSettled([this.current?.done, this.announcements.close(), ...this.polls]);
  }

  /**
   * Starts listening for mDNS announcements while discovery.mdns_enabled is on, WS-Discovery while
   * discovery.wsd_enabled is, and SSDP searches while discovery.ssdp_enabled is (follows the settings live).
   */
  listen(): void {
    if (this.stopped || this.stopWatchingSettings) return;
    const announced = this.announcements;
    const apply = (s: Settings) => {
      if (this.stopped) return;
      this.mdns ??= new MdnsListener({
        log: this.deps.log,
        onAnnounce: (p) => announced.announced(p),
        onGoodbye: (g) => announced.gone(g.address, 'mdns', g.why),
      });
      if (s.discovery.mdns_enabled && !this.mdns.running) this.mdns.start();
      else if (!s.discovery.mdns_enabled && this.mdns.running) this.mdns.stop();
      this.wsd ??= new WsdListener({ log: this.deps.log, onAnnounce: (p) => announced.announced(p), onGoodbye: (g) => announced.gone(g.address, 'wsd') });
      if (s.discovery.wsd_enabled && !this.wsd.running) this.wsd.start();
      else if (!s.discovery.wsd_enabled && this.wsd.running) this.wsd.stop();
      this.ssdp ??= new SsdpSearcher({ log: this.deps.log, onAnnounce: (p) => announced.announced(p) });
      if (s.discovery.ssdp_enabled && !this.ssdp.running) this.ssdp.start();
      else if (!s.discovery.ssdp_enabled && this.ssdp.running) this.ssdp.stop();
    };
    this.stopWatchingSettings = this.deps.settings.onChange(apply);
    apply(this.deps.settings.get());
  }

  /** An announcement from outside the listeners (tests). */
  announced(...args: Parameters<Announcements['announced']>): void {
    this.announcements.announced(...args);
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

  /** Polls every saved device; the round's readings are written in batches (polling.ts). */
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
  private poll(serials: string[], kind: 'round' | 'single', flagged = new Map<string, CounterFlag>()): Promise<Snapshot[]> {
    const p = poll(this.ctx, this.sightings, serials, kind, flagged);
    this.ctx.track(p);
    return p;
  }
}
