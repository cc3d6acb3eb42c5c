// Polling and automatic discovery on a schedule (node-cron). A minute tick compares the time since
// the last run with the current settings, so a changed interval applies at once without
// rescheduling, and a round still running is never started twice (noOverlap).
import cron from 'node-cron';
import type { Logger } from '../log/logger.js';
import type { SettingsStore } from '../settings/store.js';
import type { DiscoveryService } from './service.js';

export function startDiscoverySchedule(discovery: DiscoveryService, settings: SettingsStore, log: Logger, now: () => number): () => void {
  let lastPoll = now();
  let lastScan = -Infinity; // automatic discovery (when on) runs at start-up, then on its interval
  const task = cron.schedule(
    '* * * * *',
    async () => {
      const s = settings.get();
      const t = now();
      if (s.discovery.auto_discover && t - lastScan >= s.discovery.auto_discover_interval_minutes * 60_000) {
        lastScan = t;
        discovery.start();
      }
      if (t - lastPoll >= s.collection.interval_minutes * 60_000) {
        lastPoll = t;
        try {
          const snaps = await discovery.collectSaved();
          // A round stopped by shutdown has said so itself ("polling round stopped").
          if (!discovery.stopped) log.info({ snapshots: snaps.length }, 'polling round done');
        } catch (err) {
          log.error({ err: (err as Error).message }, 'polling round failed');
        }
      }
    },
    { name: 'printbox-poll', noOverlap: true },
  );
  // Passive listening (mDNS) follows its setting from now on; discovery.stop() ends it.
  discovery.listen();
  if (settings.get().discovery.auto_discover) {
    lastScan = now();
    discovery.start();
  }
  return () => void task.stop();
}
