// BulkPipe over one claimed interface's bulk endpoints of a real device.
import type { BulkPipe } from './pipe.js';
import type { UsbDevice } from './native.js';
import { errorText } from '../shared/error-text.js';

/** A transfer that ran out of time (not a stall, not a detach): nothing came. */
const TIMED_OUT = /time[d ]?\s*out|cancel/i;

export function bulkPipe(device: UsbDevice, inEndpoint: number | undefined, outEndpoint: number): BulkPipe {
  return {
    async write(data, timeoutMs) {
      let sent = 0;
      while (sent < data.length) {
        const n = await device.nativeTransferOut(outEndpoint, timeoutMs, data.subarray(sent));
        if (n < 0) throw new Error(`bulk OUT endpoint ${outEndpoint} stalled`);
        if (n === 0) throw new Error(`bulk OUT endpoint ${outEndpoint} took nothing`);
        sent += n;
      }
    },
    async read(maxLength, timeoutMs) {
      if (inEndpoint === undefined) return new Uint8Array(0); // unidirectional printer
      try {
        const data = await device.nativeTransferIn(inEndpoint, timeoutMs, maxLength);
        if (data === null) throw new Error(`bulk IN endpoint ${inEndpoint} stalled`);
        return data;
      } catch (err) {
        if (TIMED_OUT.test(errorText(err))) return new Uint8Array(0);
        throw err;
      }
    },
  };
}
