// A reading whose page counter is below the last stored one is not stored: the device is flagged
// (raw_data.counter_flag) until a person accepts the reading (POST /devices/confirm-counter, a
// board swap) or the counter is back at or above what is stored. A meter that runs backwards is
// either a replaced board or someone else answering with the printer's serial: neither may enter
// the meter history by itself.
import type { Snapshot } from '../model/device.js';
import { formatTime } from '../model/time.js';
import type { DiscoveryContext } from './context.js';
import { counterFlagOf, withTrustChange, type CounterFlag } from './move-check.js';

/**
 * A single read (POST /devices/metrics/collect) whose page counter was below the last stored one:
 * the reading was flagged on the device, not stored.
 */
export class CounterFlaggedError extends Error {
  constructor(readonly flag: CounterFlag) {
    super(`page counter went down: ${flag.page_count} read at ${flag.ip}, ${flag.stored_page_count} stored; the reading is flagged on the device, not stored (POST /devices/confirm-counter accepts it)`);
  }
}

/**
 * Flags the device when `snapshot`'s page counter is below the stored one; returns the flag then.
 * Undefined when the reading may be stored (the caller drops an earlier flag from the record it
 * stores).
 */
export function flagIfCounterDown(ctx: DiscoveryContext, serial: string, snapshot: Omit<Snapshot, 'id'>, ip: string, now: number): CounterFlag | undefined {
  const { devices, log } = ctx.deps;
  const stored = devices.latestPageCount(serial);
  const current = devices.get(serial);
  if (!current) return undefined;
  if (stored === undefined || !snapshot.page_count || snapshot.page_count >= stored) {
    if (counterFlagOf(current)) log.info({ serial, page_count: snapshot.page_count, stored_page_count: stored }, 'page counter back at or above the stored one: flag cleared');
    return undefined;
  }
  const flag: CounterFlag = {
    ip,
    seen_at: formatTime(now),
    page_count: snapshot.page_count,
    stored_page_count: stored,
    reading: {
      page_count: snapshot.page_count,
      ...(snapshot.color_pages ? { color_pages: snapshot.color_pages } : {}),
      ...(snapshot.mono_pages ? { mono_pages: snapshot.mono_pages } : {}),
      ...(snapshot.scan_count ? { scan_count: snapshot.scan_count } : {}),
    },
  };
  log.warn({ serial, ip, page_count: flag.page_count, stored_page_count: stored }, 'page counter went down: reading flagged on the device, not stored');
  ctx.writer.put(withTrustChange(current, { counter_flag: flag }), 'updated', 'flagging a page counter');
  return flag;
}
