// Updates as the API, the UI and the central server see them (contract 4.2, docs/updates.md):
// check asks the update source for an offer; force downloads it (resumable), has RAUC check its
// signature and install it into the other slot, then asks for a reboot. What must survive a
// reboot or a power cut (the last check, the offer, the install in flight, the last error) is kept
// in the database on the data partition; the outcome of an install is read at the next start by
// comparing the slot that booted with the one the install went to.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DB } from '../store/db.js';
import { SettingsTable } from '../store/settings-table.js';
import type { Logger } from '../log/logger.js';
import type { EventBus } from '../events/bus.js';
import { versionInfo } from '../shared/version.js';
import { compareVersions, ManifestError, type UpdateOffer } from './manifest.js';
import { downloadBundle, DownloadError } from './download.js';
import { RaucError, type SystemStatus, type UpdateSystem } from './rauc.js';
import type { UpdateProgress } from '../events/payloads.js';
import { errorText } from '../shared/error-text.js';


/** Where an offer comes from: a configured manifest URL or the central server. */
export interface UpdateSource {
  /** A name for messages ("https://updates.example/manifest.json", "the central server"). */
  name: string;
  offer(signal: AbortSignal): Promise<UpdateOffer | undefined>;
  /** What a download from this source needs: the server's CA, and its token for its own origin only. */
  access?: { ca?: import('../net/http-client.js').TrustedCas; authorization?: string; authorizedOrigin?: string };
}

/** A refused request: the status code and a message naming what was wrong. */
export class UpdateError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

interface Kept {
  last_check?: string;
  available?: UpdateOffer;
  last_error?: { at: string; message: string };
  /** An install begun: into which slot, of which version, from which. */
  pending?: { version: string; slot: string; from_slot: string; from_version: string; at: string; reason: string };
  last_update?: { version: string; from_version: string; slot: string; at: string };
}

const KEY = 'update_state';

export interface UpdateServiceOptions {
  db: DB;
  system: UpdateSystem;
  /** The source in use now (settings can change it); undefined when none is configured. */
  source(): UpdateSource | undefined;
  /** Downloads and the reboot request live here (on the data partition). */
  dir: string;
  maxBundleBytes: number;
  keepFreeBytes: number;
  events: EventBus;
  log: Logger;
  now(): number;
  /** Waits before asking RAUC for the slots again after it did not answer (the last repeats). */
  slotsRetryMs?: readonly number[];
}

/**
 * RAUC answers through D-Bus, which a booting box may not have started when the agent first asks
 * (the agent is ordered after neither, to reach HTTPS soon after power-on): the slots are
 * asked again, soon at first, then every 10 s for about two minutes, then every 5 minutes. A
 * RAUC that has not answered by then is broken, not late, and each ask is a `rauc status` process.
 */
const SLOTS_RETRY_MS = [2_000, 4_000, 8_000, ...Array<number>(10).fill(10_000), 60_000, 300_000];

/** The file printbox-update-reboot.path watches: the agent cannot reboot the box itself. */
export const REBOOT_REQUEST = 'reboot-requested';

export class UpdateService {
  private kept: Kept;
  private progress: UpdateProgress = { state: 'idle' };
  private system: SystemStatus | undefined;
  private job: AbortController | undefined;
  private readonly save: (v: string) => void;
  private slotsRetry: NodeJS.Timeout | undefined;
  private slotsFailures = 0;
  private stopped = false;

  constructor(private readonly o: UpdateServiceOptions) {
    const table = new SettingsTable(o.db);
    const stored = table.get(KEY);
    this.kept = stored !== undefined ? (JSON.parse(stored) as Kept) : {};
    this.save = (v) => table.set(KEY, v);
  }

  /** Reads the slots (again later while RAUC does not answer) and settles an install begun before this start. */
  async start(): Promise<void> {
    if (this.o.system.unsupported() || this.stopped) return;
    clearTimeout(this.slotsRetry);
    try {
      this.system = await this.o.system.status();
    } catch (err) {
      const waits = this.o.slotsRetryMs ?? SLOTS_RETRY_MS;
      const ms = waits[Math.min(this.slotsFailures, waits.length - 1)];
      if (this.slotsFailures === 0) this.o.log.warn({ err: errorText(err), retry_ms: ms }, 'update slots not read: asking again');
      else if (this.slotsFailures === waits.length - 1) {
        this.o.log.warn({ err: errorText(err), attempts: this.slotsFailures + 1, retry_ms: ms }, 'update slots still not read: RAUC does not answer; asking less often');
      }
      this.slotsFailures++;
      if (!this.stopped) this.slotsRetry = setTimeout(() => void this.start(), ms).unref();
      return;
    }
    if (this.stopped) return;
    if (this.slotsFailures > 0) this.o.log.info({ attempts: this.slotsFailures + 1 }, 'update slots read');
    this.slotsFailures = 0;
    rmSync(join(this.o.dir, REBOOT_REQUEST), { force: true });
    const p = this.kept.pending;
    if (!p) return;
    const running = versionInfo().version;
    if (this.system.booted === p.slot && running === p.version) {
      this.o.log.info({ version: p.version, slot: p.slot, from: p.from_version }, 'update installed and running');
      this.keep({ pending: undefined, last_update: { version: p.version, from_version: p.from_version, slot: p.slot, at: new Date(this.o.now()).toISOString() }, last_error: undefined });
    } else {
      const why = this.system.booted === p.from_slot
        ? `the update to ${p.version} did not come up in slot ${p.slot} (interrupted, or not ready in time): slot ${p.from_slot} with ${running} runs again`
        : `the update to ${p.version} ended in slot ${this.system.booted} running ${running}`;
      this.o.log.error({ version: p.version, slot: p.slot, booted: this.system.booted }, why);
      this.keep({ pending: undefined, last_error: { at: new Date(this.o.now()).toISOString(), message: why } });
    }
  }

  status(): Record<string, unknown> {
    const unsupported = this.o.system.unsupported();
    const s = this.system;
    const booted = s?.slots.find((x) => x.bootname === s.booted);
    const other = s?.slots.find((x) => x.bootname !== s.booted);
    const source = this.o.source();
    const available = this.newer(this.kept.available);
    return {
      supported: !unsupported,
      ...(unsupported ? { reason: unsupported } : {}),
      current_version: versionInfo().version,
      current_slot: s?.booted ?? null,
      other_slot: other ? { slot: other.bootname, version: other.version ?? null, installed_at: other.installed_at ?? null, state: other.state } : null,
      compatible: s?.compatible ?? null,
      source: source?.name ?? null,
      last_check: this.kept.last_check ?? null,
      available_version: available?.version ?? null,
      available_size: available?.size ?? null,
      ...this.progressFields(),
      last_error: this.kept.last_error?.message ?? null,
      last_error_at: this.kept.last_error?.at ?? null,
      last_update: this.kept.last_update ?? null,
      booted_slot_state: booted?.state ?? null,
    };
  }

  /** Asks the source for an offer; the answer is kept and returned as the new status. */
  async check(): Promise<Record<string, unknown>> {
    await this.usable();
    if (this.job) throw new UpdateError(409, `an update is already ${this.progress.state}`);
    const job = (this.job = new AbortController());
    try {
      await this.fetchOffer(job.signal);
    } finally {
      this.job = undefined;
      this.report({ state: 'idle' });
    }
    return this.status();
  }

  /** Starts download, verification, install and reboot; returns at once (progress as events). */
  async force(reason: string): Promise<Record<string, unknown>> {
    await this.usable();
    if (this.job) throw new UpdateError(409, `an update is already ${this.progress.state}`);
    const job = (this.job = new AbortController());
    this.report({ state: 'checking' });
    void this.run(job, reason).finally(() => {
      if (this.job === job) this.job = undefined;
    });
    return this.status();
  }

  /** At shutdown: the slots are not asked again (a later answer would write to a closed database). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.slotsRetry);
  }

  /** Stops a check or download; an install RAUC has begun cannot be stopped. */
  cancel(): Record<string, unknown> {
    if (!this.job) throw new UpdateError(409, 'no update is in progress');
    if (this.progress.state === 'installing' || this.progress.state === 'rebooting') {
      throw new UpdateError(409, `the update is ${this.progress.state}: RAUC is writing the other slot and cannot be stopped (the running slot stays as it is until the reboot)`);
    }
    this.job.abort(new UpdateError(409, 'cancelled'));
    return this.status();
  }

  private async run(job: AbortController, reason: string): Promise<void> {
    try {
      const offer = await this.fetchOffer(job.signal);
      if (!offer) throw new UpdateError(404, `the update source (${this.o.source()?.name}) offers no bundle for this box`);
      const running = versionInfo().version;
      if (compareVersions(offer.version, running) < 0) throw new UpdateError(409, `the offered version ${offer.version} is older than the running ${running}: refused`);
      this.report({ state: 'downloading', version: offer.version, bytes: 0, total: offer.size });
      let last = 0;
      const file = await downloadBundle(offer, {
        dir: this.o.dir,
        keepFreeBytes: this.o.keepFreeBytes,
        signal: job.signal,
        ...this.o.source()?.access,
        onProgress: (bytes, total) => {
          // An event per percent, not per packet.
          const pct = Math.floor((bytes * 100) / total);
          if (pct !== last || bytes === total) this.report({ state: 'downloading', version: offer.version, percent: pct, bytes, total });
          last = pct;
        },
      });
      job.signal.throwIfAborted();
      this.report({ state: 'verifying', version: offer.version });
      const info = await this.o.system.inspect(file).catch((err: Error) => {
        rmSync(file, { force: true }); // a bundle RAUC refuses is not kept for another try
        throw err;
      });
      const system = await this.o.system.status();
      if (info.compatible !== system.compatible) throw new UpdateError(422, `the bundle is for ${info.compatible}, this box is ${system.compatible}: refused`);
      if (info.version !== offer.version) throw new UpdateError(422, `the bundle says version ${info.version}, the manifest ${offer.version}: refused`);
      if (compareVersions(info.version, running) < 0) throw new UpdateError(409, `the bundle's version ${info.version} is older than the running ${running}: refused`);
      job.signal.throwIfAborted();
      const target = system.slots.find((s) => s.bootname !== system.booted);
      if (!target) throw new UpdateError(500, 'RAUC reports no other slot to install into');
      // Kept before RAUC writes anything: a power cut from here on is seen at the next start.
      this.keep({ pending: { version: info.version, slot: target.bootname, from_slot: system.booted, from_version: running, at: new Date(this.o.now()).toISOString(), reason } });
      this.o.log.warn({ version: info.version, slot: target.bootname, reason }, 'installing update');
      this.report({ state: 'installing', version: info.version, percent: 0 });
      await this.o.system.install(file, (percent, message) => this.report({ state: 'installing', version: info.version, percent, message }));
      rmSync(file, { force: true });
      this.system = await this.o.system.status();
      this.report({ state: 'rebooting', version: info.version, percent: 100 });
      this.o.log.warn({ version: info.version, slot: target.bootname }, 'update installed: rebooting into it');
      writeFileSync(join(this.o.dir, REBOOT_REQUEST), `${info.version}\n`, { mode: 0o600 });
    } catch (err) {
      const message = errorMessage(err);
      this.o.log.error({ err: message }, 'update failed');
      this.keep({ pending: undefined, last_error: { at: new Date(this.o.now()).toISOString(), message } });
      this.report({ state: 'idle', error: message });
    }
  }

  private async fetchOffer(signal: AbortSignal): Promise<UpdateOffer | undefined> {
    const source = this.o.source();
    if (!source) throw new UpdateError(409, 'no update source: set update.url, or link the box to a central server');
    this.report({ state: 'checking' });
    try {
      const offer = await source.offer(signal);
      this.keep({ last_check: new Date(this.o.now()).toISOString(), available: offer });
      return offer;
    } catch (err) {
      const message = `update check at ${source.name} failed: ${errorMessage(err)}`;
      this.keep({ last_check: new Date(this.o.now()).toISOString(), last_error: { at: new Date(this.o.now()).toISOString(), message } });
      throw new UpdateError(502, message);
    }
  }

  /** Refuses where updates cannot happen; reads the slots again if RAUC did not answer at start. */
  private async usable(): Promise<void> {
    const why = this.o.system.unsupported();
    if (why) throw new UpdateError(501, why);
    if (!this.system) await this.start();
    if (!this.system) throw new UpdateError(503, 'the update slots could not be read (rauc.service is not answering): try again');
  }

  /** The offer, when it is newer than the running version (what the status calls available). */
  private newer(offer: UpdateOffer | undefined): UpdateOffer | undefined {
    if (!offer) return undefined;
    try {
      return compareVersions(offer.version, versionInfo().version) > 0 ? offer : undefined;
    } catch {
      return undefined;
    }
  }

  private progressFields(): Record<string, unknown> {
    const { state, error: _e, ...rest } = this.progress;
    return { state, progress: state === 'idle' ? null : rest };
  }

  private report(p: UpdateProgress): void {
    this.progress = p;
    this.o.events.emit('update_progress', p);
  }

  private keep(change: Partial<Kept>): void {
    this.kept = { ...this.kept, ...change };
    for (const k of Object.keys(this.kept) as (keyof Kept)[]) if (this.kept[k] === undefined) delete this.kept[k];
    this.save(JSON.stringify(this.kept));
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof UpdateError || err instanceof DownloadError || err instanceof RaucError || err instanceof ManifestError) return err.message;
  const e = err as { name?: string; message?: string; code?: string };
  if (e?.name === 'AbortError' || e?.message === 'cancelled') return 'cancelled';
  return errorText(err);
}
