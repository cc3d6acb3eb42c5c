// Polling saved printers: a round reads each one (SNMP, or IPP for a printer seen only by IPP) a
// few at a time and writes the readings in batches. A printer that does not answer keeps its
// record and history and says since when it is not answering; a saved printer seen elsewhere
// before may be confirmed moved here (sightings.ts).
//
// Stopping must not wait for the network: a read cut short by stop() is dropped (neither a
// snapshot nor a "not answering" mark: the printer did not fail). What a round had fully read
// before is still written, in one short transaction.
import type { Snapshot } from '../model/device.js';
import type { Reading } from '../store/devices.js';
import { readHost, type HostReadResult } from '../snmp/scan.js';
import { parsePrinter, readPlan } from '../snmp/parse/printer.js';
import { paced } from '../shared/pace.js';
import type { DiscoveryContext } from './context.js';
import { flagIfCounterDown } from './counter-check.js';
import { markUnreachable, mergeObservation } from './merge.js';
import { counterFlagOf, pendingMoveOf, withTrustChange, type CounterFlag } from './move-check.js';
import { findSamePrinter, readIppDevice } from './announced.js';
import { credentialsOf, toObservation } from './snmp-observation.js';
import { movedOf, type Sightings } from './sightings.js';
import { ReadingsKeptError } from '../store/store-readings.js';
import { newRoundId } from '../model/round.js';
import { errorText } from '../shared/error-text.js';

/**
 * Readings a polling round writes per transaction. A round of 2,000 printers held every merged
 * record and snapshot until one transaction at its end, and the agent's RSS grew with the fleet;
 * in batches a round holds at most this many, and each batch is on the card (and its events out)
 * as soon as it is full, so a crash or power cut mid-round loses only the readings of the batch
 * being filled. The cost is one commit (an fsync and the B-trees' upper pages) a batch:
 * docs/performance.md, "Storage and card writes", has the flash-write figures per batch size.
 */
export const ROUND_BATCH = 250;

/**
 * Polls `serials` (saved network printers); returns the snapshots stored. `flagged` is filled with
 * the readings whose page counter went down (not stored).
 */
export async function poll(ctx: DiscoveryContext, sightings: Sightings, serials: string[], kind: 'round' | 'single', flagged: Map<string, CounterFlag>): Promise<Snapshot[]> {
  const { devices, settings, log } = ctx.deps;
  const signal = ctx.signal;
  if (signal.aborted) return [];
  const s = settings.get();
  const credentials = credentialsOf(s);
  // The readings not written yet: at most `batch` (see ROUND_BATCH); then only their snapshots.
  let readings: Reading[] = [];
  const stored: Snapshot[] = [];
  let taken = 0;
  const batch = Math.max(1, ctx.deps.roundBatch ?? ROUND_BATCH);
  let kept = 0; // readings the storage guard keeps (the card did not take their batch)
  let keptError: ReadingsKeptError | undefined;
  let failed: { err: unknown } | undefined; // a write that failed otherwise: the round ends
  const flush = () => {
    const writing = readings;
    readings = [];
    if (writing.length === 0) return;
    taken += writing.length;
    let ids: (number | undefined)[];
    try {
      ids = ctx.writer.store(writing, kind === 'round' ? 'storing a polling round' : 'storing a poll', (r) => (movedOf(r) ? 'updated' : 'metrics'), movedOf);
    } catch (err) {
      // The guard keeps these and writes them when it can; the round goes on, the caller is told at its end.
      if (err instanceof ReadingsKeptError) {
        kept += writing.length;
        keptError ??= err;
      } else failed ??= { err };
      return;
    }
    writing.forEach((r, i) => {
      if (ids[i] !== undefined) stored.push({ ...r.snapshot, id: ids[i]! });
    });
  };
  // One round, one batch time on the server (model/round.ts).
  const round = newRoundId();
  const push = (r: Reading) => {
    readings.push({ ...r, round });
    if (readings.length >= batch) flush();
  };
  /** The record as it is now (a person may have changed it during the read), said not answering. */
  const notAnswering = (serial: string, now: number, why: string) => {
    const current = devices.get(serial);
    // Only a status line: on an unwritable card it is said again at the next round.
    if (current) ctx.writer.put(markUnreachable(current, now, why), 'updated', 'marking a device not answering');
  };
  const queue = [...serials];
  let cut = 0; // reads cut short by stop()
  const worker = async () => {
    while (!signal.aborted && !failed) {
      await paced();
      if (signal.aborted || failed) break;
      const serial = queue.shift();
      if (serial === undefined) return;
      const device = devices.get(serial);
      if (!device) continue;
      const now = ctx.now();
      if (device.source_type === 'ipp') {
        // Seen only by IPP (no SNMP answer when it was found): polled by IPP, and SNMP if it now answers.
        const read = await readIppDevice(device, { ...ctx.readContext(), now });
        if (signal.aborted) {
          cut++;
          break;
        }
        if (!('error' in read) && findSamePrinter(devices, read.observation)?.serial === serial) {
          read.observation.serial = serial;
          read.observation.printerInfo.serial = serial;
          push({ device: mergeObservation(device, read.observation), snapshot: { serial, ts: now, ...read.metrics }, existed: true });
          continue;
        }
        notAnswering(serial, now, 'error' in read ? `no IPP answer (${read.error})` : `a different device answers at ${device.ip}`);
        continue;
      }
      let host: HostReadResult | null = null;
      try {
        host = await readHost(device.ip, {
          credentials,
          timeoutMs: s.discovery.snmp_timeout_ms,
          allowedRanges: s.discovery.allowed_ranges,
          port: s.snmp.port,
          planRead: readPlan,
          signal,
        });
      } catch (err) {
        log.warn({ serial, ip: device.ip, err: errorText(err) }, 'poll failed');
      }
      // Cut short by stop(): the device did not fail, it was not heard out. Neither a snapshot
      // nor a "not answering" mark (a read that had completed is kept).
      if (signal.aborted && (!host || host.partial)) {
        cut++;
        break;
      }
      const parsed = host ? parsePrinter(host.values, device.ip, new Date(now)) : undefined;
      const observation = parsed ? toObservation(parsed, device.ip, now) : undefined;
      if (!parsed && pendingMoveOf(device)) {
        // Silent where it is saved, and seen elsewhere before: this may be where it is now.
        const moved = await sightings.pollPendingAddress(device);
        if (moved) {
          push(moved);
          continue;
        }
      }
      if (!parsed || !observation || observation.serial !== serial) {
        // Silent, or another printer now answers at this address: keep the record, say so.
        notAnswering(serial, now, !parsed ? 'no SNMP answer' : `a different device answers at ${device.ip}`);
        continue;
      }
      const snapshot = { serial, ts: now, ...parsed.metrics };
      const flag = flagIfCounterDown(ctx, serial, snapshot, device.ip, now);
      if (flag) {
        flagged.set(serial, flag);
        continue;
      }
      let read = sightings.trusted(mergeObservation(device, observation), host!);
      if (counterFlagOf(read)) read = withTrustChange(read, { counter_flag: undefined });
      push({ device: read, snapshot, existed: true, fromIp: device.ip });
    }
  };
  await Promise.all(Array.from({ length: Math.min(s.discovery.discover_concurrency, serials.length) }, worker));
  if (signal.aborted && (cut > 0 || queue.length > 0)) {
    log.info({ read: taken + readings.length, cut_short: cut, not_started: queue.length }, kind === 'round' ? 'polling round stopped' : 'poll stopped');
  }
  if (!failed) flush();
  if (failed) throw failed.err;
  if (keptError) throw kept === keptError.count ? keptError : new ReadingsKeptError(kept, keptError.cause);
  return stored;
}
