// The one place discovery writes device records: each write either lands and its change is
// emitted, or the card did not take it and the storage guard is told (and, for readings, keeps
// them to write later). Scans, announcements, move checks and polls all write through here, so no
// path forgets the guard or the event, nor the bounds on new records (record-caps.ts).
import type { Logger } from '../log/logger.js';
import type { DeviceStore, Reading } from '../store/devices.js';
import type { StorageGuard } from '../store/storage-guard.js';
import type { EventBus } from '../events/bus.js';
import type { DeviceChangeKind } from '../events/payloads.js';
import type { Device } from '../model/device.js';
import { storeReadings } from '../store/store-readings.js';
import type { RecordCaps } from './record-caps.js';

export interface RecordWriterDeps {
  devices: DeviceStore;
  events: EventBus;
  log: Logger;
  storage?: Pick<StorageGuard, 'failed' | 'keep' | 'wrote'>;
}

/** Where a record moved: sent with its change event, said in the log by the caller. */
export interface Move {
  from: string;
  to: string;
}

export class RecordWriter {
  /** `caps`: asked before a reading creates a record (without: no bounds, as in tests of other parts). */
  constructor(
    private readonly deps: RecordWriterDeps,
    private readonly caps?: Pick<RecordCaps, 'admit'>,
  ) {}

  /**
   * Writes one record and emits `change`. False when the card did not take it: the guard was told
   * (what is lost is a status line or a flag, written again at the next reading). Any other error
   * is thrown.
   */
  put(device: Device, change: DeviceChangeKind, what: string): boolean {
    try {
      this.deps.devices.put(device);
    } catch (err) {
      if (!this.deps.storage?.failed(err, what)) throw err;
      return false;
    }
    this.emit(device.serial, change);
    return true;
  }

  /**
   * Writes readings in one transaction and emits each stored one's change (`changeOf`); returns
   * their ids (undefined: deleted or moved meanwhile, nothing stored). Throws ReadingsKeptError
   * when the card did not take them (the guard keeps them).
   */
  store(readings: Reading[], what: string, changeOf: (r: Reading) => DeviceChangeKind, moved?: (r: Reading) => Move | undefined): (number | undefined)[] {
    const admitted = readings.map((r) => this.admit(r));
    const kept = readings.filter((_, i) => admitted[i]);
    const stored = kept.length ? storeReadings(this.deps, kept, what) : [];
    let k = 0;
    const ids = admitted.map((ok) => (ok ? stored[k++] : undefined));
    readings.forEach((r, i) => {
      if (ids[i] === undefined) return;
      this.emit(r.device.serial, changeOf(r), moved?.(r));
    });
    return ids;
  }

  /** Whether a reading may be written: one of a record that existed always; a new one if the caps admit it (which may delete older unsaved records). */
  private admit(r: Reading): boolean {
    if (!this.caps || r.existed) return true;
    const { admitted, evicted } = this.caps.admit(r.device.serial, r.device.ip);
    for (const serial of evicted) this.emit(serial, 'deleted');
    return admitted;
  }

  emit(serial: string, change: DeviceChangeKind, moved?: Move): void {
    this.deps.events.emit('device_change', { serial, change, ...(moved ? { moved } : {}) });
  }
}
