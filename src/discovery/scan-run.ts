// One range scan: SNMP over the targets (the box's own /24s and/or the configured ranges) with
// TCP port probes beside it, each answer that shows a printer stored as its one record, hosts with
// 631 open and no SNMP answer read by IPP. A host that answers but shows nothing of a printer is
// counted and said (the scan's `not_printers`), never stored. A reply that claims a known printer
// from another address goes to the move check (sightings.ts), each saved address read once a scan.
import type { DiscoveryUpdate } from '../events/payloads.js';
import { scan, type HostReadResult } from '../snmp/scan.js';
import { parsePrinter, readPlan } from '../snmp/parse/printer.js';
import { releaseHeapMemory } from '../shared/release-memory.js';
import type { DiscoveryContext } from './context.js';
import { limiter } from './limiter.js';
import { mergeObservation } from './merge.js';
import { counterFlagOf, withTrustChange } from './move-check.js';
import { wireMac, withNeighbourMac } from './neighbours.js';
import { flagIfCounterDown } from './counter-check.js';
import { findSamePrinter, readProbedIpp, SNMP_GRACE_MS } from './announced.js';
import { PRINTER_PORTS, PROBE_CONNECTIONS, PROBE_TIMEOUT_MS, probeHosts, readsByIpp, withProbedPorts } from './port-probe.js';
import { SnmpTimeline } from './snmp-timeline.js';
import { printerEvidence } from '../snmp/parse/evidence.js';
import { credentialsOf, scanTargetMethods, toObservation, type DiscoveryMethod } from './snmp-observation.js';
import type { Announcements } from './announcements.js';
import type { Sightings } from './sightings.js';
import { ReadingsKeptError } from '../store/store-readings.js';
import { newRoundId } from '../model/round.js';
import { errorText } from '../shared/error-text.js';

/** A scan's progress: what GET /discover returns and the events stream sends. */
export type ScanState = DiscoveryUpdate;

/** Saved addresses read at once at most, to check replies that claim their serial from elsewhere. */
const SIGHTING_CONCURRENCY = 4;
/** IPP reads at once at most of a scan's hosts with 631 open and no SNMP answer. */
const PROBED_IPP_CONCURRENCY = 8;

/** A probed host's IPP read gets at least this, however little of its SNMP timeout is left. */
const MIN_PROBED_IPP_MS = 1000;
/** Hosts that are not printers listed at most (GET /discover/status); all are counted. */
const MAX_NOT_PRINTERS_LISTED = 256;

/** A host a scan heard that is not a printer, and why. */
export interface NotPrinter {
  ip: string;
  why: string;
}

/** A host that answered as a printer with nothing to key its record by (GET /discover/status). */
export interface UnkeyedPrinter {
  ip: string;
  why: string;
  manufacturer?: string;
  model?: string;
}

/** Unkeyed printers listed at most (one scan of a /16 of such hosts must not fill the answer). */
const MAX_UNKEYED_LISTED = 256;

/** What a scan knows of each host so far. */
interface ScanHosts {
  /** Stored as printers. */
  answered: Set<string>;
  /** SNMP records being written (waiting for the host's port probe). */
  recorded: Map<string, Promise<void>>;
  /** Answered SNMP without a printer's evidence: why (IPP may still show a printer there). */
  snmpOnly: Map<string, string>;
  notPrinter(ip: string, why: string): void;
  /** Answered SNMP as printers with no serial and no MAC (an IPP read may still key them). */
  unkeyed: Map<string, UnkeyedPrinter>;
}

/** A scan's bookkeeping for replies that claim a known serial from another address. */
interface ScanRound {
  sightings: Promise<unknown>[];
  run: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Per serial: whether its saved address answered (read once per scan). */
  answers: Map<string, Promise<boolean>>;
  /** The scan's reading round (model/round.ts): its readings go to the server as one round. */
  id: number;
}

export class ScanRun {
  constructor(
    private readonly ctx: DiscoveryContext,
    private readonly sightings: Sightings,
    private readonly announcements: Announcements,
  ) {}

  /** The hosts the last scan heard that are not printers, each with why (at most MAX_NOT_PRINTERS_LISTED). */
  notPrinters: NotPrinter[] = [];
  /** The printers the last scan heard and could not store: nothing to key them by (at most MAX_UNKEYED_LISTED). */
  unkeyed: UnkeyedPrinter[] = [];

  async run(state: ScanState, signal: AbortSignal): Promise<void> {
    const { settings, events, log } = this.ctx.deps;
    const s = settings.get();
    const publish = () => events.emit('discovery_update', { ...state });
    const started = Date.now();
    const notPrinters = new Map<string, string>();
    this.notPrinters = [];
    try {
      const probing = s.discovery.port_probes_enabled;
      const methods = s.discovery.enable_snmp || probing ? scanTargetMethods(s) : new Map<string, DiscoveryMethod[]>();
      const targets = [...methods.keys()];
      state.total = targets.length;
      state.not_printers = 0;
      publish();
      log.info({ scan_id: state.scan_id, targets: targets.length, port_probes: probing }, 'discovery started');
      let lastPublish = 0;
      const round: ScanRound = { sightings: [], run: limiter(SIGHTING_CONCURRENCY), answers: new Map(), id: newRoundId() };
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
      const hosts: ScanHosts = { answered: new Set(), recorded: new Map(), snmpOnly: new Map(), notPrinter: (ip, why) => notPrinters.set(ip, why), unkeyed: new Map() };
      // Hosts with 631 open and no SNMP answer are read by IPP beside their own SNMP read, not after the scan.
      const timeline = s.discovery.enable_snmp ? new SnmpTimeline() : undefined;
      const probedReads = probes ? this.readProbed(probes, hosts, timeline, methods, state.scan_id, signal, () => (phases.ipp_ms = Date.now() - started)) : Promise.resolve(0);
      const recordHost = (host: HostReadResult, open?: number[]) => {
        if (!this.record(host, state.scan_id, methods.get(host.address), round, hosts, open)) return;
        state.found++;
        hosts.answered.add(host.address);
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
          hosts.recorded.set(host.address, ports.then((open) => recordHost(host, open)).catch((err: unknown) => log.error({ ip: host.address, err: errorText(err) }, 'storing a scanned printer failed')));
        },
      });
      timeline?.finish();
      await Promise.all(hosts.recorded.values());
      state.found += await probedReads;
      // A host that answered SNMP without a printer's evidence, and that IPP did not show to be one either.
      for (const [ip, why] of hosts.snmpOnly) if (!hosts.answered.has(ip) && !notPrinters.has(ip)) notPrinters.set(ip, why);
      // Replies that claimed a known serial from another address, each checked against the saved one.
      await Promise.all(round.sightings);
      state.scanned = scanned();
      state.not_printers = notPrinters.size;
      // Those an IPP read keyed after all (a serial or printer-uuid) are stored, not listed here.
      this.unkeyed = [...hosts.unkeyed.values()].filter((u) => !hosts.answered.has(u.ip)).slice(0, MAX_UNKEYED_LISTED);
      this.notPrinters = [...notPrinters].slice(0, MAX_NOT_PRINTERS_LISTED).map(([ip, why]) => ({ ip, why }));
      if (notPrinters.size > 0) log.info({ scan_id: state.scan_id, not_printers: notPrinters.size, hosts: this.notPrinters.slice(0, 16) }, 'hosts that answered but are not printers: not listed');
      if (result.aborted || signal.aborted) {
        state.state = 'failed';
        state.error = 'scan stopped: the agent is shutting down';
        log.info({ scan_id: state.scan_id, found: state.found, scanned: state.scanned, total: state.total, ms: Date.now() - started }, 'discovery stopped');
      } else {
        state.state = 'done';
        log.info({ scan_id: state.scan_id, found: state.found, not_printers: state.not_printers, ms: Date.now() - started, snmp_ms: result.durationMs, ...(probing ? phases : {}), skipped: result.skipped.length }, 'discovery done');
      }
    } catch (err) {
      state.state = 'failed';
      state.error = errorText(err);
      log.error({ scan_id: state.scan_id, err: state.error }, 'discovery failed');
    }
    releaseHeapMemory(); // a scan's garbage, as a polling round's
    publish();
  }

  /**
   * A scan's hosts with port 631 open that gave no (usable) SNMP answer, read by IPP and stored as
   * announced printers are (one record per printer); a print server's queue is listed as a queue.
   * A host with other ports open but not 631 is not listed: an open 9100 or web port says nothing
   * of what the host is. Returns how many printers were stored.
   *
   * Runs beside the SNMP scan (`timeline`: each host's SNMP read; undefined when SNMP is off): a
   * host's IPP read starts once its SNMP read has started and its agent has not answered within
   * SNMP_GRACE_MS, and must end by the time that SNMP read times out, so a silent or mute host
   * costs no more than its SNMP timeout. A host whose agent answered is read by IPP only when its
   * SNMP answer gave no printer record (after its read ended).
   */
  private async readProbed(
    probes: Map<string, Promise<number[]>>,
    hosts: ScanHosts,
    timeline: SnmpTimeline | undefined,
    methods: Map<string, DiscoveryMethod[]>,
    scanId: number,
    signal: AbortSignal,
    onRead: () => void,
  ): Promise<number> {
    const { log } = this.ctx.deps;
    const timeoutMs = this.ctx.deps.settings.get().discovery.snmp_timeout_ms;
    // Each read waits for its host's SNMP read, so no more run at once than SNMP reads do.
    const run = limiter(Math.max(PROBED_IPP_CONCURRENCY, this.ctx.deps.settings.get().discovery.discover_concurrency));
    const ippRead = (address: string, budgetMs: number) =>
      run(() => (signal.aborted ? Promise.resolve({ error: 'scan stopped' }) : readProbedIpp(address, this.ctx.readContext(), 631, Math.max(budgetMs, MIN_PROBED_IPP_MS))));
    let stored = 0;
    await Promise.all(
      [...probes].map(async ([address, ports]) => {
        const open = await ports;
        if (signal.aborted || open.length === 0) return;
        if (!readsByIpp(open)) {
          await timeline?.whenEnded(address);
          await hosts.recorded.get(address);
          if (hosts.answered.has(address) || hosts.snmpOnly.has(address)) return;
          log.debug({ ip: address, open_ports: open }, 'ports open, no SNMP answer and no IPP port: not listed');
          hosts.notPrinter(address, `${open.map((p) => `tcp ${p}`).join(', ')} open; no SNMP answer and no IPP port`);
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
          await hosts.recorded.get(address);
        }
        if (hosts.answered.has(address) || signal.aborted) return;
        const read = await (early ?? ippRead(address, timeoutMs));
        onRead();
        if (signal.aborted || this.ctx.stopped) return;
        if ('error' in read) {
          log.info({ ip: address, open_ports: open, err: read.error }, 'port 631 open but no IPP answer: not listed');
          hosts.notPrinter(address, [hosts.snmpOnly.get(address), `port 631 open but no IPP answer (${read.error})`].filter(Boolean).join('; '));
          return;
        }
        if ('queue' in read) {
          this.announcements.queueSeen(address, read.queue, 'port_probe');
          hosts.notPrinter(address, `a print server sharing queue ${read.queue.queue} (${read.queue.why})`);
          return;
        }
        const o = read.observation;
        o.scanId = scanId;
        o.discoveryMethods = [...(o.discoveryMethods ?? []), ...(methods.get(address) ?? [])];
        withProbedPorts(o, open);
        try {
          if (await this.announcements.store(read)) {
            stored++;
            hosts.answered.add(address);
          }
        } catch (err) {
          log.error({ ip: address, err: errorText(err) }, 'storing a printer read by IPP failed');
        }
      }),
    );
    return stored;
  }

  /**
   * Stores what one host answered; returns the device serial, or undefined when unusable. A reply
   * carrying a known serial from another address is not stored: it goes to the move check
   * (pushed to `round.sightings`). `open`: the host's probed ports.
   */
  private record(host: HostReadResult, scanId: number, methods: DiscoveryMethod[] | undefined, round: ScanRound, hosts: ScanHosts, open?: number[]): string | undefined {
    const { devices, log } = this.ctx.deps;
    const now = this.ctx.now();
    // Only a printer becomes a record: switches, UPSes, servers and cameras answer SNMP too.
    const evidence = printerEvidence(host.values);
    if (!evidence.printer) {
      log.debug({ ip: host.address, why: evidence.why }, 'answers SNMP but is not a printer: not listed');
      hosts.snmpOnly.set(host.address, evidence.why); // IPP may still show a printer there (port 631)
      return undefined;
    }
    const parsed = parsePrinter(host.values, host.address, new Date(now));
    // No serial and no MAC of its own: the MAC the box saw on the wire keys it (`MAC-…`, as a
    // printer reporting its MAC would be), for a printer on the box's own links.
    const seenMac = parsed.serial || parsed.info.mac_address ? undefined : wireMac(host.address, (ip) => this.ctx.neighbour(ip));
    const observation = toObservation(seenMac ? { ...parsed, info: { ...parsed.info, mac_address: seenMac } } : parsed, host.address, now, scanId);
    if (!observation) {
      // Keyed by its address it would become a second record when the address changes: not stored,
      // and said on the Discovered page (GET /discover/status `unkeyed_printers`).
      const why = 'answered as a printer without a serial or a MAC address, and the box has no neighbour entry for it (not on its own links): nothing to tell it apart from another printer at this address later; not stored';
      log.warn({ ip: host.address }, 'printer answered without serial or MAC address; not stored');
      hosts.unkeyed.set(host.address, { ip: host.address, why, ...(parsed.info.manufacturer ? { manufacturer: parsed.info.manufacturer } : {}), ...(parsed.info.model ? { model: parsed.info.model } : {}) });
      return undefined;
    }
    observation.discoveryMethods = methods;
    const reasons = Array.isArray(observation.printerInfo.detection_reasons) ? (observation.printerInfo.detection_reasons as string[]) : [];
    observation.printerInfo.detection_reasons = [...evidence.reasons.map((r) => `snmp: ${r}`), ...reasons];
    if (open) withProbedPorts(observation, open);
    withNeighbourMac(observation, (ip) => this.ctx.neighbour(ip));
    // One record per printer: an mDNS/IPP record of the same printer (uuid, or MAC when one has no serial) is this one.
    const existing = findSamePrinter(devices, observation);
    if (existing) observation.printerInfo.serial = observation.serial = existing.serial;
    if (existing && existing.ip !== host.address) {
      // Each saved address is read once per scan however many replies claim its serial, and a few
      // at a time: a host answering for every saved printer costs the scan a bounded amount.
      let answers = round.answers.get(existing.serial);
      if (!answers) round.answers.set(existing.serial, (answers = round.run(() => this.sightings.savedAddressAnswers(existing))));
      const checked = answers.then((a) => round.run(() => this.sightings.fromSnmp(existing, host, observation, a)));
      round.sightings.push(checked.catch((err) => log.error({ serial: existing.serial, ip: host.address, err: errorText(err) }, 'checking a printer seen at another address failed')));
      return existing.serial;
    }
    let device = this.sightings.trusted(mergeObservation(existing, observation), host);
    const snapshot = { serial: device.serial, ts: now, ...parsed.metrics };
    if (existing && flagIfCounterDown(this.ctx, device.serial, snapshot, host.address, now)) return device.serial;
    if (counterFlagOf(device)) device = withTrustChange(device, { counter_flag: undefined });
    try {
      this.ctx.writer.store([{ device, snapshot, existed: Boolean(existing), round: round.id, ...(existing ? { fromIp: existing.ip } : {}) }], 'storing a scanned printer', () => (existing ? 'updated' : 'discovered'));
    } catch (err) {
      if (!(err instanceof ReadingsKeptError)) throw err; // kept: the scan goes on
    }
    return device.serial;
  }
}
