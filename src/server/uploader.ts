// Uploads to the central server (server-protocol.md, "Uploads", the PrintBox way): every raw
// snapshot exactly once and in order, from a cursor in the database that only the server's 2xx
// moves; devices whenever they change. Batches are bounded (size) and spaced (rate), so a backlog
// after an outage drains without saturating a site's uplink. Nothing waits in memory only: a
// reboot resumes from the cursor and sends again at most the batch that was not acknowledged
// (the server dedupes on (serial, timestamp)); device changes are all sent again at each start.
import type { Logger } from '../log/logger.js';
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import { deviceJson, snapshotJson } from '../model/views.js';
import { tierWindows } from '../model/tiers.js';
import { ServerHttpError, type ServerClient } from './http-client.js';
import type { LinkStore } from './link-store.js';
import { Backoff } from './backoff.js';

export interface UploaderOptions {
  store: LinkStore;
  devices: DeviceStore;
  metrics: MetricsStore;
  log: Logger;
  /** The client and token while registered, else undefined. */
  session(): { client: ServerClient; token: string; agentId: string } | undefined;
  /** The server refused the token (401/403). */
  onRejected(): void;
  /** After every batch the server acknowledged, and after a failure. */
  onProgress(p: { ok: boolean; error?: string }): void;
  batchSize: number;
  /** Least time between two batches. */
  minIntervalMs: number;
}

type Session = NonNullable<ReturnType<UploaderOptions['session']>>;

// New rows also wake the loop (device_change events); this catches rows no event announced (an import).
const IDLE_CHECK_MS = 10_000;

export class Uploader {
  private readonly dirty = new Set<string>();
  private allDevices = true;
  private gzip = true;
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
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    this.wake?.();
    await this.loopDone;
  }

  /** A device changed: send it with the next batch. */
  noteDevice(serial: string): void {
    this.dirty.add(serial);
    this.kick();
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
      try {
        wait = (await this.step()) ? this.o.minIntervalMs : IDLE_CHECK_MS;
        this.retry.reset();
      } catch (err) {
        if (!this.running) break;
        wait = this.failed(err);
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

  private failed(err: unknown): number {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof ServerHttpError && (err.status === 401 || err.status === 403)) {
      this.o.onRejected();
    } else if (err instanceof ServerHttpError && err.status === 415 && this.gzip) {
      // This server does not take gzip'd bodies: send them plain from now on, at once.
      this.gzip = false;
      this.o.log.info('server refused a gzip body: uploading uncompressed');
      return 0;
    }
    const wait = this.retry.next();
    this.o.log.warn({ err: message, retry_s: wait / 1000 }, 'upload failed');
    this.o.onProgress({ ok: false, error: message });
    return wait;
  }

  /** Sends one batch if anything is waiting; returns whether it sent one. */
  private async step(): Promise<boolean> {
    const session = this.o.session();
    if (!session) return false;
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
    // Whole times per batch: a site's devices share each bucket's time.
    const groups = Math.max(1, Math.floor(this.o.batchSize / Math.max(1, this.o.devices.count())));
    const rows = held < hourlyFrom
      ? this.o.metrics.tierRowsAfter('daily', held, Math.min(end, hourlyFrom), groups)
      : this.o.metrics.tierRowsAfter('hourly', held, end, groups);
    if (!rows.length) {
      // Nothing stood in for that time (the box held no readings then): the server holds up to `end`.
      this.o.store.advanceCursor(0, held < hourlyFrom ? Math.min(end, hourlyFrom) : end);
      return this.sendGap(s);
    }
    const metrics = rows.map(snapshotJson);
    await this.post(s, '/api/v1/metrics/batch', { agent_id: s.agentId, timestamp: new Date().toISOString(), metrics });
    this.o.store.advanceCursor(0, rows[rows.length - 1].ts);
    return true;
  }

  private async sendDevices(s: Session): Promise<boolean> {
    if (this.allDevices) {
      for (const d of this.o.devices.listAll()) this.dirty.add(d.serial);
      this.allDevices = false;
    }
    if (!this.dirty.size) return false;
    const serials = [...this.dirty].slice(0, this.o.batchSize);
    const devices = serials.map((serial) => this.o.devices.get(serial)).filter((d) => d !== undefined).map(deviceJson);
    // Taken out before the call: a change during it marks the serial again and it goes next time.
    for (const serial of serials) this.dirty.delete(serial);
    try {
      if (devices.length) await this.post(s, '/api/v1/devices/batch', { agent_id: s.agentId, timestamp: new Date().toISOString(), devices });
    } catch (err) {
      for (const serial of serials) this.dirty.add(serial);
      throw err;
    }
    return devices.length > 0;
  }

  private async sendMetrics(s: Session): Promise<boolean> {
    const rows = this.o.metrics.rawAfter(this.o.store.get().metrics_cursor, this.o.batchSize);
    if (!rows.length) return false;
    const metrics = rows.map((r) => ({ ...snapshotJson(r), tier: 'raw' }));
    await this.post(s, '/api/v1/metrics/batch', { agent_id: s.agentId, timestamp: new Date().toISOString(), metrics });
    const last = rows[rows.length - 1];
    this.o.store.advanceCursor(last.id, Math.max(...rows.map((r) => r.ts)));
    return true;
  }

  private async post(s: Session, path: string, body: unknown): Promise<void> {
    await s.client.post(path, body, { token: s.token, gzip: this.gzip, signal: this.abort.signal });
    this.o.onProgress({ ok: true });
  }
}
