// An IPP printer's supplies as the agent's supply keys (black, cyan, waste_toner, drum_black ...),
// named by the same rule as SNMP readings (snmp/parse/supplies.ts supplyKey): USB and network
// printers read over IPP, and SNMP printers, all say "cyan" for the same cartridge.
import { ownValue } from '../model/inherited-keys.js';
import { partNumberOf } from '../snmp/parse/part-number.js';
import { supplyKey } from '../snmp/parse/supplies.js';
import type { IppPrinterState } from './codec.js';

export interface IppSupplies {
  consumables: string[];
  /** Percent by key; only levels the printer knows. */
  levels: Record<string, number>;
  /** Part number by key, where a marker name or supply description holds one (snmp/parse/part-number.ts). */
  partNumbers: Record<string, string>;
  /** The Printer MIB's type name by key (marker-types / printer-supply type), where the printer says it. */
  types: Record<string, string>;
}

/** IPP's marker-types and printer-supply types are the Printer MIB's, hyphenated ("waste-toner"). */
const mibType = (t: string | undefined) => t?.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** marker-colors are sRGB "#RRGGBB" (several for a multi-colour cartridge): the plain ones by name. */
const HEX_COLOURS: Record<string, string> = { '#000000': 'black', '#00FFFF': 'cyan', '#FF00FF': 'magenta', '#FFFF00': 'yellow' };

function colourOf(color: string | undefined): string | undefined {
  if (!color) return undefined;
  const hexes = color.toUpperCase().match(/#[0-9A-F]{6}/g) ?? [];
  // A marker of several colours ("#00FFFF#FF00FF#FFFF00") is a multi-colour cartridge.
  if (hexes.length > 1) return hexes.length === 3 && ['#00FFFF', '#FF00FF', '#FFFF00'].every((h) => hexes.includes(h)) ? 'tri_color' : undefined;
  return ownValue(HEX_COLOURS, color.toUpperCase()) ?? (color.startsWith('#') ? undefined : color);
}

const isColourant = (type: string | undefined) => /toner|ink|wax/i.test(type ?? '') && !/waste/i.test(type ?? '');

/**
 * marker-* when the printer lists markers (every IPP Everywhere printer does), else printer-supply.
 * Undefined when it lists neither.
 */
export function ippSupplies(s: Pick<IppPrinterState, 'markers' | 'supplies'>): IppSupplies | undefined {
  const supplies = s.supplies ?? [];
  // A printer-supply row beside each marker (the same list, in the same order) may name the part.
  const beside = (i: number) => (supplies.length === s.markers.length ? supplies[i]?.description : undefined);
  const rows = s.markers.length
    ? s.markers.map((m, i) => ({ type: mibType(m.type), name: m.name, colour: colourOf(m.color) ?? m.name, level: m.level, part: partNumberOf(m.name) ?? partNumberOf(beside(i)) }))
    : supplies.map((p) => ({ type: mibType(p.type), name: p.description, colour: p.colorantName ?? p.description, level: p.level, part: partNumberOf(p.description) }));
  if (rows.length === 0) return undefined;
  const mono = rows.filter((r) => isColourant(r.type)).length <= 1;
  const out: IppSupplies = { consumables: [], levels: {}, partNumbers: {}, types: {} };
  for (const r of rows) {
    const key = supplyKey(r.type, r.name, r.colour, mono);
    if (!out.consumables.includes(key)) out.consumables.push(key);
    if (r.level !== undefined) out.levels[key] = r.level;
    if (r.part) out.partNumbers[key] = r.part;
    if (r.type && !['other', 'unknown'].includes(r.type)) out.types[key] = r.type;
  }
  return out;
}
