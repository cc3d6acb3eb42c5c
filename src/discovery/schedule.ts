// Polling and automatic discovery on a schedule. A minute tick (node-cron, on the wall clock's
// minutes) asks each DueTimes (shared/due-times.ts) whether its run is due: the next run is planned
// one interval after the previous one was due, so an interval of N minutes gives readings N minutes
// apart whatever the timers' drift or a round's length. The current settings are read at each
// tick, so a changed interval applies at once, and a round still running is never started twice
// (noOverlap).
import { readFileSync } from 'node:fs';
import cron from 'node-cron';
import type { Logger } from '../log/logger.js';
import type { SettingsStore } from '../settings/store.js';
import type { DiscoveryService } from './service.js';
import { releaseHeapMemory } from '../shared/release-memory.js';
import { DueTimes } from '../shared/due-times.js';
import { errorText } from '../shared/error-text.js';

export function startDiscoverySchedule(discovery: DiscoveryService, settings: SettingsStore, log: Logger, now: () => number): () => void {
  const polls = new DueTimes();
  const scans = new DueTimes();
  const s0 = settings.get();
  polls.start(now(), s0.collection.interval_minutes * 60_000);
  const task = cron.schedule(
    '* * * * *',
    async () => {
      const s = settings.get();
      const t = now();
      const scanMs = s.discovery.auto_discover_interval_minutes * 60_000;
      if (s.discovery.auto_discover && scans.dueAt === undefined) scans.start(t, scanMs); // switched on since
      if (s.discovery.auto_discover && scans.take(t, scanMs)) discovery.start();
      if (polls.take(t, s.collection.interval_minutes * 60_000)) {
        try {
          await runPollingRound(discovery, s.collection.interval_minutes, log, now);
        } catch (err) {
          log.error({ err: errorText(err) }, 'polling round failed');
        }
      }
    },
    { name: 'printbox-poll', noOverlap: true },
  );
  // Passive listening (mDNS) follows its setting from now on; discovery.stop() ends it.
  discovery.listen();
  // Automatic discovery (when on) runs at start-up, then on its interval.
  if (s0.discovery.auto_discover) {
    scans.start(now(), s0.discovery.auto_discover_interval_minutes * 60_000);
    discovery.start();
  }
  return () => void task.stop();
}

/** What a scheduled polling round cost, as its "polling round done" line reports it. */
export interface RoundReport {
  snapshots: number;
  duration_ms: number;
  /** The whole process's CPU time during the round (requests served meanwhile included). */
  cpu_ms: number;
  /** Bytes the process sent to the block layer during the round (/proc/self/io); absent where unreadable. */
  write_bytes?: number;
  /** The round took longer than the polling interval. */
  late: boolean;
}

/**
 * Runs one scheduled polling round and reports it: its duration, CPU and bytes written (the
 * per-printer cost of a large site is these over its snapshots), and, when it took longer than
 * the interval, a warning. A late round is never overlapped by the next (the tick waits for it,
 * noOverlap above): the next round starts at the first minute tick after it has ended (the runs
 * it missed are not made up), so the printers are read less often than the interval says, and
 * the log says so instead of hiding it.
 */
export async function runPollingRound(
  discovery: Pick<DiscoveryService, 'collectSaved' | 'stopped'>,
  intervalMinutes: number,
  log: Pick<Logger, 'info' | 'warn'>,
  now: () => number,
): Promise<RoundReport | undefined> {
  const t0 = now();
  const cpu0 = process.cpuUsage();
  const io0 = writeBytes();
  const snaps = await discovery.collectSaved();
  // A round stopped by shutdown has said so itself ("polling round stopped").
  if (discovery.stopped) return undefined;
  releaseHeapMemory(); // counted in the round's CPU: it is the round's cost
  const cpu = process.cpuUsage(cpu0);
  const io1 = writeBytes();
  const report: RoundReport = {
    snapshots: snaps.length,
    duration_ms: now() - t0,
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    ...(io0 !== undefined && io1 !== undefined ? { write_bytes: io1 - io0 } : {}),
    late: false,
  };
  report.late = report.duration_ms > intervalMinutes * 60_000;
  log.info(report, 'polling round done');
  if (report.late) {
    log.warn(
      { duration_ms: report.duration_ms, interval_minutes: intervalMinutes },
      'polling round ran late: it took longer than the polling interval; the next round starts after it, not beside it',
    );
  }
  return report;
}

/** This process's write_bytes from /proc/self/io (Linux), or undefined. */
function writeBytes(): number | undefined {
  try {
    const m = /^write_bytes:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
