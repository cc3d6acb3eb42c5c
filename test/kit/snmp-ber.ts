// Just enough BER (X.690) to read an SNMP v1/v2c request and to write replies, well-formed or
// not, for the hostile responder (hostile-snmp.ts). Written here rather than borrowed from
// net-snmp on purpose: the test must be able to build what net-snmp's own writer refuses to
// (wrong lengths, wrong types, out-of-range numbers), and must not read requests with the code
// under test.

export const TAG = {
  Integer: 0x02,
  OctetString: 0x04,
  Null: 0x05,
  Oid: 0x06,
  Sequence: 0x30,
  IpAddress: 0x40,
  Counter32: 0x41,
  Gauge32: 0x42,
  TimeTicks: 0x43,
  Opaque: 0x44,
  Counter64: 0x46,
  NoSuchObject: 0x80,
  NoSuchInstance: 0x81,
  EndOfMibView: 0x82,
  GetRequest: 0xa0,
  GetNextRequest: 0xa1,
  Response: 0xa2,
  SetRequest: 0xa3,
  TrapV1: 0xa4,
  GetBulkRequest: 0xa5,
  InformRequest: 0xa6,
  TrapV2: 0xa7,
  Report: 0xa8,
} as const;

/** The length octets for `n` (definite form: short below 128, else 0x80 | count, big-endian). */
export function encodeLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

export function sequence(...parts: Buffer[]): Buffer {
  return tlv(TAG.Sequence, Buffer.concat(parts));
}

/** Two's complement, fewest octets (so 255 is 00 FF and -1 is FF). Any size: bigint. */
export function integer(n: number | bigint, tag: number = TAG.Integer): Buffer {
  let v = BigInt(n);
  const bytes: number[] = [];
  for (;;) {
    bytes.unshift(Number(v & 0xffn));
    const rest = v >> 8n; // arithmetic shift: keeps the sign
    const sign = bytes[0] & 0x80;
    if ((rest === 0n && !sign) || (rest === -1n && sign)) break;
    v = rest;
  }
  return tlv(tag, Buffer.from(bytes));
}

export function octets(value: Buffer | string, tag: number = TAG.OctetString): Buffer {
  return tlv(tag, Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'));
}

export const NULL = Buffer.from([TAG.Null, 0]);

/** An OID's content octets: the first two arcs in one sub-identifier, then base 128. */
export function oidContent(oid: string): Buffer {
  const arcs = oid.replace(/^\./, '').split('.').map(Number);
  const subs = [arcs[0] * 40 + (arcs[1] ?? 0), ...arcs.slice(2)];
  const out: number[] = [];
  for (const sub of subs) {
    const group: number[] = [sub & 0x7f];
    for (let v = Math.floor(sub / 128); v > 0; v = Math.floor(v / 128)) group.unshift(0x80 | (v & 0x7f));
    out.push(...group);
  }
  return Buffer.from(out);
}

export function oid(value: string, tag: number = TAG.Oid): Buffer {
  return tlv(tag, oidContent(value));
}

export function varbind(name: string, value: Buffer): Buffer {
  return sequence(oid(name), value);
}

export interface MessageFields {
  version: number;
  community: Buffer | string;
  pduTag: number;
  requestId: number | bigint;
  errorStatus?: number;
  errorIndex?: number;
  varbinds: Buffer[];
}

/** A v1/v2c message: SEQUENCE { version, community, PDU { id, status, index, varbinds } }. */
export function message(m: MessageFields): Buffer {
  const pdu = tlv(
    m.pduTag,
    Buffer.concat([integer(m.requestId), integer(m.errorStatus ?? 0), integer(m.errorIndex ?? 0), sequence(...m.varbinds)]),
  );
  return sequence(integer(m.version), octets(m.community), pdu);
}

// --- reading --------------------------------------------------------------------------------

interface Element {
  tag: number;
  /** Offset of the content's first octet. */
  start: number;
  /** Offset just past the content. */
  end: number;
}

/** One TLV at `at`, or null when it does not fit inside `limit` (truncated, indefinite, too long). */
function element(buf: Buffer, at: number, limit: number): Element | null {
  if (at + 2 > limit) return null;
  const tag = buf[at];
  let len = buf[at + 1];
  let start = at + 2;
  if (len & 0x80) {
    const count = len & 0x7f;
    if (count === 0 || count > 4 || start + count > limit) return null;
    len = 0;
    for (let i = 0; i < count; i++) len = len * 256 + buf[start + i];
    start += count;
  }
  const end = start + len;
  return end > limit ? null : { tag, start, end };
}

function readInteger(buf: Buffer, e: Element): number {
  let v = 0;
  for (let i = e.start; i < e.end; i++) v = v * 256 + buf[i];
  // Two's complement: the top bit of the first octet is the sign.
  if (e.end > e.start && buf[e.start] & 0x80) v -= 2 ** (8 * (e.end - e.start));
  return v;
}

export function readOid(content: Buffer): string {
  const subs: number[] = [];
  let v = 0;
  for (const b of content) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      subs.push(v);
      v = 0;
    }
  }
  if (subs.length === 0) return '';
  const first = subs[0];
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...subs.slice(1)].join('.');
}

export interface SnmpRequest {
  version: number;
  community: Buffer;
  pduTag: number;
  requestId: number;
  /** GetBulk: non-repeaters and max-repetitions (the error status and index fields on the wire). */
  nonRepeaters: number;
  maxRepetitions: number;
  oids: string[];
}

/** Decodes a v1/v2c request; null for anything else (v3, not SNMP, truncated). */
export function decodeRequest(buf: Buffer): SnmpRequest | null {
  const msg = element(buf, 0, buf.length);
  if (!msg || msg.tag !== TAG.Sequence) return null;
  const version = element(buf, msg.start, msg.end);
  if (!version || version.tag !== TAG.Integer) return null;
  const community = element(buf, version.end, msg.end);
  if (!community || community.tag !== TAG.OctetString) return null;
  const pdu = element(buf, community.end, msg.end);
  if (!pdu || (pdu.tag & 0xe0) !== 0xa0) return null;
  const fields: Element[] = [];
  let at = pdu.start;
  for (let i = 0; i < 3; i++) {
    const f = element(buf, at, pdu.end);
    if (!f || f.tag !== TAG.Integer) return null;
    fields.push(f);
    at = f.end;
  }
  const list = element(buf, at, pdu.end);
  if (!list || list.tag !== TAG.Sequence) return null;
  const oids: string[] = [];
  for (let vbAt = list.start; vbAt < list.end; ) {
    const vb = element(buf, vbAt, list.end);
    if (!vb || vb.tag !== TAG.Sequence) return null;
    const name = element(buf, vb.start, vb.end);
    if (!name || name.tag !== TAG.Oid) return null;
    oids.push(readOid(buf.subarray(name.start, name.end)));
    vbAt = vb.end;
  }
  return {
    version: readInteger(buf, version),
    community: Buffer.from(buf.subarray(community.start, community.end)),
    pduTag: pdu.tag,
    requestId: readInteger(buf, fields[0]),
    nonRepeaters: readInteger(buf, fields[1]),
    maxRepetitions: readInteger(buf, fields[2]),
    oids,
  };
}
