// The order list: every saved printer's supplies that are forecast to run out within
// Settings `order_list.within_days`, or are already below the low mark (Settings
// `alerts.supply_below_percent`, the supply_low alert's threshold), soonest first. Served by
// GET /api/supplies/order-list (JSON or CSV) and the UI's Order list view.
//
// Each printer's forecast reads 90 days of its history (read.ts, about 4 ms): the list yields to
// the event loop between printers, so 2,000 printers never hold it for seconds at once.
import type { MetricsStore } from '../store/metrics.js';
import { nextTurn } from '../shared/pace.js';
import { readForecast } from './read.js';


/** What the list needs of a saved printer (store/devices.ts eachSaved). */
export interface OrderPrinter {
  serial: string;
  manufacturer?: string;
  model?: string;
  location?: string;
  asset_number?: string;
  printer_info?: Record<string, unknown>;
}

export interface OrderItem {
  serial: string;
  manufacturer: string | null;
  model: string | null;
  location: string | null;
  asset_number: string | null;
  /** The supply's key as the printer's levels name it (black, cyan, drum_black, ...). */
  supply: string;
  part_number: string | null;
  level: number | null;
  days_to_empty: number | null;
  /** The UTC date the level is expected to reach 0 (YYYY-MM-DD); today's date when already empty. */
  expected_empty_on: string | null;
  /** Why it is listed: `low` (below the low mark now), `forecast` (runs out within the window), or both. */
  reasons: ('low' | 'forecast')[];
}

/**
 * A printer's supply part numbers by supply key (the keys of `toner_levels` and of the forecast's
 * supplies), as the reading stored them: PrinterInfo `supply_part_numbers` (snmp/parse/part-number.ts).
 * Nothing is listed where the record has none; a value that is not text is left out.
 */
export function partNumbersOf(printerInfo: Record<string, unknown> | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const stored = printerInfo?.supply_part_numbers;
  if (typeof stored !== 'object' || stored === null) return out;
  for (const [key, pn] of Object.entries(stored)) if (typeof pn === 'string' && pn.trim()) out.set(key, pn.trim());
  return out;
}

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** One printer's items, soonest first. */
export function orderItemsOf(p: OrderPrinter, metrics: MetricsStore, withinDays: number, lowMark: number, now: number): OrderItem[] {
  const parts = partNumbersOf(p.printer_info);
  const items: OrderItem[] = [];
  for (const f of readForecast(metrics, p.serial, now).supplies) {
    const reasons: OrderItem['reasons'] = [];
    if (f.level !== null && f.level < lowMark) reasons.push('low');
    if (f.days_to_empty !== null && f.days_to_empty <= withinDays) reasons.push('forecast');
    if (!reasons.length) continue;
    const expected = f.empty_on ?? (f.level === 0 ? dateOf(now) : null);
    items.push({
      serial: p.serial,
      manufacturer: p.manufacturer ?? null,
      model: p.model ?? null,
      location: p.location ?? null,
      asset_number: p.asset_number ?? null,
      supply: f.name,
      part_number: parts.get(f.name) ?? null,
      level: f.level,
      days_to_empty: f.days_to_empty,
      expected_empty_on: expected,
      reasons,
    });
  }
  return items;
}

/** Soonest first: by expected date (none last), then printer and supply. */
export function compareOrderItems(a: OrderItem, b: OrderItem): number {
  const da = a.expected_empty_on ?? '9999-12-31';
  const db = b.expected_empty_on ?? '9999-12-31';
  return da < db ? -1 : da > db ? 1 : a.serial < b.serial ? -1 : a.serial > b.serial ? 1 : a.supply < b.supply ? -1 : a.supply > b.supply ? 1 : 0;
}

/**
 * The whole list, soonest first. The list itself is small (the supplies to order), so it is sorted
 * in memory; the printers are read one at a time, with a turn of the event loop between them.
 */
export async function orderList(
  printers: Iterable<OrderPrinter>, metrics: MetricsStore, withinDays: number, lowMark: number, now: () => number,
): Promise<OrderItem[]> {
  const all = [...printers];
  const items: OrderItem[] = [];
  for (const p of all) {
    items.push(...orderItemsOf(p, metrics, withinDays, lowMark, now()));
    await nextTurn();
  }
  return items.sort(compareOrderItems);
}

