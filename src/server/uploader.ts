// Uploads to the central server (server-protocol.md, "Uploads", the PrintBox way): every raw
// snapshot exactly once and in order, from a cursor in the database that only the server's 2xx
// moves; devices whenever they change, and each device again once it was read (the server's Last
// Seen of a device is the time of the devices batch that carried it last). The reference server
// stores every reading of a batch at the batch's one `timestamp` and does not dedupe, so a batch
// holds the readings of one reading round only (model/round.ts), never two of one printer, made
// within a minute of each other (stamped with the middle of their span: none moves by more than
// 30 s), and batches stay small, so a batch sent again after a lost answer duplicates little.
// Bodies are plain JSON: the reference server reads no Content-Encoding. Batches are spaced (rate),
// so a backlog after an outage drains without saturating a site's uplink. Nothing waits in memory
// only: a reboot resumes from the cursor; device changes are all sent again at each start.
import type { Logger } from '../log/logger.js';
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import { deviceJson, snapshotCounters, snapshotJson } from '../model/views.js';
import { deviceUpload, metricsUpload } from './pm-fields.js';
import type { Device } from '../model/device.js';
import { formatTime } from '../model/time.js';
import { tierWindows } from '../model/tiers.js';
import { ServerHttpError, type ServerClient } from '../net/http-client.js';
import type { LinkStore } from '../store/server-link.js';
import { Backoff } from '../shared/backoff.js';
import { readForecast } from '../forecast/read.js';
import { errorText } from '../shared/error-text.js';

export interface UploaderOptions {
  store: LinkStore;
  devices: DeviceStore;
  metrics: MetricsStore;
  log: Logger;
  /** The client and token while registered, else undefined. */
  session(): { client: ServerClient; token: string; agentId: string } | undefined;
  /** The server refused this token (401/403). */
  onRejected(token: string): void;
  /** After every batch the server acknowledged, and after a failure. */
  onProgress(p: { ok: boolean; error?: string }): void;
  batchSize: number;
  /** Least time between two batches. */
  minIntervalMs: number;
}

type Session = NonNullable<ReturnType<UploaderOptions['session']>>;

/** The widest span of reading times one batch may carry (the server gives them all one time). */
export const BATCH_SPAN_MS = 60_000;

/**
 * How a batch is cut: the leading rows (at least the first) of the first row's reading round
 * (`round`: rows without one, older rows and imports, go together), no serial twice, and times all
 * within BATCH_SPAN_MS of each other; with the time to stamp them with, the middle of their span.
 * Two rounds, or two readings of one printer, never share a batch, so never a time on the server.
 */
export function sameTimeBatch<T extends { serial: string }>(
  rows: T[],
  time: (row: T) => number,
  round: (row: T) => number | undefined = () => undefined,
): { rows: T[]; timestamp: number } {
  let lo = time(rows[0]);
  let hi = lo;
  const first = round(rows[0]);
  const serials = new Set([rows[0].serial]);
  let n = 1;
  for (; n < rows.length; n++) {
    const t = time(rows[n]);
    if (round(rows[n]) !== first || serials.has(rows[n].serial) || Math.max(hi, t) - Math.min(lo, t) > BATCH_SPAN_MS) break;
    serials.add(rows[n].serial);
    lo = Math.min(lo, t);
    hi = Math.max(hi, t);
  }
  return { rows: rows.slice(0, n), timestamp: Math.round((lo + hi) / 2) };
}

/** How long a device's forecast is sent again as it was made (withForecast). */
export const FORECAST_REFRESH_MS = 3_600_000;

// New rows also wake the loop (device_change events); this catches rows no event announced (an import).
const IDLE_CHECK_MS = 10_000;

/** The server answered 2xx but stored fewer items than it was sent (its `stored`). */
class PartlyStored extends Error {}

export class Uploader {
  private readonly dirty = new Set<string>();
  /** Per serial: the forecast last sent and when it was made (withForecast). */
  private readonly forecasts = new Map<string, { at: number; json: string }>();
  private allDevices = true;
  /**
   * Serials whose device record the server took in this run. The reference server refuses a
   * reading of a device it does not hold (and answers 200 with a lower `stored`), so a reading
   * goes only after its device did.
   */
  private readonly onServer = new Set<string>();
  /** How much of one gap bucket (its time) went already: a bucket of a large site spans batches. */
  private gapSent = { ts: 0, rows: 0 };
  private readonly retry = new Backoff();
  private running = false;
  private wake: (() => void) | undefined;
  private abort = new AbortController();
  private loopDone: Promise<void> = Promise.resolve();

  constructor(private readonly o: UploaderOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.allDevices = true;
    this.onServer.clear();
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    this.wake?.();
    await this.loopDone;
  }

  /**
   * A device changed, or was read (its `last_seen` moved): send it with the next batch. The device
   * goes whole: the reference server's upsert replaces every column and its raw_data with what it
   * gets, so a record of identity alone would blank the rest there.
   */
  noteDevice(serial: string): void {
    this.dirty.add(serial);
    this.kick();
  }

  /** A device deleted on the box: what is kept for it goes. */
  forget(serial: string): void {
    this.forecasts.delete(serial);
  }

  /** New snapshots may be waiting. */
  kick(): void {
    this.wake?.();
  }

  /** Raw snapshots not yet acknowledged by the server. */
  backlog(): number {
    return this.o.metrics.rawCountAfter(this.o.store.get().metrics_cursor);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let wait: number;
      const session = this.o.session();
      try {
        wait = session && (await this.step(session)) ? this.o.minIntervalMs : IDLE_CHECK_MS;
        this.retry.reset();
      } catch (err) {
        if (!this.running) break;
        wait = this.failed(err, session!.token);
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private failed(err: unknown, token: string): number {
    const message = errorText(err);
    if (err instanceof ServerHttpError && (err.status === 401 || err.status === 403)) {
      this.o.onRejected(token);
    }
    const wait = this.retry.next();
    this.o.log.warn({ err: message, retry_s: wait / 1000 }, 'upload failed');
    this.o.onProgress({ ok: false, error: message });
    return wait;
  }

  /** Sends one batch if anything is waiting; returns whether it sent one. */
  private async step(session: Session): Promise<boolean> {
    return (await this.sendDevices(session)) || (await this.sendGap(session)) || (await this.sendMetrics(session));
  }

  /**
   * After an outage longer than raw retention, the raw rows of its first days are gone before
   * the server had them: the hourly rows (daily ones, past the hourly window) of that time go
   * instead, marked with their tier (server-protocol.md, Uploads). The gap is the time between
   * what the server holds and the oldest raw row left; a first enrollment has no gap (it sends
   * what raw holds), and a time with no readings at all has no tier rows to send.
   */
  private async sendGap(s: Session): Promise<boolean> {
    const { metrics_cursor_ts: held } = this.o.store.get();
    if (!held) return false;
    const now = Date.now();
    const end = Math.min(this.o.metrics.oldestRawTs() ?? now, tierWindows(now).raw[0]);
    if (held >= end) return false;
    const hourlyFrom = tierWindows(now).hourly[0];
    // One bucket time per batch: the server stamps the whole batch with it.
    const rows = held < hourlyFrom
      ? this.o.metrics.tierRowsAfter('daily', held, Math.min(end, hourlyFrom), 1)
      : this.o.metrics.tierRowsAfter('hourly', held, end, 1);
    if (!rows.length) {
      // Nothing stood in for that time (the box held no readings then): the server holds up to `end`.
      this.o.store.advanceCursor(0, held < hourlyFrom ? Math.min(end, hourlyFrom) : end);
      return this.sendGap(s);
    }
    const from = this.gapSent.ts === rows[0].ts ? this.gapSent.rows : 0;
    const chunk = rows.slice(from, from + this.o.batchSize);
    if (this.needDevices(chunk)) return this.sendDevices(s);
    await this.postMetrics(s, chunk, rows[0].ts, chunk.map(metricsUpload));
    // The cursor passes the bucket once all of it went; a restart in between sends it again whole.
    if (from + chunk.length < rows.length) this.gapSent = { ts: rows[0].ts, rows: from + chunk.length };
    else {
      this.gapSent = { ts: 0, rows: 0 };
      this.o.store.advanceCursor(0, rows[0].ts);
    }
    return true;
  }

  private async sendDevices(s: Session): Promise<boolean> {
    if (this.allDevices) {
      for (const d of this.o.devices.listAll()) this.dirty.add(d.serial);
      this.allDevices = false;
    }
    if (!this.dirty.size) return false;
    const known: Device[] = [];
    for (const serial of [...this.dirty]) {
      const d = this.o.devices.get(serial);
      if (d) known.push(d);
      else {
        this.dirty.delete(serial); // deleted meanwhile: nothing to send
        this.forecasts.delete(serial);
      }
    }
    if (!known.length) return false;
    known.sort((a, b) => a.last_seen - b.last_seen);
    // The server sets a device's first_seen, created_at and last_seen from the batch's timestamp.
    const batch = sameTimeBatch(known.slice(0, this.o.batchSize), (d) => d.last_seen);
    // Taken out before the call: a change during it marks the serial again and it goes next time.
    for (const d of batch.rows) this.dirty.delete(d.serial);
    try {
      await this.post(s, '/api/v1/devices/batch', { agent_id: s.agentId, timestamp: formatTime(batch.timestamp), devices: batch.rows.map((d) => this.withForecast(d)) });
    } catch (err) {
      for (const d of batch.rows) this.dirty.add(d.serial);
      throw err;
    }
    for (const d of batch.rows) this.onServer.add(d.serial);
    return true;
  }

  /**
   * The Device JSON with a `forecast` field (GET /api/devices/forecast's answer): the
   * reference server keeps each device object whole (its raw_data), unknown fields included. A
   * forecast that cannot be read leaves the field out; the device still goes.
   *
   * A device now goes with every reading (its Last Seen), and a forecast costs a 90-day history
   * read and fit (5 to 10 ms: 10 to 20 s of CPU a round at 2,000 printers, docs/performance.md),
   * so the one sent is made at most once per FORECAST_REFRESH_MS per device and kept meanwhile as
   * its JSON text (a few hundred bytes); forecasts move over days, not minutes.
   */
  private withForecast(d: Device): Record<string, unknown> {
    // The latest counters beside the record's fields (the reference server's device table shows
    // page_count, copy_pages, fax_pages, duplex_sheets ... from the device object it keeps), and
    // the health fields the server reads (pm-fields.ts).
    const json = deviceUpload({ ...snapshotCounters(this.o.metrics.latestRaw(d.serial)), ...deviceJson(d) }, d);
    const now = Date.now();
    const kept = this.forecasts.get(d.serial);
    if (kept && now - kept.at >= 0 && now - kept.at < FORECAST_REFRESH_MS) return { ...json, forecast: JSON.parse(kept.json) as unknown };
    try {
      const forecast = readForecast(this.o.metrics, d.serial, now);
      this.forecasts.set(d.serial, { at: now, json: JSON.stringify(forecast) });
      return { ...json, forecast };
    } catch (err) {
      this.o.log.warn({ serial: d.serial, err: errorText(err) }, 'supply forecast not read for the upload');
      return json;
    }
  }

  /** Marks the devices of `rows` the server has not taken in this run; true when there are any. */
  private needDevices(rows: { serial: string }[]): boolean {
    let missing = false;
    for (const { serial } of rows) {
      if (this.onServer.has(serial) || !this.o.devices.get(serial)) continue;
      this.dirty.add(serial);
      missing = true;
    }
    return missing;
  }

  private async sendMetrics(s: Session): Promise<boolean> {
    const waiting = this.o.metrics.rawAfter(this.o.store.get().metrics_cursor, this.o.batchSize);
    if (!waiting.length) return false;
    const { rows, timestamp } = sameTimeBatch(waiting, (r) => r.ts, (r) => r.round);
    if (this.needDevices(rows)) return this.sendDevices(s);
    await this.postMetrics(s, rows, timestamp, rows.map((r) => ({ ...metricsUpload(r), tier: 'raw' })));
    const last = rows[rows.length - 1];
    this.o.store.advanceCursor(last.id, Math.max(...rows.map((r) => r.ts)));
    return true;
  }

  /**
   * A metrics batch. When the server stored fewer than it got (it lost a device: deleted there),
   * the batch's devices go again and so does the batch, after a backoff: the readings it did keep
   * are then stored twice there, never lost. Until then the link shows the upload error.
   */
  private async postMetrics(s: Session, rows: { serial: string }[], timestamp: number, metrics: Record<string, unknown>[]): Promise<void> {
    try {
      await this.post(s, '/api/v1/metrics/batch', { agent_id: s.agentId, timestamp: formatTime(timestamp), metrics });
    } catch (err) {
      if (err instanceof PartlyStored) for (const { serial } of rows) this.onServer.delete(serial);
      throw err;
    }
  }

  private async post(s: Session, path: string, body: { agent_id: string; timestamp: string; devices?: unknown[]; metrics?: unknown[] }): Promise<void> {
    const r = await s.client.post(path, body, { token: s.token, signal: this.abort.signal });
    const sent = (body.devices ?? body.metrics ?? []).length;
    const stored = r.json.stored;
    if (typeof stored === 'number' && stored < sent) throw new PartlyStored(`the server stored ${stored} of ${sent} (${path})`);
    this.o.onProgress({ ok: true });
  }
}

