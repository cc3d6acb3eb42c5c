// A hostile SNMP agent for robustness tests: real UDP sockets on loopback addresses
// that answer every v1/v2c request with something a printer should never send. The mode turns
// with every request, so one scan meets all of them:
//
//   garbage, truncated, length-overrun    bytes that are not (or no longer) BER
//   oversized, many-varbinds,             ~64 KB datagrams: one huge value, thousands of varbinds,
//   huge-counter64                        or a 60 KB Counter64
//   wrong-types, wrong-types-fatal        values of the wrong type: text for counters, negative
//                                         counters, 48-bit integers, 9-byte Counter64s, unknown tags
//   wrong-request-id, wrong-community,    a well-formed answer to someone else
//   wrong-version, wrong-pdu, report-pdu
//   error-status                          tooBig / genErr with error indexes out of range
//   deep-nesting                          ~14,000 nested SEQUENCEs
//   end-of-mib-odd                        endOfMibView with content, first, or before more data
//   walk-endless, walk-loop,              GETNEXT/GETBULK answers that increase forever, repeat the
//   walk-backwards, walk-cycle,           cursor, go backwards, cycle, leave the subtree, or carry
//   walk-escape, huge-oid                 OIDs of thousands of arcs and overflowing arcs
//   flood                                 dozens of datagrams for one request (a valid one among them)
//   late, stale-port                      replies to nobody: after the requester gave up, or to a
//                                         port an earlier request came from
//
// Every datagram goes back to the loopback address that asked (or is not sent at all): the
// responder never sends anywhere else. `stats` counts what was sent.
import dgram from 'node:dgram';
import { NULL, TAG, decodeRequest, encodeLength, integer, message, octets, oid, sequence, tlv, varbind, type SnmpRequest } from './snmp-ber.js';

export interface HostileReply {
  bytes: Buffer;
  /** Send after this long (ms) instead of at once. */
  delayMs?: number;
  /** Send to this port of the requester's address instead of the port the request came from. */
  toPort?: number;
}

/** What a mode may use besides the request. */
export interface ModeContext {
  random(): number;
  /** Source ports of earlier requests (most recent last). */
  earlierPorts: readonly number[];
  /** The source port of this request. */
  currentPort: number;
  /** Datagrams per flood. */
  floodSize: number;
  /** Delay of a late reply (ms): longer than the requester's timeout. */
  lateMs: number;
}

export interface HostileMode {
  name: string;
  build(req: SnmpRequest, ctx: ModeContext): HostileReply[];
}

const UDP_MAX = 65_507; // the largest UDP payload over IPv4

// --- building blocks ---------------------------------------------------------------------------

function answer(req: SnmpRequest, varbinds: Buffer[], over: { requestId?: number; errorStatus?: number; errorIndex?: number; pduTag?: number } = {}): Buffer {
  return message({
    version: req.version,
    community: req.community,
    pduTag: over.pduTag ?? TAG.Response,
    requestId: over.requestId ?? req.requestId,
    errorStatus: over.errorStatus,
    errorIndex: over.errorIndex,
    varbinds,
  });
}

function randomBytes(ctx: ModeContext, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(ctx.random() * 256);
  return b;
}

const pick = <T>(ctx: ModeContext, list: readonly T[]): T => list[Math.floor(ctx.random() * list.length)];

const isWalk = (req: SnmpRequest) => req.pduTag === TAG.GetNextRequest || req.pduTag === TAG.GetBulkRequest;

/** How many varbinds a walk answer carries: GETBULK asks for max-repetitions per OID. */
const walkWidth = (req: SnmpRequest) => (req.pduTag === TAG.GetBulkRequest ? Math.max(1, Math.min(req.maxRepetitions, 50)) : 1);

/**
 * The j-th OID after `cursor` (j >= 1), always greater and always inside the cursor's subtree:
 * children below a shallow cursor, then siblings (so OIDs do not grow without end).
 */
function after(cursor: string, j: number): string {
  const arcs = cursor.split('.');
  if (arcs.length < 14) return `${cursor}.${j}`;
  arcs[arcs.length - 1] = String(Number(arcs[arcs.length - 1]) + j);
  return arcs.join('.');
}

/** Values net-snmp decodes but no printer would send for these OIDs. */
function wrongTypeValues(ctx: ModeContext): Buffer[] {
  return [
    octets('not a number'), // text where a counter is expected
    integer(-200, TAG.Counter32), // a negative Counter32
    integer(2n ** 47n - 1n), // an INTEGER far outside 32 bits
    tlv(TAG.Counter64, Buffer.from([0x01, ...Array(8).fill(0xff)])), // a Counter64 over 2^64
    integer(-1, TAG.TimeTicks),
    integer(0xffffffff, TAG.Gauge32),
    oid('1.3.6.1.4.1.4294967295.999999999'),
    tlv(TAG.IpAddress, Buffer.from([255, 255, 255, 255])),
    NULL,
    Buffer.from([TAG.NoSuchInstance, 0]),
    octets(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x1b, 0x5b, 0x32, 0x4a])), // not UTF-8, control codes
    octets('\u0000'.repeat(64) + 'x'.repeat(8_000)), // NUL padding, then a long text
    octets(randomBytes(ctx, 16), TAG.Opaque),
    tlv(0x01, Buffer.from([0xff])), // BOOLEAN
    tlv(0x03, Buffer.from([0x07, 0xff, 0x80])), // BIT STRING
  ];
}

/** Values net-snmp refuses to decode (the whole datagram is then dropped). */
function fatalValues(): Buffer[] {
  return [
    tlv(0x4f, Buffer.from([1, 2, 3])), // unknown application tag
    Buffer.from([TAG.Integer, 0]), // zero-length INTEGER
    tlv(TAG.IpAddress, Buffer.from([10, 0, 0, 1, 9, 9, 9])), // 7-byte IpAddress
    tlv(TAG.Integer, Buffer.from([0x7f, ...Array(8).fill(0xff)])), // 9-byte INTEGER
    sequence(NULL), // a SEQUENCE as a value
  ];
}

/** `depth` nested SEQUENCEs around a NULL, built from the inside out in one pass. */
export function nestedSequences(depth: number): Buffer {
  const headers: Buffer[] = [];
  let length = NULL.length;
  for (let i = 0; i < depth; i++) {
    const h = Buffer.concat([Buffer.from([TAG.Sequence]), encodeLength(length)]);
    headers.push(h);
    length += h.length;
  }
  return Buffer.concat([...headers.reverse(), NULL]);
}

/** Replaces the outer SEQUENCE's length with one that claims far more than the datagram holds. */
function overrunLength(bytes: Buffer, ctx: ModeContext): Buffer {
  const claim = pick(ctx, [Buffer.from([0x84, 0x7f, 0xff, 0xff, 0xff]), Buffer.from([0x82, 0xff, 0xff]), Buffer.from([0x88, ...Array(8).fill(0xff)])]);
  const inner = bytes[1] & 0x80 ? 2 + (bytes[1] & 0x7f) : 2;
  return Buffer.concat([Buffer.from([TAG.Sequence]), claim, bytes.subarray(inner)]);
}

/** A reply of the request's shape with ordinary text values (what a plain agent might send). */
function plausible(req: SnmpRequest): Buffer {
  if (isWalk(req)) {
    const width = walkWidth(req);
    const cursor = req.oids[0] ?? '1.3';
    return answer(req, Array.from({ length: width }, (_, j) => varbind(after(cursor, j + 1), integer(j))));
  }
  return answer(req, req.oids.map((o) => varbind(o, octets(`hostile ${o}`))));
}

// --- the modes -----------------------------------------------------------------------------------

const garbage: HostileMode = { name: 'garbage', build: (_req, ctx) => [{ bytes: randomBytes(ctx, 1 + Math.floor(ctx.random() * 1400)) }] };

const truncated: HostileMode = {
  name: 'truncated',
  build: (req, ctx) => {
    const full = plausible(req);
    return [{ bytes: full.subarray(0, 1 + Math.floor(ctx.random() * (full.length - 1))) }];
  },
};

/** The outer length, or one value's length (its enclosing lengths kept true), claims too much. */
const lengthOverrun: HostileMode = {
  name: 'length-overrun',
  build: (req, ctx) => {
    if (ctx.random() < 0.5) return [{ bytes: overrunLength(plausible(req), ctx) }];
    const lying = Buffer.concat([Buffer.from([TAG.OctetString, 0x82, 0xff, 0xf0]), Buffer.from('short')]);
    const name = req.oids[0] ?? '1.3';
    return [{ bytes: answer(req, [varbind(isWalk(req) ? after(name, 1) : name, lying), ...plausibleVarbinds(req).slice(1)]) }];
  },
};

/** One value big enough that the datagram is the largest UDP allows. */
const oversized: HostileMode = {
  name: 'oversized',
  build: (req) => {
    const name = req.oids[0] ?? '1.3.6.1.2.1.1.1.0';
    const empty = answer(req, [varbind(name, octets(''))]).length;
    // Five length fields grow from one octet to three with the filler: leave room for them.
    const filler = Buffer.alloc(UDP_MAX - empty - 16, 0x41);
    return [{ bytes: answer(req, [varbind(isWalk(req) ? after(name, 1) : name, octets(filler))]) }];
  },
};

/**
 * A "Counter64" of ~60 KB: net-snmp hands the octets over whatever their length; converting them
 * octet by octet into a bigint is quadratic (see src/snmp/types.ts).
 */
const hugeCounter64: HostileMode = {
  name: 'huge-counter64',
  build: (req) => {
    const name = req.oids[0] ?? '1.3.6.1.2.1.43.10.2.1.4.1.1';
    const value = tlv(TAG.Counter64, Buffer.alloc(60_000, 0xff));
    return [{ bytes: answer(req, [varbind(isWalk(req) ? after(name, 1) : name, value), ...plausibleVarbinds(req).slice(1)]) }];
  },
};

/** Thousands of small varbinds, increasing (a walk would take them all but for its cap). */
const manyVarbinds: HostileMode = {
  name: 'many-varbinds',
  build: (req) => {
    const base = req.oids[0] ?? '1.3.6.1.2.1.43';
    const vbs: Buffer[] = [];
    let size = 0;
    for (let j = 1; size < UDP_MAX - 2_000; j++) {
      const vb = varbind(`${base}.${j}`, integer(j, TAG.Counter32));
      vbs.push(vb);
      size += vb.length;
    }
    return [{ bytes: answer(req, vbs) }];
  },
};

const wrongTypes: HostileMode = {
  name: 'wrong-types',
  build: (req, ctx) => {
    const values = wrongTypeValues(ctx);
    const offset = Math.floor(ctx.random() * values.length);
    if (isWalk(req)) {
      const cursor = req.oids[0] ?? '1.3';
      return [{ bytes: answer(req, Array.from({ length: walkWidth(req) }, (_, j) => varbind(after(cursor, j + 1), values[(offset + j) % values.length]))) }];
    }
    return [{ bytes: answer(req, req.oids.map((o, i) => varbind(o, values[(offset + i) % values.length]))) }];
  },
};

const wrongTypesFatal: HostileMode = {
  name: 'wrong-types-fatal',
  build: (req, ctx) => {
    const bad = pick(ctx, fatalValues());
    return [{ bytes: answer(req, req.oids.map((o, i) => varbind(o, i === 0 ? bad : octets('fine')))) }];
  },
};

const wrongRequestId: HostileMode = {
  name: 'wrong-request-id',
  build: (req, ctx) => [{ bytes: answer(req, plausibleVarbinds(req), { requestId: pick(ctx, [req.requestId + 1, 0, -1, 2 ** 31 - 1]) }) }],
};

function plausibleVarbinds(req: SnmpRequest): Buffer[] {
  return req.oids.map((o) => varbind(o, octets('someone else')));
}

const wrongCommunity: HostileMode = {
  name: 'wrong-community',
  build: (req) => [{ bytes: message({ version: req.version, community: 'hostile', pduTag: TAG.Response, requestId: req.requestId, varbinds: plausibleVarbinds(req) }) }],
};

const wrongVersion: HostileMode = {
  name: 'wrong-version',
  build: (req, ctx) => {
    const version = pick(ctx, [req.version === 0 ? 1 : 0, 3, -1, 2 ** 31 - 1]);
    return [{ bytes: message({ version, community: req.community, pduTag: TAG.Response, requestId: req.requestId, varbinds: plausibleVarbinds(req) }) }];
  },
};

/** A request, a trap or an inform where a response belongs. */
const wrongPdu: HostileMode = {
  name: 'wrong-pdu',
  build: (req, ctx) => [{ bytes: answer(req, plausibleVarbinds(req), { pduTag: pick(ctx, [TAG.GetRequest, TAG.SetRequest, TAG.TrapV2, TAG.InformRequest, TAG.GetBulkRequest, 0xaf]) }) }],
};

/** A Report PDU (SNMPv3's) in a v1/v2c message. */
const reportPdu: HostileMode = {
  name: 'report-pdu',
  build: (req) => [{ bytes: answer(req, [varbind('1.3.6.1.6.3.15.1.1.4.0', integer(1, TAG.Counter32))], { pduTag: TAG.Report }) }],
};

const errorStatus: HostileMode = {
  name: 'error-status',
  build: (req, ctx) => {
    const status = pick(ctx, [1, 1, 2, 5, 18, 99, -3]); // tooBig twice as often: it makes the client split and retry
    const index = pick(ctx, [0, 1, req.oids.length, req.oids.length + 7, -1, 2 ** 31 - 1]);
    return [{ bytes: answer(req, plausibleVarbinds(req), { errorStatus: status, errorIndex: index }) }];
  },
};

const deepNesting: HostileMode = {
  name: 'deep-nesting',
  build: (req, ctx) => {
    const nest = nestedSequences(14_000);
    const bytes = ctx.random() < 0.5 ? answer(req, [nest]) : answer(req, [varbind(req.oids[0] ?? '1.3', nest)]);
    return [{ bytes: bytes.length <= UDP_MAX ? bytes : bytes.subarray(0, UDP_MAX) }];
  },
};

const END = Buffer.from([TAG.EndOfMibView, 0]);

const endOfMibOdd: HostileMode = {
  name: 'end-of-mib-odd',
  build: (req, ctx) => {
    const cursor = req.oids[0] ?? '1.3';
    const variant = Math.floor(ctx.random() * 3);
    if (!isWalk(req)) {
      // endOfMibView answering a GET, some with content octets.
      return [{ bytes: answer(req, req.oids.map((o, i) => varbind(o, i % 2 ? END : tlv(TAG.EndOfMibView, Buffer.from([1, 2, 3]))))) }];
    }
    if (variant === 0) return [{ bytes: answer(req, [varbind(cursor, END), varbind(after(cursor, 1), integer(1))]) }];
    if (variant === 1) return [{ bytes: answer(req, [varbind(after(cursor, 1), integer(1)), varbind(after(cursor, 2), END), varbind(after(cursor, 3), integer(3))]) }];
    return [{ bytes: answer(req, [varbind(after(cursor, 1), tlv(TAG.EndOfMibView, Buffer.from([9, 9, 9, 9])))]) }];
  },
};

/** Increases forever and answers at once: only the client's caps end the walk. */
const walkEndless: HostileMode = {
  name: 'walk-endless',
  build: (req) => {
    if (!isWalk(req)) return [{ bytes: plausible(req) }];
    const cursor = req.oids[0] ?? '1.3';
    return [{ bytes: answer(req, Array.from({ length: walkWidth(req) }, (_, j) => varbind(after(cursor, j + 1), integer(j + 1, TAG.Counter32)))) }];
  },
};

/** Answers with the cursor itself, again and again. */
const walkLoop: HostileMode = {
  name: 'walk-loop',
  build: (req) => {
    const cursor = req.oids[0] ?? '1.3';
    return [{ bytes: answer(req, Array.from({ length: walkWidth(req) }, () => varbind(cursor, integer(7)))) }];
  },
};

const walkBackwards: HostileMode = {
  name: 'walk-backwards',
  build: (req) => {
    const cursor = req.oids[0] ?? '1.3.6';
    const arcs = cursor.split('.');
    const last = Number(arcs[arcs.length - 1]);
    const earlier = last > 0 ? [...arcs.slice(0, -1), String(last - 1)].join('.') : arcs.slice(0, -1).join('.');
    return [{ bytes: answer(req, [varbind(earlier, integer(1)), varbind('1.3.6.1.2.1.1.1.0', octets('back to the start'))]) }];
  },
};

/** Goes up, then comes back to where it started: a loop longer than one step. */
const walkCycle: HostileMode = {
  name: 'walk-cycle',
  build: (req) => {
    const cursor = req.oids[0] ?? '1.3';
    return [{ bytes: answer(req, [1, 2, 3, 1, 2, 3].map((j) => varbind(after(cursor, j), integer(j)))) }];
  },
};

/** Leaves the subtree (its parent, then another MIB) and comes back into it. */
const walkEscape: HostileMode = {
  name: 'walk-escape',
  build: (req) => {
    const cursor = req.oids[0] ?? '1.3.6.1.2';
    const parent = cursor.split('.').slice(0, -1).join('.') || '1';
    return [{ bytes: answer(req, [varbind(`${parent}.99999`, integer(1)), varbind('1.3.6.1.4.1.99999.1', integer(2)), varbind(after(cursor, 1), integer(3))]) }];
  },
};

/** OIDs of thousands of arcs, and arcs too large for 32 bits (10-octet sub-identifiers). */
const hugeOid: HostileMode = {
  name: 'huge-oid',
  build: (req, ctx) => {
    const cursor = req.oids[0] ?? '1.3';
    const long = `${cursor}.${Array(3_000).fill('4294967295').join('.')}`;
    const overflow = Buffer.concat([oid(cursor).subarray(2), Buffer.from([...Array(9).fill(0xff), 0x7f])]);
    const second = tlv(TAG.Oid, overflow);
    const vbs = ctx.random() < 0.5 ? [varbind(long, integer(1))] : [sequence(second, integer(2))];
    return [{ bytes: answer(req, isWalk(req) ? vbs : [...vbs, ...plausibleVarbinds(req).slice(1)]) }];
  },
};

/**
 * Many datagrams for one request: every other immediate mode's output, but under another request
 * id (so the requester drops them and the well-formed answer at the end can still count), then
 * the answer, then duplicates of it.
 */
const flood: HostileMode = {
  name: 'flood',
  build: (req, ctx) => {
    const out: HostileReply[] = [];
    const someoneElse: SnmpRequest = { ...req, requestId: (req.requestId ^ 0x5a5a) + 1 };
    for (let i = 0; i < ctx.floodSize - 3; i++) out.push(...pick(ctx, FLOOD_JUNK).build(someoneElse, ctx));
    // One well-formed answer, then the same again twice (duplicates of an answered request).
    const good = walkEndless.build(req, ctx)[0];
    out.push(good, good, good);
    return out;
  },
};

const late: HostileMode = { name: 'late', build: (req, ctx) => [{ bytes: plausible(req), delayMs: ctx.lateMs }] };

const stalePort: HostileMode = {
  name: 'stale-port',
  build: (req, ctx) => {
    const others = ctx.earlierPorts.filter((p) => p !== ctx.currentPort);
    // No earlier port yet: the reply goes nowhere at all (the request times out all the same).
    return others.length === 0 ? [] : [{ bytes: plausible(req), toPort: pick(ctx, others) }];
  },
};

const FLOOD_JUNK: readonly HostileMode[] = [
  garbage, truncated, lengthOverrun, oversized, manyVarbinds, wrongTypes, wrongTypesFatal, wrongCommunity, wrongVersion,
  wrongPdu, reportPdu, errorStatus, deepNesting, endOfMibOdd, walkLoop, walkBackwards, walkCycle, walkEscape, hugeOid,
];

/**
 * The turn for GET requests: modes that leave a well-formed answer (wrong-types, end-of-mib-odd,
 * flood) come often enough that many probes succeed and the host's walks meet the walk modes.
 */
export const GET_MODES: readonly HostileMode[] = [
  wrongTypes, garbage, flood, truncated, wrongRequestId, endOfMibOdd, oversized, wrongTypes, wrongCommunity,
  lengthOverrun, wrongTypesFatal, flood, wrongVersion, errorStatus, reportPdu, wrongPdu, deepNesting,
  manyVarbinds, late, hugeOid, stalePort, hugeCounter64,
];

/** The turn for GETNEXT/GETBULK requests. */
export const WALK_MODES: readonly HostileMode[] = [
  walkEndless, walkLoop, walkBackwards, walkCycle, walkEscape, endOfMibOdd, flood, hugeOid, manyVarbinds, garbage,
  oversized, wrongTypes, errorStatus, truncated, reportPdu, late, wrongCommunity, deepNesting, stalePort, hugeCounter64,
  lengthOverrun, wrongVersion, wrongPdu, wrongTypesFatal,
];

export const ALL_MODE_NAMES: readonly string[] = [...new Set([...GET_MODES, ...WALK_MODES].map((m) => m.name))].sort();

// --- the responder -------------------------------------------------------------------------------

export interface HostileStats {
  /** Requests received that decoded as v1/v2c. */
  requests: number;
  /** Datagrams sent (each flood datagram counts). */
  replies: number;
  bytes: number;
  /** Replies per mode name. */
  byMode: Map<string, number>;
}

export interface HostileOptions {
  /** 127.x.y.z addresses to answer on (each must be a loopback address). */
  addresses: readonly string[];
  /** UDP port on every address (the simulator's, so that one scan covers both). */
  port: number;
  /** Datagrams per flood (default 40). */
  floodSize?: number;
  /** Delay of late replies, ms (default 3000: past any timeout the tests use). */
  lateMs?: number;
  /** PRNG seed (default 21): a failing run can be repeated. */
  seed?: number;
  /** Called for every request with the mode that answers it (debugging a failure). */
  onRequest?: (mode: string, req: SnmpRequest, address: string) => void;
}

export interface HostileResponder {
  stats: HostileStats;
  addresses: readonly string[];
  port: number;
  stop(): Promise<void>;
}

/** mulberry32: small, seeded, good enough to pick modes and garbage. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function isLoopback(address: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);
}

/** Binds one socket per address and answers every request with the next hostile mode. */
export async function startHostileSnmp(opts: HostileOptions): Promise<HostileResponder> {
  for (const a of opts.addresses) if (!isLoopback(a)) throw new Error(`hostile responder refuses non-loopback address ${a}`);
  const random = prng(opts.seed ?? 21);
  const stats: HostileStats = { requests: 0, replies: 0, bytes: 0, byMode: new Map() };
  const timers = new Set<NodeJS.Timeout>();
  const sockets: dgram.Socket[] = [];
  let stopped = false;

  const listen = (socket: dgram.Socket, index: number) => {
    // Each address starts at another place in the turn: in one scan, where most hosts are asked
    // only a few times, the hosts between them still meet every mode.
    const turn = { get: index * 3, walk: index * 5 };
    const earlierPorts: number[] = [];
    socket.on('error', () => {}); // a send to a port that went away: nothing to do
    socket.on('message', (buf, rinfo) => {
      // Only ever answer loopback peers.
      if (stopped || !isLoopback(rinfo.address)) return;
      const req = decodeRequest(buf);
      if (!req) return;
      stats.requests++;
      const walk = isWalk(req);
      const mode = walk ? WALK_MODES[turn.walk++ % WALK_MODES.length] : GET_MODES[turn.get++ % GET_MODES.length];
      opts.onRequest?.(mode.name, req, socket.address().address);
      const ctx: ModeContext = { random, earlierPorts, currentPort: rinfo.port, floodSize: opts.floodSize ?? 40, lateMs: opts.lateMs ?? 3000 };
      let replies: HostileReply[];
      try {
        replies = mode.build(req, ctx);
      } catch (e) {
        throw new Error(`hostile mode ${mode.name} failed to build: ${(e as Error).message}`);
      }
      earlierPorts.push(rinfo.port);
      if (earlierPorts.length > 16) earlierPorts.shift();
      sendPaced(socket, rinfo.address, rinfo.port, mode.name, replies);
    });
  };

  // Datagrams of one request go out a few per event-loop turn, so that a flood reaches the
  // requester's socket instead of overflowing its receive buffer in one burst.
  const sendPaced = (socket: dgram.Socket, address: string, port: number, mode: string, replies: HostileReply[]) => {
    const send = (r: HostileReply) => {
      if (stopped) return;
      socket.send(r.bytes, r.toPort ?? port, address, (err) => {
        if (err) return;
        stats.replies++;
        stats.bytes += r.bytes.length;
        stats.byMode.set(mode, (stats.byMode.get(mode) ?? 0) + 1);
      });
    };
    const later = (ms: number, fn: () => void) => {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      timers.add(t);
    };
    const now = replies.filter((r) => !r.delayMs);
    for (const r of replies) if (r.delayMs) later(r.delayMs, () => send(r));
    const batch = (from: number) => {
      for (let i = from; i < Math.min(from + 8, now.length); i++) send(now[i]);
      if (from + 8 < now.length) later(1, () => batch(from + 8));
    };
    batch(0);
  };

  try {
    for (const [index, address] of opts.addresses.entries()) {
      const socket = dgram.createSocket('udp4');
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(opts.port, address, () => {
          socket.off('error', reject);
          resolve();
        });
      });
      listen(socket, index);
    }
  } catch (e) {
    for (const s of sockets) s.close();
    throw e;
  }

  return {
    stats,
    addresses: opts.addresses,
    port: opts.port,
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.all(sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
