// Marker supplies (RFC 3805 prtMarkerSuppliesTable) and their normalisation to colour/kind.
//
// Level rule (RFC 3805 prtMarkerSuppliesLevel / prtMarkerSuppliesMaxCapacity):
//   level >= 0 and max > 0        -> percent = round(level * 100 / max), capped at 100
//   level >= 0, max not a real capacity (-1 other, -2 unknown, 0) and unit percent(19)
//                                 -> percent = level (the level already is a percentage)
//   level -3 ("some remaining"), -2 (unknown), -1 (other), or a level without a capacity
//                                 -> no percentage. The supply is still listed (consumables,
//                                    supplies[].state) but never enters PrinterInfo's
//                                    toner_levels: unknown is not 0%. A reading's toner_levels
//                                    keep -3 itself (SOME_REMAINING, parse/index.ts).
// For receptacles (class receptacleThatIsFilled, e.g. waste toner) RFC 3805 defines the level
// as the remaining space, so their percentage is the space left (100 = empty box).
import {
  PRT_MARKER_COLORANT_VALUE,
  PRT_MARKER_PROCESS_COLORANTS,
  PRT_MARKER_SUPPLIES_CLASS,
  PRT_MARKER_SUPPLIES_COLORANT_INDEX,
  PRT_MARKER_SUPPLIES_DESCRIPTION,
  PRT_MARKER_SUPPLIES_LEVEL,
  PRT_MARKER_SUPPLIES_MAX_CAPACITY,
  PRT_MARKER_SUPPLIES_TYPE,
  PRT_MARKER_SUPPLIES_UNIT,
} from '../oids.js';
import { ownValue, storableKey } from '../../model/inherited-keys.js';
import type { OidValues } from '../types.js';
import { column, columnMap, numOf, percent, textOf } from './values.js';
import { partNumberOf } from './part-number.js';

/** Printer-MIB's prtMarkerSuppliesLevel for "some remaining", as a reading's toner_levels keep it. */
export const SOME_REMAINING = -3;

export type SupplyState = 'measured' | 'some_remaining' | 'unknown' | 'other' | 'unknown_capacity';

export interface Supply {
  /** Row index ("1.3" = hrDeviceIndex 1, supply 3) or a vendor code. */
  index: string;
  /** Normalised colour/kind: black, cyan, drum_black, waste_toner, fuser, ... */
  key: string;
  description?: string;
  /** The order code the description holds (part-number.ts), when it holds one. */
  part_number?: string;
  /** RFC 3805 PrtMarkerSuppliesTypeTC name (toner, opc, wasteToner, ...). */
  type?: string;
  receptacle?: boolean;
  level?: number;
  max_capacity?: number;
  percent?: number;
  state: SupplyState;
  source: 'printer-mib' | 'vendor';
  /** OID of the level, when one OID holds it. */
  oid?: string;
}

/** RFC 3805 PrtMarkerSuppliesTypeTC. */
export const SUPPLY_TYPES: Record<number, string> = {
  1: 'other',
  2: 'unknown',
  3: 'toner',
  4: 'wasteToner',
  5: 'ink',
  6: 'inkCartridge',
  7: 'inkRibbon',
  8: 'wasteInk',
  9: 'opc',
  10: 'developer',
  11: 'fuserOil',
  12: 'solidWax',
  13: 'ribbonWax',
  14: 'wasteWax',
  15: 'fuser',
  16: 'coronaWire',
  17: 'fuserOilWick',
  18: 'cleanerUnit',
  19: 'fuserCleaningPad',
  20: 'transferUnit',
  21: 'tonerCartridge',
  22: 'fuserOiler',
  23: 'water',
  24: 'wasteWater',
  25: 'glueWaterAdditive',
  26: 'wastePaper',
  27: 'bindingSupply',
  28: 'bandingSupply',
  29: 'stitchingWire',
  30: 'shrinkWrap',
  31: 'paperWrap',
  32: 'staples',
  33: 'inserts',
  34: 'covers',
  35: 'matteToner',
  36: 'matteInk',
};

/** Supply kinds whose key is the bare colour (the marking agent itself). */
const COLOURANT_TYPES = new Set(['toner', 'ink', 'inkCartridge', 'inkRibbon', 'solidWax', 'ribbonWax', 'tonerCartridge', 'matteToner', 'matteInk']);

/** Kind keys for the other types; colour-bearing ones get "_<colour>" appended when known. */
const KIND_BY_TYPE: Record<string, { key: string; coloured?: boolean }> = {
  wasteToner: { key: 'waste_toner' },
  wasteInk: { key: 'waste_ink' },
  wasteWax: { key: 'waste_wax' },
  wasteWater: { key: 'waste_water' },
  wastePaper: { key: 'waste_paper' },
  opc: { key: 'drum', coloured: true },
  developer: { key: 'developer', coloured: true },
  fuserOil: { key: 'fuser_oil' },
  fuser: { key: 'fuser' },
  coronaWire: { key: 'corona_wire' },
  fuserOilWick: { key: 'fuser_oil_wick' },
  cleanerUnit: { key: 'cleaner' },
  fuserCleaningPad: { key: 'fuser_cleaning_pad' },
  transferUnit: { key: 'transfer_unit' },
  fuserOiler: { key: 'fuser_oiler' },
  water: { key: 'water' },
  staples: { key: 'staples' },
};

// Two-letter colour codes count only as words of their own: "PK-3010S" (a UTAX toner kit),
// "MK-1150" (a Kyocera maintenance kit) and "LC-3219" (a Brother cartridge) are part numbers.
const NOT_PART_NUMBER = '(?![-\\s]?\\d)';
const code = (letters: string) => new RegExp(`\\b${letters}\\b${NOT_PART_NUMBER}`);

const COLOUR_WORDS: Array<[RegExp, string]> = [
  // One cartridge holding several colourants is not any one of them (a tri-colour
  // cartridge beside a black one was stored as a second black).
  [/tri[-_\s]?colou?r|three[-\s]?colou?r|\bcmy\b|\bc\s*\/\s*m\s*\/\s*y\b|cyan[\s,/&+-]*magenta[\s,/&+-]*(and\s*)?yellow/, 'tri_color'],
  [/photo\s*black/, 'photo_black'],
  [code('pk'), 'photo_black'],
  [/matte?\s*black/, 'matte_black'],
  [code('mk'), 'matte_black'],
  [/light\s*light\s*black|light\s*gr[ae]y/, 'light_gray'],
  [/light\s*black|\bgr[ae]y\b/, 'gray'],
  [/(light|photo)\s*cyan/, 'light_cyan'],
  [code('lc'), 'light_cyan'],
  [/(light|photo)\s*magenta/, 'light_magenta'],
  [code('lm'), 'light_magenta'],
  // A photo cartridge (several photo colourants in one): after photo black, light/photo cyan and magenta.
  [/\bphoto\s+(?:ink\s+)?(?:cartridge|colou?r)|\bphoto\s+ink\b/, 'photo'],
  [/black|schwarz|noir|negro|nero|preto|czarn|\bblk\b|\bbk\b/, 'black'],
  [/cyan|\bcian|\bciano/, 'cyan'],
  [/magenta/, 'magenta'],
  [/yellow|gelb|jaune|amarill|giallo|amarelo|\bylw\b/, 'yellow'],
  [/\bred\b|\brot\b|\brouge\b/, 'red'],
  [/\bgreen\b|\bgr[uü]n\b/, 'green'],
  [/\bblue\b|\bblau\b/, 'blue'],
  [/orange/, 'orange'],
  [/violet/, 'violet'],
  [/\bwhite\b/, 'white'],
  [/\bclear\b|transparent|gloss\s*optimi[sz]er/, 'clear'],
];

const COLOUR_LETTER: Record<string, string> = { K: 'black', BK: 'black', C: 'cyan', M: 'magenta', Y: 'yellow' };

/**
 * Colour named by a colorant value or supply description ("Black Toner", "TK-8527C",
 * "SJIC35P-BK", "CLT-K404S"), or undefined.
 */
export function normaliseColour(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const lower = text.toLowerCase();
  for (const [re, name] of COLOUR_WORDS) if (re.test(lower)) return name;
  const up = text.toUpperCase().trim();
  // Part-number suffixes: "TK-8527K", "TN-245C" (colour letter right after the digits) ...
  let m = /\d(BK|K|C|M|Y)$/.exec(up);
  if (m) return ownValue(COLOUR_LETTER, m[1]);
  // ... "SJIC35P-BK", "Cartridge -C" (colour code after a dash or space at the end) ...
  m = /[-\s_](BK|K|C|M|Y)$/.exec(up);
  if (m) return ownValue(COLOUR_LETTER, m[1]);
  // ... "CLT-K404S" (colour letter right after the series dash).
  m = /-(K|C|M|Y)\d/.exec(up);
  if (m) return ownValue(COLOUR_LETTER, m[1]);
  return undefined;
}

/** Kind from a free-text description, for supplies typed other/unknown. */
function kindFromDescription(desc: string): { key: string; coloured?: boolean; colourant?: boolean } | undefined {
  const d = desc.toLowerCase();
  if (/waste|used\s*toner|collector/.test(d)) return { key: /ink|maintenance/.test(d) ? 'waste_ink' : 'waste_toner' };
  if (/maintenance\s*box/.test(d)) return { key: 'waste_ink' };
  if (/drum|opc|photo\s*conductor|imaging\s*(unit|drum|kit)/.test(d)) return { key: 'drum', coloured: true };
  if (/developer/.test(d)) return { key: 'developer', coloured: true };
  if (/belt/.test(d)) return { key: 'belt' };
  if (/transfer/.test(d)) return { key: 'transfer_unit' };
  if (/fuser|fixing/.test(d)) return { key: 'fuser' };
  if (/staple/.test(d)) return { key: 'staples' };
  if (/roller\s*kit/.test(d)) return { key: 'roller_kit' };
  if (/maintenance\s*kit|\bkit\b/.test(d)) return { key: 'maintenance_kit' };
  if (/clean/.test(d)) return { key: 'cleaner' };
  if (/toner|\bink\b|cartridge|tinte|encre/.test(d)) return { key: 'toner', colourant: true };
  return undefined;
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40) || 'supply';
}

/**
 * Key for one supply. `monoDevice` is true when the printer's only colorant is black, so an
 * uncoloured toner is black. A description that names no known kind is the key itself: one the
 * box could not restore from a backup (`constructor`) is renamed (`supply_constructor`).
 */
export function supplyKey(type: string | undefined, description: string | undefined, colorant: string | undefined, monoDevice: boolean): string {
  return storableKey(supplyKeyOf(type, description, colorant, monoDevice), 'supply');
}

function supplyKeyOf(type: string | undefined, description: string | undefined, colorant: string | undefined, monoDevice: boolean): string {
  const colour = normaliseColour(colorant) ?? normaliseColour(description);
  if (type && COLOURANT_TYPES.has(type)) {
    return colour ?? (monoDevice ? 'black' : type.startsWith('ink') ? 'ink' : 'toner');
  }
  // Own properties only: IPP's marker-types are whatever the printer sends, and `constructor`
  // would find Object here (a supply keyed "undefined").
  const byType = type ? ownValue(KIND_BY_TYPE, type) : undefined;
  const kind = byType ?? (description ? kindFromDescription(description) : undefined);
  if (!kind) return description ? slug(description) : 'supply';
  if ('colourant' in kind && kind.colourant) return colour ?? (monoDevice ? 'black' : kind.key);
  return kind.coloured && colour ? `${kind.key}_${colour}` : kind.key;
}

/** Applies the level rule above. */
export function levelState(level: number | undefined, max: number | undefined, unit: number | undefined): { percent?: number; state: SupplyState } {
  if (level === undefined) return { state: 'unknown' };
  if (level === SOME_REMAINING) return { state: 'some_remaining' };
  if (level === -2) return { state: 'unknown' };
  if (level < 0) return { state: 'other' };
  const p = percent(level, max ?? -2);
  if (p !== undefined) return { percent: p, state: 'measured' };
  if (unit === 19) return { percent: Math.min(100, level), state: 'measured' };
  return { state: 'unknown_capacity' };
}

/** Reads prtMarkerSuppliesTable, with colours from prtMarkerColorantTable. */
export function readSupplies(values: OidValues, charset?: string): Supply[] {
  const descr = column(values, PRT_MARKER_SUPPLIES_DESCRIPTION);
  const types = columnMap(values, PRT_MARKER_SUPPLIES_TYPE);
  const classes = columnMap(values, PRT_MARKER_SUPPLIES_CLASS);
  const units = columnMap(values, PRT_MARKER_SUPPLIES_UNIT);
  const maxes = columnMap(values, PRT_MARKER_SUPPLIES_MAX_CAPACITY);
  const levels = columnMap(values, PRT_MARKER_SUPPLIES_LEVEL);
  const colorantIdx = columnMap(values, PRT_MARKER_SUPPLIES_COLORANT_INDEX);
  const colorants = columnMap(values, PRT_MARKER_COLORANT_VALUE);

  // Rows: every index that has a description or a level.
  const indexes = new Set<string>([...descr.map(([i]) => i), ...levels.keys()]);
  const colourNames = [...colorants.values()].map((v) => normaliseColour(textOf(v))).filter(Boolean);
  // Mono: every colorant named is black; with no colorant table, one process colorant per marker.
  const processColorants = [...columnMap(values, PRT_MARKER_PROCESS_COLORANTS).values()].map(numOf);
  const monoDevice =
    colourNames.length > 0 ? colourNames.every((c) => c === 'black') : processColorants.length > 0 && processColorants.every((n) => n === 1);

  const used = new Map<string, number>();
  const out: Supply[] = [];
  for (const index of [...indexes].sort(cmpIndex)) {
    const description = textOf(descr.find(([i]) => i === index)?.[1], charset);
    const typeNum = numOf(types.get(index));
    const type = typeNum !== undefined ? ownValue(SUPPLY_TYPES, String(typeNum)) ?? `type${typeNum}` : undefined;
    const device = index.split('.')[0];
    const ci = numOf(colorantIdx.get(index));
    const colorant = ci && ci > 0 ? textOf(colorants.get(`${device}.${ci}`)) : undefined;
    let key = supplyKey(type, description, colorant, monoDevice);
    const n = (used.get(key) ?? 0) + 1;
    used.set(key, n);
    if (n > 1) key = `${key}_${n}`;
    const level = numOf(levels.get(index));
    const max = numOf(maxes.get(index));
    const { percent: pct, state } = levelState(level, max, numOf(units.get(index)));
    const part_number = partNumberOf(description);
    out.push({
      index,
      key,
      description,
      ...(part_number ? { part_number } : {}),
      type,
      receptacle: numOf(classes.get(index)) === 4 ? true : undefined,
      level,
      max_capacity: max,
      percent: pct,
      state,
      source: 'printer-mib',
      oid: levels.has(index) ? `${PRT_MARKER_SUPPLIES_LEVEL}.${index}` : undefined,
    });
  }
  return out;
}

function cmpIndex(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return pa.length - pb.length;
}

/** Colour names of the marker colorants (prtMarkerColorantValue), normalised. */
export function colorantColours(values: OidValues): string[] {
  const out: string[] = [];
  for (const [, v] of column(values, PRT_MARKER_COLORANT_VALUE)) {
    const c = normaliseColour(textOf(v));
    if (c && !out.includes(c)) out.push(c);
  }
  return out;
}
