// Helpers shared by vendor modules.
import { column, firstNum, firstText, num, numOf, type Found } from '../parse/values.js';
import type { OidValues } from '../types.js';

export { firstNum, firstText };

/** Number at an OID, as a Found. */
export function numAt(values: OidValues, oid: string): Found<number> | undefined {
  const n = num(values, oid);
  return n === undefined ? undefined : { value: n, oid };
}

/** Sum of the numbers found at the OIDs; undefined when none is present. */
export function sumAt(values: OidValues, oids: readonly string[]): number | undefined {
  let total: number | undefined;
  for (const oid of oids) {
    const n = num(values, oid);
    if (n !== undefined && n >= 0) total = (total ?? 0) + n;
  }
  return total;
}

/** Numeric column rows as [suffix, number]. */
export function numColumn(values: OidValues, col: string): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (const [suffix, v] of column(values, col)) {
    const n = numOf(v);
    if (n !== undefined) out.push([suffix, n]);
  }
  return out;
}

/** Records OIDs present in the values under readable names. */
export function presentOids(values: OidValues, named: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, oid] of Object.entries(named)) if (values.has(oid)) out[`${prefix}_${k}`] = oid;
  return out;
}
