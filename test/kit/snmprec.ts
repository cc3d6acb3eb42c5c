// Reads snmpsim .snmprec recordings ("OID|TAG|VALUE" per line) into OidValues, the same shape
// the SNMP client produces. Tags (snmp-simulation.md): 2 INTEGER, 4 OCTET STRING, 4x hex OCTET
// STRING, 6 OID, 64 IpAddress, 65 Counter32, 66 Gauge32, 67 TimeTicks, 70 Counter64, 5 NULL.
// A trailing "x" on any tag means the value is hex-encoded. Variation-module suffixes
// ("2:numeric") are not supported: such lines are rejected.
import { readFileSync } from 'node:fs';
import { octetsToValue, normOid, type OidValues, type SnmpValue } from '../../src/snmp/types.js';

export function parseSnmprecLine(line: string): [string, SnmpValue] | undefined {
  if (line.trim() === '' || line.startsWith('#')) return undefined;
  const a = line.indexOf('|');
  const b = line.indexOf('|', a + 1);
  if (a < 0 || b < 0) throw new Error(`bad snmprec line: ${line}`);
  const oid = normOid(line.slice(0, a).trim());
  const tagText = line.slice(a + 1, b).trim();
  const raw = line.slice(b + 1);
  const m = /^(\d+)(x?)$/.exec(tagText);
  if (!m) throw new Error(`unsupported snmprec tag ${tagText} for ${oid}`);
  const tag = Number(m[1]);
  const hex = m[2] === 'x';
  const bytes = () => (hex ? Buffer.from(raw.trim(), 'hex') : Buffer.from(raw, 'utf8'));
  const text = () => (hex ? Buffer.from(raw.trim(), 'hex').toString('latin1') : raw.trim());
  switch (tag) {
    case 2:
      return [oid, { type: 'int', value: Number(text()) }];
    case 4:
      return [oid, octetsToValue(bytes())];
    case 5:
      return [oid, { type: 'null', value: null }];
    case 6:
      return [oid, { type: 'oid', value: normOid(text()) }];
    case 64:
      return [oid, { type: 'ip', value: hex ? [...bytes()].join('.') : text() }];
    case 65:
      return [oid, { type: 'counter', value: Number(text()) }];
    case 66:
      return [oid, { type: 'gauge', value: Number(text()) }];
    case 67:
      return [oid, { type: 'ticks', value: Number(text()) }];
    case 70:
      return [oid, { type: 'counter64', value: BigInt(text()) }];
    default:
      throw new Error(`unsupported snmprec tag ${tagText} for ${oid}`);
  }
}

/** Parses snmprec text. */
export function parseSnmprec(content: string): OidValues {
  const out: OidValues = new Map();
  for (const line of content.split(/\r?\n/)) {
    const rec = parseSnmprecLine(line);
    if (rec) out.set(rec[0], rec[1]);
  }
  return out;
}

/** Reads an snmprec file. */
export function readSnmprec(path: string): OidValues {
  return parseSnmprec(readFileSync(path, 'utf8'));
}

/** Orders OIDs arc by arc, as snmpsim's GETNEXT needs its records ("1.10" after "1.9"). */
function compareOids(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * A variant of a recording (snmprec text): `changes` maps an OID to its new "TAG|VALUE" (set, or
 * added when the recording lacks it) or to null (removed). The records come out sorted by OID.
 */
export function deriveSnmprec(content: string, changes: Record<string, string | null>): string {
  const records = new Map<string, string>();
  for (const line of content.split(/\r?\n/)) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    records.set(line.slice(0, line.indexOf('|')), line.slice(line.indexOf('|') + 1));
  }
  for (const [oid, rec] of Object.entries(changes)) {
    if (rec === null) records.delete(oid);
    else {
      if (!/^\d+x?\|/.test(rec)) throw new Error(`change for ${oid} must be "TAG|VALUE": ${rec}`);
      records.set(oid, rec);
    }
  }
  return [...records.keys()].sort(compareOids).map((oid) => `${oid}|${records.get(oid)}`).join('\n') + '\n';
}
