// An alert in plain words: what happened to which supply or printer, said the way a
// technician acts on it ("Cyan ink will run out around 3 Dec"), which printer (its name or model,
// location, address) and where the box shows it, with times in the box's time zone (settings
// `display.time_zone`). The machine-readable fields stay as they are; these are added beside them
// for the UI, e-mails and webhooks. Pure.
import type { AlertJson } from '../events/payloads.js';
import { daysInMessage, levelInMessage } from '../model/alert-rules.js';
import { supplyName, type AgentFacts } from '../model/supply-words.js';
import { parseTime } from '../model/time.js';

/** The printer an alert is about, as a person recognises it (null: not known). */
export interface AlertPrinter {
  /** The name someone gave it (the saved description). */
  name: string | null;
  /** Maker and model, "HP Color LaserJet M553". */
  model: string | null;
  location: string | null;
  ip: string | null;
}

export interface AlertWords {
  /** The alert in plain words, times in the box's time zone. */
  text: string;
  /** The supply in words ("Cyan ink") for supply alerts, else null. */
  supply_name: string | null;
  printer: AlertPrinter;
  /** The printer's page in the box's UI (alerts/box.ts), or null when the box's name is not known. */
  page_url: string | null;
}

export type DescribedAlert = AlertJson & AlertWords;

/** What of a device the words need (store/devices.ts Device, with its stored PrinterInfo). */
export interface PrinterFacts {
  manufacturer?: string;
  model?: string;
  description?: string;
  location?: string;
  ip?: string;
  last_seen?: number;
  printer_info?: Record<string, unknown>;
}

const trimmed = (s: string | undefined) => (s && s.trim() ? s.trim() : null);

export function printerOf(d: PrinterFacts | undefined): AlertPrinter {
  const maker = trimmed(d?.manufacturer);
  const model = trimmed(d?.model);
  // "HP" + "Color LaserJet M553"; a model that already starts with its maker is said once.
  const full = model && maker && !model.toLowerCase().startsWith(maker.toLowerCase()) ? `${maker} ${model}` : model;
  return { name: trimmed(d?.description), model: full, location: trimmed(d?.location), ip: trimmed(d?.ip) };
}

/** "HP Color LaserJet M553, 2nd floor copy room, 10.0.0.23": name or model, location, address. */
export function printerLabel(p: AlertPrinter, serial: string): string {
  const who = p.name && p.model && p.name !== p.model ? `${p.name} (${p.model})` : (p.name ?? p.model ?? `printer ${serial}`);
  return [who, p.location, p.ip].filter((x) => x).join(', ');
}

/** "3 Dec" in `zone`. */
export function localDate(ms: number, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: zone, day: 'numeric', month: 'short' }).format(ms);
}

/** "3 Dec, 14:05 CET" in `zone` (the zone's abbreviation, summer time included). */
export function localTime(ms: number, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: zone, day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(ms);
}

const DAY_MS = 86_400_000;

const STATUS_WORDS: Record<string, string> = { jam: 'Paper jam', door_open: 'Door or cover open', paper_out: 'Out of paper', service_requested: 'Service requested' };

/** The alert's own words; `info` is the printer's stored PrinterInfo (supply types: "ink" or "toner"). */
export function alertText(a: AlertJson, d: PrinterFacts | undefined, zone: string): { text: string; supply_name: string | null } {
  const opened = parseTime(a.opened_at) ?? 0;
  const info = d?.printer_info as AgentFacts | undefined;
  const supply = a.supply === null ? null : supplyName(info, a.supply);
  switch (a.kind) {
    case 'supply_low': {
      const level = levelInMessage(a.message);
      const text = level === 0 ? `${supply} is empty` : `${supply} is low${level === undefined ? '' : ` (${level}%)`}`;
      return { text, supply_name: supply };
    }
    case 'supply_empty_soon': {
      const days = daysInMessage(a.message);
      const when = days === undefined ? 'soon' : days < 1 ? 'today' : `around ${localDate(opened + days * DAY_MS, zone)}`;
      return { text: `${supply} will run out ${when}`, supply_name: supply };
    }
    case 'offline': {
      // The printer's last answer when the box has it; else the minutes the rule counted.
      const minutes = /for (\d+) minute/.exec(a.message);
      const since = d?.last_seen ?? (minutes ? opened - Number(minutes[1]) * 60_000 : opened);
      return { text: `Not answering since ${localTime(since, zone)}`, supply_name: null };
    }
    case 'counter_backwards':
      return { text: 'Page counter went backwards: the reading is held until someone accepts it on the printer\'s page', supply_name: null };
    default: {
      const what = STATUS_WORDS[a.kind] ?? a.kind;
      // "paper jam: Jam in tray 2": the printer's own line after the rule's name.
      const line = a.message.includes(': ') ? a.message.slice(a.message.indexOf(': ') + 2).trim() : '';
      // A line that already says what it is ("Paper jam: Tray 2") is said as it is.
      const says = line.toLowerCase().startsWith(what.toLowerCase());
      return { text: !line ? what : says ? line.replace(/[.\s]+$/, '') : `${what}: ${line}`, supply_name: null };
    }
  }
}

export function describeAlert(a: AlertJson, d: PrinterFacts | undefined, zone: string, pageUrl: string | null): DescribedAlert {
  return { ...a, ...alertText(a, d, zone), printer: printerOf(d), page_url: pageUrl };
}

const rank = (a: AlertJson) => (a.severity === 'critical' ? 0 : 1) * 2 + (a.kind === 'supply_low' ? 0 : 1);

/**
 * One entry per supply: a supply's low and empty-soon alerts (one printer, one supply) become the
 * worst of them (critical first, then low), its text saying both ("Cyan ink is low (9%), will run
 * out around 3 Dec"). Other alerts pass as they are, in their order.
 */
export function worstPerSupply(alerts: DescribedAlert[]): DescribedAlert[] {
  const groups = new Map<string, DescribedAlert[]>();
  const out: (DescribedAlert | string)[] = [];
  for (const a of alerts) {
    if (a.supply === null || (a.kind !== 'supply_low' && a.kind !== 'supply_empty_soon')) {
      out.push(a);
      continue;
    }
    const key = `${a.serial}\u0000${a.supply}`;
    const g = groups.get(key);
    if (g) g.push(a);
    else {
      groups.set(key, [a]);
      out.push(key);
    }
  }
  return out.map((x) => {
    if (typeof x !== 'string') return x;
    const g = [...groups.get(x)!].sort((p, q) => rank(p) - rank(q));
    const [worst, ...rest] = g;
    const more = rest.map((r) => (r.supply_name && r.text.startsWith(`${r.supply_name} `) ? r.text.slice(r.supply_name.length + 1) : r.text));
    return { ...worst, text: [worst.text, ...more].join(', ') };
  });
}
