// The `usb` package's native layer (node-usb-rs, on the nusb crate), loaded when the first USB
// printer service starts. Its WebUSB wrapper is not used: it rethrows a failure to watch for
// hotplug from a timer (an uncaught exception, which would end the agent), and it hides the
// per-call timeouts the native calls take. The native calls return null on a stall.
import { createRequire } from 'node:module';
import type { Emitter, UsbDevice } from 'usb/index.js';

export type { UsbDevice };

export interface UsbNative {
  Emitter: new () => Emitter;
  nativeGetDevices(): Promise<UsbDevice[]>;
}

let loaded: UsbNative | undefined;

/** The native binding; throws when this platform has none (the agent then runs without USB). */
export function usbNative(): UsbNative {
  loaded ??= createRequire(import.meta.url)('usb/index.js') as UsbNative;
  return loaded;
}
