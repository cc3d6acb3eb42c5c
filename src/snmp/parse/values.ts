// Small readers over OidValues used by every parser.
import type { OidValues, SnmpValue } from '../types.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The value's bytes (OCTET STRINGs); other types give their text form. */
export function bytesOf(v: SnmpValue | undefined): Buffer | undefined {
  if (!v) return undefined;
  if (Buffer.isBuffer(v.value)) return v.value;
  if (v.value === null) return undefined;
  return Buffer.from(String(v.value), 'utf8');
}

/** Removes NUL padding and surrounding whitespace; undefined when nothing is left. */
export function cleanText(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  // eslint-disable-next-line no-control-regex
  const t = s.replace(/\x00/g, '').replace(/[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '').trim();
  return t === '' ? undefined : t;
}

/**
 * Text of a value, cleaned. Binary OCTET STRINGs are decoded as UTF-8 when valid, else with
 * the given charset (IANA name as TextDecoder knows it), else Latin-1.
 */
export function textOf(v: SnmpValue | undefined, charset?: string): string | undefined {
  if (!v || v.value === null) return undefined;
  if (typeof v.value === 'string') return cleanText(v.value);
  if (Buffer.isBuffer(v.value)) return cleanText(decodeBytes(v.value, charset));
  return cleanText(String(v.value));
}

export function decodeBytes(buf: Buffer, charset?: string): string {
  try {
    return UTF8.decode(buf);
  } catch {
    /* not UTF-8 */
  }
  if (charset) {
    try {
      return new TextDecoder(charset).decode(buf);
    } catch {
      /* unsupported charset */
    }
  }
  return buf.toString('latin1');
}

/** Numeric value: integers, counters, gauges, ticks; counter64 as a number; digit strings. */
export function numOf(v: SnmpValue | undefined): number | undefined {
  if (!v || v.value === null) return undefined;
  switch (v.type) {
    case 'int':
    case 'counter':
    case 'gauge':
    case 'ticks':
      return typeof v.value === 'number' && Number.isFinite(v.value) ? v.value : undefined;
    case 'counter64':
      return Number(v.value);
    case 'str': {
      const s = String(v.value).replace(/\x00/g, '').trim();
      return /^-?\d+$/.test(s) ? Number(s) : undefined;
    }
    default:
      return undefined;
  }
}

export function text(values: OidValues, oid: string, charset?: string): string | undefined {
  return textOf(values.get(oid), charset);
}

export function num(values: OidValues, oid: string): number | undefined {
  return numOf(values.get(oid));
}

/** A value and the OID it came from. */
export interface Found<T> {
  value: T;
  oid?: string;
}

/** First OID in the list with usable text. */
export function firstText(values: OidValues, oids: readonly string[]): Found<string> | undefined {
  for (const oid of oids) {
    const t = text(values, oid);
    if (t !== undefined) return { value: t, oid };
  }
  return undefined;
}

/** First OID in the list with a number. */
export function firstNum(values: OidValues, oids: readonly string[]): Found<number> | undefined {
  for (const oid of oids) {
    const n = num(values, oid);
    if (n !== undefined) return { value: n, oid };
  }
  return undefined;
}

/**
 * Numeric OID order ("1.10" after "1.9"), compared in place: no split, no arrays. Parsing reads
 * dozens of columns of a few hundred values per printer, so this runs often (docs/performance.md,
 * memory).
 */
export function compareOid(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    let x = 0;
    let y = 0;
    for (; i < a.length && a.charCodeAt(i) !== 46; i++) x = x * 10 + a.charCodeAt(i) - 48;
    for (; j < b.length && b.charCodeAt(j) !== 46; j++) y = y * 10 + b.charCodeAt(j) - 48;
    if (x !== y) return x - y;
    i++;
    j++;
  }
  return (i < a.length ? 1 : 0) - (j < b.length ? 1 : 0);
}

// The OIDs of the value map being parsed, in numeric order, made once per parse (withOidIndex).
// Outside a parse, or for another map, column() sorts what it needs itself.
let indexed: { values: OidValues; oids: string[] } | undefined;

/** Runs fn (synchronous: a parse) with the map's OIDs sorted once for every column() in it. */
export function withOidIndex<T>(values: OidValues, fn: () => T): T {
  const outer = indexed;
  indexed = { values, oids: [...values.keys()].sort(compareOid) };
  try {
    return fn();
  } finally {
    indexed = outer;
  }
}

/**
 * The rows of one table column: [index suffix, value] for every OID under `column.`, in
 * numeric index order. The suffix is the OID after the column ("1.3" for hrDevice 1, row 3).
 * Within withOidIndex, a binary search into the map's sorted OIDs: a column's rows are one run.
 */
export function column(values: OidValues, col: string): Array<[string, SnmpValue]> {
  const prefix = col + '.';
  if (indexed?.values !== values) {
    const rows: Array<[string, SnmpValue]> = [];
    for (const [oid, v] of values) if (oid.startsWith(prefix)) rows.push([oid.slice(prefix.length), v]);
    return rows.sort((a, b) => compareOid(a[0], b[0]));
  }
  const oids = indexed.oids;
  let lo = 0;
  let hi = oids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareOid(oids[mid], col) <= 0) lo = mid + 1;
    else hi = mid;
  }
  const out: Array<[string, SnmpValue]> = [];
  for (let k = lo; k < oids.length && oids[k].startsWith(prefix); k++) {
    const v = values.get(oids[k]);
    if (v) out.push([oids[k].slice(prefix.length), v]);
  }
  return out;
}

/** Column as a map from index suffix to value. */
export function columnMap(values: OidValues, col: string): Map<string, SnmpValue> {
  return new Map(column(values, col));
}

/** The enterprise number from a sysObjectID under 1.3.6.1.4.1, if any. */
export function enterpriseOf(sysObjectId: string | undefined): number | undefined {
  if (!sysObjectId) return undefined;
  const m = /^\.?1\.3\.6\.1\.4\.1\.(\d+)/.exec(sysObjectId);
  return m ? Number(m[1]) : undefined;
}

/** Integer percent, or undefined unless both numbers are real (level >= 0, max > 0). */
export function percent(level: number, max: number): number | undefined {
  if (!(level >= 0) || !(max > 0)) return undefined;
  return Math.min(100, Math.round((level * 100) / max));
}
