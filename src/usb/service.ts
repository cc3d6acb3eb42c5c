// USB printers plugged into the box: watched through the `usb` package's hotplug events (netlink,
// after udev has given the device node to the agent's group), read at once when plugged in
// (identity first, so the printer is listed within moments, then its meters), kept as devices
// (source_type "usb"), marked unplugged when removed (never deleted), and read again by polls.
//
// One read at a time per printer (a plug during a poll waits for it). Without hotplug (no netlink
// in some sandbox), the bus is enumerated again at every polling round instead.
import { existsSync } from 'node:fs';
import type { EventBus } from '../events/bus.js';
import type { Snapshot } from '../model/device.js';
import { storeReadings, type ReadingsSink } from '../store/store-readings.js';
import { usbNative, type UsbDevice, type UsbNative } from './native.js';
import { isPrinter, portPathOf, printerInterfaces, probePrinter, type UsbPrinterReport } from './probe.js';
import { markUnplugged, portName, usbDevice, usbSerial, usbSnapshot } from './reading.js';
import { metersMissed, readMetersAfterPlug } from './plug-retry.js';
import { errorText } from '../shared/error-text.js';

export interface UsbPrintersDeps extends ReadingsSink {
  events: EventBus;
  now(): number;
  /** Each control request and protocol exchange (default 2 s; PJL and IPP get twice that). */
  timeoutMs?: number;
}

interface Attached {
  device: UsbDevice;
  /** Set once its first read is stored. */
  serial?: string;
  /** The read under way, if any: reads of one printer never overlap. */
  reading: Promise<unknown>;
  /** Its last meters read missed them (plug-retry.ts). */
  metersMissed?: boolean;
}

/** Where the kernel lists USB devices: there once a USB controller's driver is loaded. */
const USB_BUS_DIR = '/sys/bus/usb/devices';

const message = (err: unknown) => (errorText(err));

export class UsbPrinters {
  private native?: UsbNative;
  private emitter?: InstanceType<UsbNative['Emitter']>;
  private readonly attached = new Map<string, Attached>();
  private stopped = false;
  private readonly timeoutMs: number;
  private waitForBus?: NodeJS.Timeout;

  constructor(private readonly deps: UsbPrintersDeps) {
    this.timeoutMs = deps.timeoutMs ?? 2000;
  }

  /** Watches the bus and reads the printers already plugged in. Never throws: USB is optional. */
  async start(): Promise<void> {
    const { log } = this.deps;
    // A machine without USB (no usbcore: a container, a test host) waits for it quietly. The
    // appliance loads usbcore before the agent (its device sandbox needs it, see the unit).
    if (!existsSync(USB_BUS_DIR)) {
      log.info({ dir: USB_BUS_DIR }, 'no USB bus yet: waiting for one');
      await new Promise<void>((resolve) => {
        this.waitForBus = setInterval(() => {
          if (this.stopped || existsSync(USB_BUS_DIR)) {
            clearInterval(this.waitForBus);
            resolve();
          }
        }, 1000);
        this.waitForBus.unref();
      });
      if (this.stopped) return;
    }
    try {
      this.native = usbNative();
    } catch (err) {
      log.warn({ err: message(err) }, 'USB printers are not read: the usb package has no native layer here');
      return;
    }
    try {
      const emitter = new this.native.Emitter();
      await emitter.addAttach((d) => this.plugged(d));
      await emitter.addDetach((handle) => this.unplugged(handle));
      this.emitter = emitter;
      log.info('watching USB hotplug events');
    } catch (err) {
      log.warn({ err: message(err) }, 'USB hotplug events not available: USB printers are looked for at each polling round');
    }
    await this.refresh();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.waitForBus);
    await this.emitter?.removeAttach().catch(() => undefined);
    await this.emitter?.removeDetach().catch(() => undefined);
    await Promise.allSettled([...this.attached.values()].map((a) => a.reading));
  }

  /** Reads one plugged-in printer now; undefined when it is not plugged in or gave no meter. */
  async collect(serial: string): Promise<Snapshot | undefined> {
    const entry = [...this.attached.values()].find((a) => a.serial === serial);
    return entry ? this.read(entry, true) : undefined;
  }

  /** A polling round: every saved USB printer that is plugged in. */
  async collectSaved(): Promise<Snapshot[]> {
    if (!this.native || this.stopped) return [];
    if (!this.emitter) await this.refresh();
    const saved = new Set(this.deps.devices.listSaved().filter((d) => d.is_usb).map((d) => d.serial));
    const out: Snapshot[] = [];
    for (const entry of [...this.attached.values()]) {
      if (!entry.serial || !saved.has(entry.serial)) continue;
      const snap = await this.read(entry, true).catch((err: unknown) => {
        this.deps.log.warn({ serial: entry.serial, err: message(err) }, 'USB printer not read');
        return undefined;
      });
      if (snap) out.push(snap);
    }
    return out;
  }

  /** The bus as it is now against what the agent knows: new printers read, gone ones unplugged. */
  private async refresh(): Promise<void> {
    let devices: UsbDevice[];
    try {
      devices = await this.native!.nativeGetDevices();
    } catch (err) {
      this.deps.log.warn({ err: message(err) }, 'USB devices could not be listed');
      return;
    }
    const present = new Set(devices.map((d) => d.handle));
    for (const handle of [...this.attached.keys()]) if (!present.has(handle)) this.unplugged(handle);
    for (const d of devices) if (!this.attached.has(d.handle)) this.plugged(d);
  }

  private plugged(device: UsbDevice): void {
    if (this.stopped) return;
    if (!isPrinter(device)) {
      this.deps.log.debug({ port_name: portName(portPathOf(device)), device_class: device.deviceClass }, 'USB device plugged in: not a printer');
      return;
    }
    const entry: Attached = { device, reading: Promise.resolve() };
    this.attached.set(device.handle, entry);
    this.deps.log.info({ port_name: portName(portPathOf(device)), vendor_id: device.vendorId, product_id: device.productId }, 'USB printer plugged in');
    // Identity first (listed at once), then the meters, which can take seconds (PJL, IPP), and
    // again shortly when an exchange failed (plug-retry.ts).
    void this.read(entry, false)
      .then(() =>
        readMetersAfterPlug({
          read: () => this.read(entry, true).then(() => entry.metersMissed === true),
          stillThere: () => !this.stopped && this.attached.get(device.handle) === entry,
          pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
        }),
      )
      .catch((err: unknown) => this.deps.log.warn({ port_name: portName(portPathOf(device)), err: message(err) }, 'USB printer not read'));
  }

  private unplugged(handle: string): void {
    const entry = this.attached.get(handle);
    if (!entry) return;
    this.attached.delete(handle);
    this.deps.log.info({ serial: entry.serial, port_name: portName(portPathOf(entry.device)) }, 'USB printer unplugged');
    if (entry.serial) this.markUnplugged(entry.serial);
  }

  private markUnplugged(serial: string): void {
    const { devices, events, storage, now } = this.deps;
    const current = devices.get(serial);
    if (!current) return;
    try {
      devices.put(markUnplugged(current, now()));
    } catch (err) {
      if (!storage?.failed(err, 'marking a USB printer unplugged')) throw err;
      return;
    }
    events.emit('device_change', { serial, change: 'updated' });
  }

  /** Queues a read of this printer after the one under way; resolves its stored snapshot. */
  private read(entry: Attached, meters: boolean): Promise<Snapshot | undefined> {
    const next = entry.reading.then(() => this.readNow(entry, meters));
    entry.reading = next.catch(() => undefined);
    return next;
  }

  private async readNow(entry: Attached, meters: boolean): Promise<Snapshot | undefined> {
    const { log } = this.deps;
    if (this.stopped || this.attached.get(entry.device.handle) !== entry) return undefined;
    const t0 = Date.now();
    await this.configured(entry);
    const report = await probePrinter(entry.device, { timeoutMs: meters ? this.timeoutMs * 2 : this.timeoutMs, meters });
    if (this.stopped) return undefined;
    const serial = usbSerial(report);
    const port = portName(report.portPath);
    if (report.problems.length) log.warn({ serial, port_name: port, problems: report.problems }, 'USB printer answered in part');
    if (entry.serial && entry.serial !== serial) log.warn({ was: entry.serial, now: serial, port_name: port }, 'USB printer reports another serial than before');
    const snapshot = meters ? this.store(report, serial) : (this.storeIdentity(report, serial), undefined);
    if (meters) entry.metersMissed = metersMissed(report);
    entry.serial = serial;
    log.info({ serial, port_name: port, meters, ms: Date.now() - t0, busy: report.busy }, 'USB printer read');
    // Unplugged while it was being read: it was stored as present, so say it is gone.
    if (this.attached.get(entry.device.handle) !== entry) this.markUnplugged(serial);
    return snapshot;
  }

  /**
   * Hotplug can report a printer before the kernel has set its configuration (its interfaces are
   * unknown until then): the device is listed again until they are there, for 2 s at most.
   */
  private async configured(entry: Attached): Promise<void> {
    for (let i = 0; i < 20 && printerInterfaces(entry.device).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const fresh = (await this.native!.nativeGetDevices().catch(() => [])).find((d) => d.handle === entry.device.handle);
      if (fresh) entry.device = fresh;
    }
  }

  /** The record only (identity, port status): what a plug stores before the meters come. */
  private storeIdentity(report: UsbPrinterReport, serial: string): void {
    const { devices, events, storage, now } = this.deps;
    const existing = devices.get(serial);
    try {
      devices.put(usbDevice(existing, report, now()));
    } catch (err) {
      if (!storage?.failed(err, 'storing a USB printer')) throw err;
      return;
    }
    events.emit('device_change', { serial, change: existing ? 'updated' : 'discovered' });
  }

  /** The record and a raw snapshot, in one transaction (the storage guard keeps it on a full card). */
  private store(report: UsbPrinterReport, serial: string): Snapshot | undefined {
    const { devices, events, now } = this.deps;
    const t = now();
    const existing = devices.get(serial);
    const device = usbDevice(existing, report, t);
    const snapshot = usbSnapshot(report, t);
    // On a full card this throws ReadingsKeptError (the API answers 507); the guard keeps it.
    const [id] = storeReadings(this.deps, [{ device, snapshot, existed: false }], 'storing a USB printer reading');
    events.emit('device_change', { serial, change: existing ? 'metrics' : 'discovered' });
    return id === undefined ? undefined : { ...snapshot, id };
  }
}
