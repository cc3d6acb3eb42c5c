// The meters of a printer just plugged in: read at once, and again a little later when that read
// missed them because an exchange failed (a printer busy with a job, a PJL or IPP transfer that
// timed out on a loaded box), instead of waiting for the next polling round (15 minutes or more).
// A printer that answered without meters (no PJL in its Device ID, no IPP-USB) is not asked again.
import type { UsbPrinterReport } from './probe.js';

/** How long after the read before each further read at plug time. */
export const PLUG_METER_RETRIES_MS = [10_000, 60_000];

/** No page count came back, and a meters exchange failed or the printer's interface was held. */
export function metersMissed(r: UsbPrinterReport): boolean {
  if (r.ipp?.pageCount !== undefined || r.pjl?.pageCount !== undefined) return false;
  return r.busy !== undefined || r.problems.some((p) => p.startsWith('PJL: ') || p.startsWith('IPP: '));
}

export interface PlugMeterReads {
  /** Reads the meters; true when they were missed (metersMissed). */
  read(): Promise<boolean>;
  /** False once the printer is unplugged or the agent stops: no read after that. */
  stillThere(): boolean;
  pause(ms: number): Promise<void>;
}

/** Reads until the meters come or the retries run out; returns how many reads were made. */
export async function readMetersAfterPlug(p: PlugMeterReads): Promise<number> {
  let reads = 0;
  for (const delay of [0, ...PLUG_METER_RETRIES_MS]) {
    if (delay > 0) await p.pause(delay);
    if (!p.stillThere()) break;
    reads++;
    if (!(await p.read())) break;
  }
  return reads;
}
