// The one place discovery writes device records: each write either lands and its change is
// emitted, or the card did not take it and the storage guard is told (and, for readings, keeps
// them to write later). Scans, announcements, move checks and polls all write through here, so no
// path forgets the guard or the event.
import type { Logger } from '../log/logger.js';
import type { DeviceStore, Reading } from '../store/devices.js';
import type { StorageGuard } from '../store/storage-guard.js';
import type { DeviceChangeKind, EventBus } from '../events/bus.js';
import type { Device } from '../model/device.js';
import { storeReadings } from './store-readings.js';

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
  constructor(private readonly deps: RecordWriterDeps) {}

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
    const ids = storeReadings(this.deps, readings, what);
    readings.forEach((r, i) => {
      if (ids[i] === undefined) return;
      this.emit(r.device.serial, changeOf(r), moved?.(r));
    });
    return ids;
  }

  emit(serial: string, change: DeviceChangeKind, moved?: Move): void {
    this.deps.events.emit('device_change', { serial, change, ...(moved ? { moved } : {}) });
  }
}
