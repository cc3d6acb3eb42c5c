// The billing schedule in the running agent: a minute tick (node-cron) asks BillingSchedule
// whether a read is due; the reads poll through the discovery service's ordinary paths.
import cron from 'node-cron';
import type { DB } from '../store/db.js';
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import { MeterReadStore } from '../store/meter-reads.js';
import type { SettingsStore } from '../settings/store.js';
import type { Logger } from '../log/logger.js';
import type { Snapshot } from '../model/device.js';
import { BillingSchedule } from './schedule.js';
import { errorText } from '../shared/error-text.js';

/** What the schedule polls through (discovery/service.ts DiscoveryService). */
export interface BillingPoller {
  /** A polling round of every saved printer (shared with one under way). */
  collectSaved(): Promise<Snapshot[]>;
  /** One printer now; undefined when it did not answer. */
  collect(serial: string): Promise<Snapshot | undefined>;
}

export function startBillingSchedule(deps: {
  db: DB; devices: DeviceStore; metrics: MetricsStore; discovery: BillingPoller; settings: SettingsStore; log: Logger; now: () => number;
}): () => void {
  const { devices, metrics, discovery, log, now } = deps;
  const schedule = new BillingSchedule({
    settings: () => deps.settings.get().billing,
    reads: new MeterReadStore(deps.db),
    savedPrinters: () => [...devices.eachSaved(['serial', 'created_at'] as const)],
    // The first attempt is a whole polling round (the ordinary one, USB printers included); a
    // retry reads only the printers still owed, one after the other.
    async poll(serials, first) {
      if (first) return discovery.collectSaved();
      const out: Snapshot[] = [];
      for (const serial of serials) {
        try {
          const s = await discovery.collect(serial);
          if (s) out.push(s);
        } catch (err) {
          log.debug({ serial, err: errorText(err) }, 'billing read: a retry failed');
        }
      }
      return out;
    },
    nearest: (serial, t, maxDistance) => metrics.nearestReading(serial, t, maxDistance, now()),
    now,
    log,
  });
  const tick = () =>
    schedule.check().catch((err: unknown) => log.error({ err: errorText(err) }, 'billing read failed'));
  const task = cron.schedule('* * * * *', tick, { name: 'printbox-billing', noOverlap: true });
  void tick(); // a read the box was off for is caught up at start
  return () => void task.stop();
}
