// What the parts of discovery (scans, announcements, move checks, counter checks, polls) share:
// the service's dependencies, its lifetime (stop() aborts every read at once), the one record
// writer, and the reads every part makes the same way. DiscoveryService (service.ts) builds it.
import type { Logger } from '../log/logger.js';
import type { DeviceStore } from '../store/devices.js';
import type { StorageGuard } from '../store/storage-guard.js';
import type { SettingsStore } from '../settings/store.js';
import type { EventBus } from '../events/bus.js';
import type { Snapshot } from '../model/device.js';
import { readHost, type HostReadResult } from '../snmp/scan.js';
import { readPlan } from '../snmp/parse/printer.js';
import type { ReadContext } from './announced.js';
import { credentialsOf, toObservation } from './snmp-observation.js';
import { neighbourMac } from './neighbours.js';
import type { RecordWriter } from './record-writer.js';

export interface DiscoveryDeps {
  devices: DeviceStore;
  settings: SettingsStore;
  events: EventBus;
  log: Logger;
  now(): number;
  /** Told of every write that fails on storage; keeps the readings that could not be stored. */
  storage?: Pick<StorageGuard, 'failed' | 'keep' | 'wrote'>;
  /** Reads USB printers (they are not reached by SNMP); polled with the network ones. */
  usb?: UsbReads;
  /** The kernel neighbour table's MAC for an address (default: /proc/net/arp). */
  neighbourMac?: (ip: string) => string | undefined;
  /** Readings a polling round writes per transaction (default ROUND_BATCH, polling.ts). */
  roundBatch?: number;
}

/** What discovery asks of the USB printers (usb/service.ts's UsbPrinters, passed in by the caller). */
export interface UsbReads {
  /** Reads one plugged-in printer now; undefined when it is not plugged in or gave no meter. */
  collect(serial: string): Promise<Snapshot | undefined>;
  /** A polling round: every saved USB printer that is plugged in. */
  collectSaved(): Promise<Snapshot[]>;
}

export class DiscoveryContext {
  constructor(
    readonly deps: DiscoveryDeps,
    /** Aborted by stop(): every read in flight ends at once and none starts after. */
    readonly signal: AbortSignal,
    readonly writer: RecordWriter,
    /** Makes a promise known to stop(), which waits for its last write. */
    readonly track: (p: Promise<unknown>) => void,
  ) {}

  get stopped(): boolean {
    return this.signal.aborted;
  }

  now(): number {
    return this.deps.now();
  }

  /** What an announced (or IPP) read needs, with the current settings. */
  readContext(): ReadContext {
    const s = this.deps.settings.get();
    return { settings: s, credentials: credentialsOf(s), signal: this.signal, now: this.deps.now(), snmpObservation: toObservation };
  }

  /** One printer's SNMP read with the current settings (a saved or a pending address). */
  readOne(ip: string): Promise<HostReadResult | null> {
    const s = this.deps.settings.get();
    const { snmp_timeout_ms: timeoutMs, allowed_ranges: allowedRanges } = s.discovery;
    return readHost(ip, { credentials: credentialsOf(s), timeoutMs, allowedRanges, port: s.snmp.port, planRead: readPlan, signal: this.signal });
  }

  /** The MAC the box sees for an on-link address (its neighbour table). */
  neighbour(ip: string): string | undefined {
    return (this.deps.neighbourMac ?? neighbourMac)(ip);
  }
}
