// A plugged printer's meters read again when an exchange failed (src/usb/plug-retry.ts): which
// reports count as missed, and how often and when the reads come. (The reads themselves run on
// real USB gadgets in the boot test; here they are stand-ins returning what a read found.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PLUG_METER_RETRIES_MS, metersMissed, readMetersAfterPlug } from '../../../src/usb/plug-retry.js';
import type { UsbPrinterReport } from '../../../src/usb/probe.js';

const report = (extra: Partial<UsbPrinterReport>): UsbPrinterReport => ({
  portPath: '1-1', vendorId: 0x1d6b, productId: 0x0104, ippUsb: false, problems: [], ...extra,
});

test('meters missed: no page count, and a PJL or IPP exchange failed or the interface was held', () => {
  assert.equal(metersMissed(report({ problems: ['PJL: transferOut error: Cancelled'] })), true);
  assert.equal(metersMissed(report({ problems: ['PJL: no answer'] })), true);
  assert.equal(metersMissed(report({ problems: ['IPP: timed out'] })), true);
  assert.equal(metersMissed(report({ busy: 'interface 0 is held by another driver or program' })), true);
  // A page count came back: nothing to read again, whatever else failed.
  assert.equal(metersMissed(report({ pjl: { pageCount: 4242 }, problems: ['IPP: timed out'] })), false);
  // A printer that has no meters to give (its Device ID failed, no PJL, no IPP-USB) is not asked again.
  assert.equal(metersMissed(report({ problems: ['Device ID: controlTransferIn error: endpoint stalled'] })), false);
  assert.equal(metersMissed(report({})), false);
});

function reads(found: boolean[], unplugAfterPauses = Infinity) {
  const pauses: number[] = [];
  let n = 0;
  const done = readMetersAfterPlug({
    read: async () => !found[n++],
    stillThere: () => pauses.length < unplugAfterPauses,
    pause: async (ms) => void pauses.push(ms),
  });
  return done.then((count) => ({ count, pauses }));
}

test('meters read at plug: once when they come, again after 10 s and 60 s while they are missed', async () => {
  assert.deepEqual(PLUG_METER_RETRIES_MS, [10_000, 60_000]);
  assert.deepEqual(await reads([true]), { count: 1, pauses: [] });
  assert.deepEqual(await reads([false, true]), { count: 2, pauses: [10_000] });
  assert.deepEqual(await reads([false, false, true]), { count: 3, pauses: [10_000, 60_000] });
  // Never: three reads in all, then the polling rounds take over.
  assert.deepEqual(await reads([false, false, false, false]), { count: 3, pauses: [10_000, 60_000] });
});

test('meters read at plug: no read once the printer is unplugged (or the agent stops)', async () => {
  assert.deepEqual(await reads([false, true], 1), { count: 1, pauses: [10_000] });
  assert.deepEqual(await reads([false, false, true], 2), { count: 2, pauses: [10_000, 60_000] });
});
