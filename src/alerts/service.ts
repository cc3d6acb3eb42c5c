// Alerts: after each reading of a saved printer lands (the bus's device_change), and on
// a timer for printers that stopped answering, the rules (rules.ts) are evaluated against what the
// store holds; alerts opened, cleared and acknowledged go to the store and out as `alert` events.
import type { DeviceStore } from '../store/devices.js';
import type { MetricsStore } from '../store/metrics.js';
import type { AlertRow, AlertStore } from '../store/alerts.js';
import type { EventBus } from '../events/bus.js';
import type { SettingsStore } from '../settings/store.js';
import type { Logger } from '../log/logger.js';
import type { Device } from '../model/device.js';
import { evaluateAlerts, type DeviceFacts } from '../model/alert-rules.js';
import { readForecast } from '../forecast/read.js';
import { counterFlagOf } from '../model/trust.js';
import { formatTime } from '../model/time.js';
import { describeAlert, type DescribedAlert } from './words.js';
import { boxIdentity, type BoxIdentity } from './box.js';
import type { AlertJson } from '../events/payloads.js';
import { errorText } from '../shared/error-text.js';


export function alertJson(r: AlertRow): AlertJson {
  return {
    id: r.id,
    serial: r.serial,
    kind: r.kind,
    supply: r.supply === '' ? null : r.supply,
    severity: r.severity,
    message: r.message,
    opened_at: formatTime(r.opened_at),
    cleared_at: r.cleared_at === null ? null : formatTime(r.cleared_at),
    acknowledged_at: r.acknowledged_at === null ? null : formatTime(r.acknowledged_at),
  };
}

export interface AlertServiceDeps {
  alerts: AlertStore;
  devices: DeviceStore;
  metrics: MetricsStore;
  events: EventBus;
  settings: SettingsStore;
  log: Logger;
  now(): number;
  /** How often printers are checked for silence (default one minute). */
  offlineCheckMs?: number;
  /** The box's name and the links to its UI (alerts/box.ts); default the host name on port 8443. */
  box?: BoxIdentity;
}

export class AlertService {
  private readonly pending = new Set<string>();
  private flush: NodeJS.Immediate | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private startCheck: NodeJS.Immediate | undefined;
  private stopSettings: (() => void) | undefined;

  private readonly box: BoxIdentity;

  constructor(private readonly deps: AlertServiceDeps) {
    this.box = deps.box ?? boxIdentity(8443);
  }

  /** Alerts with their plain words (alerts/words.ts): the printer as the store has it now, times in `display.time_zone`. */
  describe(alerts: AlertJson[]): DescribedAlert[] {
    const zone = this.deps.settings.get().display.time_zone;
    const devices = new Map<string, ReturnType<DeviceStore['get']>>();
    return alerts.map((a) => {
      if (!devices.has(a.serial)) {
        try {
          devices.set(a.serial, this.deps.devices.get(a.serial));
        } catch {
          devices.set(a.serial, undefined); // said without the printer's details rather than not at all
        }
      }
      return describeAlert(a, devices.get(a.serial), zone, this.box.pageUrl(a.serial));
    });
  }

  start(): void {
    // Evaluated after the emitter's caller is done (a scan stores many readings in a row): the
    // serials are gathered and judged once, outside the discovery code's own work.
    this.unsubscribe = this.deps.events.subscribe((name, data) => {
      if (name !== 'device_change') return;
      this.pending.add((data as { serial: string }).serial);
      this.flush ??= setImmediate(() => {
        this.flush = undefined;
        const serials = [...this.pending];
        this.pending.clear();
        for (const s of serials) this.afterReading(s);
      });
    });
    this.timer = setInterval(() => this.checkSilence(), this.deps.offlineCheckMs ?? 60_000);
    this.timer.unref();
    // At start, every saved printer is judged against what the store holds: one that went silent
    // while the box was off, or rules changed by provisioning, are said at once. One printer a
    // turn, so that a large fleet's forecasts do not hold the event loop.
    this.startCheck = setImmediate(() => this.judgeAllSaved());
    // A rule changed: every printer judged again at once (a rule turned off clears its alerts).
    this.stopSettings = this.deps.settings.onChange(() => this.judgeAllSaved());
  }

  stop(): void {
    this.unsubscribe?.();
    this.stopSettings?.();
    if (this.flush) clearImmediate(this.flush);
    if (this.startCheck) clearImmediate(this.startCheck);
    if (this.timer) clearInterval(this.timer);
  }

  /** Judges every rule against what the store holds for `serial`. */
  afterReading(serial: string): void {
    this.guarded(serial, () => {
      const d = this.deps.devices.get(serial);
      // Only saved printers are watched: a discovered printer nobody keeps is no one's concern.
      // A printer deleted or no longer saved has its open alerts cleared.
      if (!d || !d.is_saved) return this.clearAll(serial);
      return this.factsOf(d);
    });
  }

  /** Every saved printer, and every printer with an open alert, judged one a turn. */
  private judgeAllSaved(): void {
    if (this.startCheck) clearImmediate(this.startCheck);
    let serials: string[] = [];
    try {
      serials = [...new Set([...[...this.deps.devices.eachSaved(['serial'] as const)].map((d) => d.serial), ...this.deps.alerts.serialsWithOpenAlerts()])];
    } catch (err) {
      this.deps.log.warn({ err: errorText(err) }, 'alerts: reading the saved printers failed');
    }
    const next = () => {
      const serial = serials.shift();
      if (serial === undefined) return void (this.startCheck = undefined);
      this.afterReading(serial);
      this.startCheck = setImmediate(next);
    };
    next();
  }

  /** Judges only silence, for every saved printer (the timer). */
  checkSilence(): void {
    const open = new Set(this.deps.alerts.serialsWithOpenAlerts());
    let saved: { serial: string; last_seen: number }[] = [];
    try {
      // Read whole before any write: better-sqlite3 refuses a write while a statement iterates.
      saved = [...this.deps.devices.eachSaved(['serial'] as const)];
    } catch (err) {
      this.deps.log.warn({ err: errorText(err) }, 'alerts: reading the saved printers failed');
    }
    for (const d of saved) {
      open.delete(d.serial);
      this.guarded(d.serial, () => ({ last_seen: d.last_seen }));
    }
    for (const s of open) this.afterReading(s); // alerts of printers no longer saved
  }

  /** Marks an alert acknowledged; undefined for an unknown id. */
  acknowledge(id: number): DescribedAlert | undefined {
    const r = this.deps.alerts.acknowledge(id, this.deps.now());
    if (!r) return undefined;
    const [json] = this.describe([alertJson(r.row)]);
    if (r.changed) this.deps.events.emit('alert', { ...json, change: 'acknowledged' });
    return json;
  }

  private factsOf(d: Device): DeviceFacts {
    const { metrics, settings, now } = this.deps;
    const rules = settings.get().alerts;
    const levels = metrics.latestRaw(d.serial)?.toner_levels ?? {};
    // Keyed by supply names a printer gave: no prototype for one of them to reach.
    const days: Record<string, number | null> = Object.create(null) as Record<string, number | null>;
    // Fitting reads up to 90 days of history: only while the rule is on.
    if (rules.supply_empty_within_days > 0) {
      for (const f of readForecast(metrics, d.serial, now()).supplies) days[f.name] = f.days_to_empty;
    }
    return { levels, days_to_empty: days, status_messages: d.status_messages ?? [], counter_flag: counterFlagOf(d) !== undefined, last_seen: d.last_seen };
  }

  private clearAll(serial: string): undefined {
    const open = this.deps.alerts.openKeysOf(serial);
    if (open.length) this.record(serial, [], open.map((a) => a.id));
    return undefined;
  }

  /** Evaluates with the facts `read` gives (undefined: nothing to judge); never throws into the caller. */
  private guarded(serial: string, read: () => DeviceFacts | undefined): void {
    try {
      const facts = read();
      if (!facts) return;
      const { alerts, settings, now } = this.deps;
      const { open, clear } = evaluateAlerts(settings.get().alerts, facts, alerts.openKeysOf(serial), now());
      if (open.length || clear.length) this.record(serial, open, clear);
    } catch (err) {
      // A card that takes no writes, a database busy with an import: judged again at the next reading.
      this.deps.log.warn({ serial, err: errorText(err) }, 'alerts: evaluation failed');
    }
  }

  private record(serial: string, open: Parameters<AlertStore['apply']>[1], clear: number[]): void {
    const { opened, cleared } = this.deps.alerts.apply(serial, open, clear, this.deps.now());
    for (const r of opened) {
      this.deps.log.info({ serial, kind: r.kind, supply: r.supply || undefined }, `alert opened: ${r.message}`);
      this.deps.events.emit('alert', { ...this.describe([alertJson(r)])[0], change: 'opened' });
    }
    for (const r of cleared) {
      this.deps.log.info({ serial, kind: r.kind, supply: r.supply || undefined }, 'alert cleared');
      this.deps.events.emit('alert', { ...this.describe([alertJson(r)])[0], change: 'cleared' });
    }
  }
}
