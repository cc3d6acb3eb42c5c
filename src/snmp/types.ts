// SNMP values as the parsers see them, independent of the client library.
//
// An OidValues map is keyed by the numeric OID without a leading dot ("1.3.6.1.2.1.1.1.0").
// The client builds it from net-snmp varbinds with fromVarbind(); the tests build it from
// snmpsim recordings (test/kit/snmprec.ts). Both go through octetsToValue() for OCTET
// STRINGs, so a value looks the same whichever way it arrived.
import { createRequire } from 'node:module';

export type SnmpType =
  | 'int'
  | 'str'
  | 'hex'
  | 'oid'
  | 'ip'
  | 'counter'
  | 'gauge'
  | 'ticks'
  | 'counter64'
  | 'null';

/**
 * One SNMP value.
 * - int, counter, gauge, ticks: number
 * - counter64: bigint
 * - str: string (an OCTET STRING whose bytes are valid UTF-8 text; Buffer.from(value) gives
 *   the original bytes back, NUL padding included)
 * - hex: Buffer (any other OCTET STRING: binary blobs, MAC addresses, bit strings)
 * - oid: dotted numeric string without leading dot; ip: dotted quad
 * - null: value null
 */
export interface SnmpValue {
  type: SnmpType;
  value: number | bigint | string | Buffer | null;
}

export type OidValues = Map<string, SnmpValue>;

/** A varbind as net-snmp delivers it (only the fields used here). */
export interface VarbindLike {
  oid: string;
  type: number;
  value: unknown;
}

interface NetSnmpConstants {
  ObjectType: Record<string, number>;
}

// net-snmp ships no type declarations; read its ObjectType table at run time without
// declaring the module (the client owns any declaration file it wants).
const netSnmp = createRequire(import.meta.url)('net-snmp') as NetSnmpConstants;
const T = netSnmp.ObjectType;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Classifies OCTET STRING bytes: valid UTF-8 without control characters (other than tab,
 * CR, LF and NUL padding) becomes a 'str', anything else a 'hex' Buffer.
 */
export function octetsToValue(buf: Buffer): SnmpValue {
  if (buf.length === 0) return { type: 'str', value: '' };
  let text: string;
  try {
    text = UTF8.decode(buf);
  } catch {
    return { type: 'hex', value: Buffer.from(buf) };
  }
  // eslint-disable-next-line no-control-regex
  if (/[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return { type: 'hex', value: Buffer.from(buf) };
  // NUL inside the text (not only trailing padding) means binary.
  if (/\x00[^\x00]/.test(text)) return { type: 'hex', value: Buffer.from(buf) };
  return { type: 'str', value: text };
}

/** Strips a leading dot from an OID. */
export function normOid(oid: string): string {
  return oid.startsWith('.') ? oid.slice(1) : oid;
}

/**
 * Converts one net-snmp varbind. Returns undefined for noSuchObject, noSuchInstance,
 * endOfMibView, types the parsers do not use (Opaque, BitString) and a Counter64 longer than
 * 64 bits.
 */
export function fromVarbind(vb: VarbindLike): SnmpValue | undefined {
  const v = vb.value;
  switch (vb.type) {
    case T.Integer:
      return { type: 'int', value: Number(v) };
    case T.OctetString:
      return octetsToValue(Buffer.isBuffer(v) ? v : Buffer.from(String(v ?? ''), 'utf8'));
    case T.OID:
      return { type: 'oid', value: normOid(String(v)) };
    case T.IpAddress:
      return { type: 'ip', value: Buffer.isBuffer(v) ? [...v].join('.') : String(v) };
    case T.Counter:
      return { type: 'counter', value: Number(v) };
    case T.Gauge:
      return { type: 'gauge', value: Number(v) };
    case T.TimeTicks:
      return { type: 'ticks', value: Number(v) };
    case T.Counter64: {
      const n = counter64(v);
      return n === undefined ? undefined : { type: 'counter64', value: n };
    }
    case T.Null:
      return { type: 'null', value: null };
    default:
      return undefined;
  }
}

/** Builds an OidValues map from varbinds, skipping errors and exceptions. */
export function varbindsToOidValues(vbs: Iterable<VarbindLike>, into: OidValues = new Map()): OidValues {
  for (const vb of vbs) {
    const val = fromVarbind(vb);
    if (val) into.set(normOid(vb.oid), val);
  }
  return into;
}

/** A Counter64 encodes in at most 9 octets (8, plus a leading zero). */
const COUNTER64_MAX_OCTETS = 9;

/** The value of a Counter64, or undefined when it cannot be one (longer than 9 octets). */
function counter64(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (Buffer.isBuffer(v)) {
    // net-snmp hands over the raw octets whatever their length. Refuse what no Counter64 can be:
    // besides being wrong, converting a hostile 60 KB "Counter64" octet by octet is quadratic
    // and held the event loop for ~180 ms per datagram (test/unit/snmp/hostile.test.ts).
    if (v.length > COUNTER64_MAX_OCTETS) return undefined;
    let n = 0n;
    for (const b of v) n = (n << 8n) | BigInt(b);
    return n;
  }
  try {
    return BigInt(String(v));
  } catch {
    return 0n;
  }
}

/** Numeric OID ordering (1.3.6.1.2 < 1.3.6.1.10), for sorting walks. */
export function compareOids(a: string, b: string): number {
  const pa = a.split('.');
  const pb = b.split('.');
  const n = Math.min(pa.length, pb.length);
  for (let i = 0; i < n; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  return pa.length - pb.length;
}
