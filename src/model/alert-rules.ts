// Alert rules: what a device's state says should be open, and which open alerts have
// ended. Pure: facts in, decisions out; the service (alerts/service.ts) reads the facts and stores.
//
// Each alert is keyed by (serial, kind, supply): at most one is open per key (the store enforces it).
// Hysteresis, so a value flickering at a threshold does not open and clear an alert on every poll:
// - supply_low opens when a supply's level is below `supply_below_percent` and clears only when it
//   is back at or above the threshold plus SUPPLY_CLEAR_MARGIN points (15% opens, 20% clears);
// - supply_empty_soon opens when the forecast says empty within `supply_empty_within_days` days and
//   clears only when it says more than that plus FORECAST_CLEAR_MARGIN_DAYS, or no longer forecasts
//   (a new cartridge has no history yet);
// - status alerts (jam, door open, paper out, service requested) follow the printer's own status
//   lines: the printer already debounces them, and a poll is minutes apart;
// - offline opens when the device has not answered for `offline_after_minutes`, and clears at its
//   next answer.
// A fact that is unknown (undefined) neither opens nor clears its kind: an offline check knows only
// last_seen, and a supply reported as -2/-3 leaves its alert as it was. A rule turned off clears
// the alerts it opened.

import { lineSaying } from '../model/status-lines.js';

export const ALERT_KINDS = ['supply_low', 'supply_empty_soon', 'jam', 'door_open', 'paper_out', 'service_requested', 'offline', 'counter_backwards'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export type AlertSeverity = 'critical' | 'warning';

/** Points above the threshold a supply level must reach before its low alert clears. */
export const SUPPLY_CLEAR_MARGIN = 5;
/** Days beyond the rule a forecast must reach before its alert clears. */
export const FORECAST_CLEAR_MARGIN_DAYS = 2;

/** Settings `alerts` (settings/settings.ts). */
export interface AlertRules {
  /** 0 turns the rule off. */
  supply_below_percent: number;
  /** 0 turns the rule off. */
  supply_empty_within_days: number;
  jam: boolean;
  door_open: boolean;
  paper_out: boolean;
  service_requested: boolean;
  /** 0 turns the rule off. */
  offline_after_minutes: number;
  counter_backwards: boolean;
}

export const DEFAULT_ALERT_RULES: AlertRules = {
  supply_below_percent: 15,
  supply_empty_within_days: 7,
  jam: true,
  door_open: true,
  paper_out: true,
  service_requested: true,
  offline_after_minutes: 60,
  counter_backwards: true,
};

/** What is known of one device; undefined = not known in this evaluation (left as it is). */
export interface DeviceFacts {
  /** Supply levels in percent by supply key; negative values (unknown) are ignored. */
  levels?: Record<string, unknown>;
  /** Forecast days to empty by supply key (null: no forecast). */
  days_to_empty?: Record<string, number | null>;
  status_messages?: string[];
  /** A reading's page counter was below the stored one (the record's trust.counter_flag, model/trust.ts). */
  counter_flag?: boolean;
  /** Epoch ms of the device's last answer. */
  last_seen?: number;
}

/** A condition that holds now: an alert to open unless one is open for its key. */
export interface Condition {
  kind: AlertKind;
  /** The supply key for supply kinds, '' for the others. */
  supply: string;
  severity: AlertSeverity;
  message: string;
}

export interface OpenAlertKey {
  id: number;
  kind: AlertKind;
  supply: string;
}

const STATUS_NAMES = { jam: 'paper jam', door_open: 'door open', paper_out: 'out of paper', service_requested: 'service requested' } as const;

const key = (kind: string, supply: string) => `${kind}\u0000${supply}`;

/**
 * The days to empty a supply_empty_soon message says (0 for "today"), read back for the alert's
 * plain words (alerts/words.ts): the alerts table keeps the message, not the forecast.
 */
export function daysInMessage(message: string): number | undefined {
  if (/ forecast empty today$/.test(message)) return 0;
  const m = / forecast empty in about (\d+) days?$/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/** The level in percent a supply_low message says (read back like daysInMessage). */
export function levelInMessage(message: string): number | undefined {
  const m = / at (\d+)% \(below \d+%\)$/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/**
 * What should be opened and what cleared for one device, given its facts, the rules and the alerts
 * open for it now. `now` is epoch ms (for offline).
 */
export function evaluateAlerts(rules: AlertRules, facts: DeviceFacts, open: OpenAlertKey[], now: number): { open: Condition[]; clear: number[] } {
  const holds: Condition[] = [];
  /** Keys whose condition is known to have ended (or whose rule is off). */
  const ended = new Set<string>();
  const openKeys = new Map(open.map((a) => [key(a.kind, a.supply), a]));
  const openOf = (kind: AlertKind) => open.filter((a) => a.kind === kind);
  const endAll = (kind: AlertKind) => {
    for (const a of openOf(kind)) ended.add(key(a.kind, a.supply));
  };

  if (facts.levels) {
    const threshold = rules.supply_below_percent;
    if (threshold <= 0) endAll('supply_low');
    else {
      for (const [supply, raw] of Object.entries(facts.levels)) {
        if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0) continue; // unknown: as it was
        const isOpen = openKeys.has(key('supply_low', supply));
        if (raw < threshold) {
          holds.push({ kind: 'supply_low', supply, severity: raw <= 0 ? 'critical' : 'warning', message: `${supply} at ${Math.round(raw)}% (below ${threshold}%)` }); // read back by levelInMessage
        } else if (isOpen && raw >= threshold + SUPPLY_CLEAR_MARGIN) ended.add(key('supply_low', supply));
      }
      // A supply the printer no longer reports (a colour unit removed) ends its alert.
      for (const a of openOf('supply_low')) if (!Object.hasOwn(facts.levels, a.supply)) ended.add(key(a.kind, a.supply));
    }
  }

  if (facts.days_to_empty) {
    const within = rules.supply_empty_within_days;
    if (within <= 0) endAll('supply_empty_soon');
    else {
      for (const [supply, days] of Object.entries(facts.days_to_empty)) {
        const isOpen = openKeys.has(key('supply_empty_soon', supply));
        if (days !== null && days <= within) {
          const when = days < 1 ? 'today' : `in about ${Math.round(days)} day${Math.round(days) === 1 ? '' : 's'}`; // read back by daysInMessage
          holds.push({ kind: 'supply_empty_soon', supply, severity: 'warning', message: `${supply} forecast empty ${when}` });
        } else if (isOpen && (days === null || days > within + FORECAST_CLEAR_MARGIN_DAYS)) ended.add(key('supply_empty_soon', supply));
      }
      for (const a of openOf('supply_empty_soon')) if (!Object.hasOwn(facts.days_to_empty, a.supply)) ended.add(key(a.kind, a.supply));
    }
  }

  if (facts.status_messages) {
    for (const kind of ['jam', 'door_open', 'paper_out', 'service_requested'] as const) {
      const line = rules[kind] ? lineSaying(kind, facts.status_messages) : undefined;
      if (line !== undefined) {
        holds.push({ kind, supply: '', severity: kind === 'service_requested' ? 'warning' : 'critical', message: `${STATUS_NAMES[kind]}: ${line.slice(0, 200)}` });
      } else endAll(kind);
    }
  }

  if (facts.counter_flag !== undefined) {
    if (rules.counter_backwards && facts.counter_flag) {
      holds.push({ kind: 'counter_backwards', supply: '', severity: 'warning', message: 'page counter went backwards: the reading is held until a person accepts it' });
    } else endAll('counter_backwards');
  }

  if (facts.last_seen !== undefined) {
    const minutes = rules.offline_after_minutes;
    const silentMs = now - facts.last_seen;
    if (minutes > 0 && silentMs >= minutes * 60_000) {
      const silent = Math.floor(silentMs / 60_000);
      holds.push({ kind: 'offline', supply: '', severity: 'critical', message: `not answering for ${silent} minute${silent === 1 ? '' : 's'}` });
    } else endAll('offline');
  }

  return {
    open: holds.filter((c) => !openKeys.has(key(c.kind, c.supply))),
    clear: open.filter((a) => ended.has(key(a.kind, a.supply))).map((a) => a.id),
  };
}
