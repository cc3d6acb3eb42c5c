// Printers that announce themselves by WS-Discovery (SOAP-over-UDP on 239.255.255.250:3702, the
// 2005/04 version Windows and printers speak, and 1.1): a Probe for wprt:PrintDeviceType when
// listening starts (and every requeryMs), then ProbeMatches, Hello and Bye. The address read is
// the IPv4 host of the device's XAddrs (its WSD metadata endpoint, http://<ip>:<port>/...): the
// printer is then read by IPP and SNMP like an mDNS one (announced.ts), under the same safety
// rules. The EndpointReference (urn:uuid:...) ties a Bye to the address its Hello gave.
//
// Everything here comes from the LAN: datagrams are bounded before parsing and charged to their
// sender first (source-guard.ts: a rate per source address, over it dropped unparsed), the XML
// reader expands no entities and nests at most 32 deep, strings are bounded, and the endpoints
// remembered (per source and in total), the message ids remembered and the announcements per
// endpoint are all capped; what a flood made the listener drop is in status().
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { randomUUID } from 'node:crypto';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Logger } from '../log/logger.js';
import { parseIPv4 } from '../shared/ranges.js';
import type { AnnouncedPrinter } from './announced-printer.js';
import { ownIPv4Addresses, queryEachInterface, type QueryRound } from './multicast.js';
import { SourceGuard, type GuardLimits, type GuardStatus } from './source-guard.js';
import { errorText } from '../shared/error-text.js';

export const WSD_GROUP = '239.255.255.250';
export const WSD_PORT = 3702;
/** WS-Discovery's printer type (Microsoft's WSD print service, wprt:PrintDeviceType). */
export const PRINT_NS = 'http://schemas.microsoft.com/windows/2006/08/wdp/print';
const DISCOVERY_NS = ['http://schemas.xmlsoap.org/ws/2005/04/discovery', 'http://docs.oasis-open.org/ws-dd/ns/discovery/2009/01'];
/** Larger datagrams are dropped unparsed (a printer's Hello or ProbeMatches is 1 to 4 KiB). */
export const MAX_WSD_DATAGRAM = 32 * 1024;
const MAX_TEXT = 2048;
const MAX_XADDRS = 8;
const MAX_TYPES = 16;

export interface WsdMessage {
  kind: 'hello' | 'bye' | 'probe-match';
  /** The EndpointReference's Address (e.g. "urn:uuid:..."), the device's stable identity. */
  endpoint: string;
  /** The uuid of a urn:uuid endpoint, lower case. */
  uuid?: string;
  /** Types as `{namespace}local` (a prefix that is not declared keeps its prefix: `pfx:local`). */
  types: string[];
  /** Types holds wprt:PrintDeviceType. */
  printer: boolean;
  /** XAddrs' http(s) URLs. */
  xaddrs: string[];
  /** The first XAddr whose host is an IPv4 address: the address to read. */
  address?: string;
  messageId?: string;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  maxNestedTags: 32,
});

type Node = Record<string, unknown>;
const local = (name: string) => name.slice(name.indexOf(':') + 1);
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

/** The namespace declarations in scope at `node`, given its parent's. */
function scope(node: Node, parent: Map<string, string>): Map<string, string> {
  let out = parent;
  for (const [k, v] of Object.entries(node)) {
    if (typeof v !== 'string' || (k !== '@_xmlns' && !k.startsWith('@_xmlns:'))) continue;
    if (out === parent) out = new Map(parent);
    out.set(k === '@_xmlns' ? '' : k.slice('@_xmlns:'.length), v);
  }
  return out;
}

/** The children named `name` (any prefix) in namespace `ns` (when given), with their scopes. */
function childrenOf(node: Node, ns: Map<string, string>, name: string, uris?: string[]): { node: unknown; ns: Map<string, string> }[] {
  const out: { node: unknown; ns: Map<string, string> }[] = [];
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith('@_') || k === '#text' || local(k) !== name) continue;
    const prefix = k.includes(':') ? k.slice(0, k.indexOf(':')) : '';
    for (const item of asList(v)) {
      const inner = isNode(item) ? scope(item, ns) : ns;
      if (uris && !uris.includes(inner.get(prefix) ?? '')) continue;
      out.push({ node: item, ns: inner });
    }
  }
  return out;
}

function textOf(v: unknown): string | undefined {
  const t = typeof v === 'string' ? v : isNode(v) && typeof v['#text'] === 'string' ? v['#text'] : undefined;
  const clean = t?.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return clean ? clean.slice(0, MAX_TEXT) : undefined;
}

function textChild(node: Node, ns: Map<string, string>, name: string, uris?: string[]): string | undefined {
  return textOf(childrenOf(node, ns, name, uris)[0]?.node);
}

/** An IPv4 literal host of an http(s) URL, else undefined (names are never resolved). */
export function ipv4Host(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return parseIPv4(u.hostname) !== null ? u.hostname : undefined;
  } catch {
    return undefined;
  }
}

const UUID = /^urn:uuid:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

function messageOf(kind: WsdMessage['kind'], node: Node, ns: Map<string, string>, messageId: string | undefined): WsdMessage | undefined {
  const epr = childrenOf(node, ns, 'EndpointReference')[0];
  const endpoint = isNode(epr?.node) ? textChild(epr.node, epr.ns, 'Address') : undefined;
  if (!endpoint) return undefined;
  // QNames resolve in the scope of the Types element itself (a printer may declare its prefix there).
  const typesEl = childrenOf(node, ns, 'Types')[0];
  const typesNs = typesEl?.ns ?? ns;
  const types = (textOf(typesEl?.node) ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, MAX_TYPES)
    .map((q) => {
      const i = q.indexOf(':');
      const uri = typesNs.get(i < 0 ? '' : q.slice(0, i));
      return uri ? `{${uri}}${q.slice(i + 1)}` : q;
    });
  const xaddrs = (textChild(node, ns, 'XAddrs') ?? '')
    .split(/\s+/)
    .filter((u) => /^https?:\/\//i.test(u))
    .slice(0, MAX_XADDRS);
  const address = xaddrs.map(ipv4Host).find(Boolean);
  const uuid = UUID.exec(endpoint)?.[1]?.toLowerCase();
  return {
    kind,
    endpoint,
    ...(uuid ? { uuid } : {}),
    types,
    printer: types.includes(`{${PRINT_NS}}PrintDeviceType`),
    xaddrs,
    ...(address ? { address } : {}),
    ...(messageId ? { messageId } : {}),
  };
}

/**
 * The Hello, Bye and ProbeMatch(es) in one SOAP datagram; [] for anything else (a Probe, another
 * protocol, junk, a datagram over MAX_WSD_DATAGRAM). Never throws.
 */
export function parseWsdMessage(datagram: Buffer | string): WsdMessage[] {
  if (Buffer.byteLength(datagram) > MAX_WSD_DATAGRAM) return [];
  const xml = typeof datagram === 'string' ? datagram : datagram.toString('utf8');
  let doc: unknown;
  try {
    if (XMLValidator.validate(xml) !== true) return [];
    doc = parser.parse(xml);
  } catch {
    return [];
  }
  if (!isNode(doc)) return [];
  const root = new Map<string, string>();
  const env = childrenOf(doc, root, 'Envelope')[0];
  if (!env || !isNode(env.node)) return [];
  const header = childrenOf(env.node, env.ns, 'Header')[0];
  const messageId = header && isNode(header.node) ? textChild(header.node, header.ns, 'MessageID') : undefined;
  const body = childrenOf(env.node, env.ns, 'Body')[0];
  if (!body || !isNode(body.node)) return [];
  const out: WsdMessage[] = [];
  const add = (m: WsdMessage | undefined) => m && out.length < 16 && out.push(m);
  for (const h of childrenOf(body.node, body.ns, 'Hello', DISCOVERY_NS)) if (isNode(h.node)) add(messageOf('hello', h.node, h.ns, messageId));
  for (const b of childrenOf(body.node, body.ns, 'Bye', DISCOVERY_NS)) if (isNode(b.node)) add(messageOf('bye', b.node, b.ns, messageId));
  for (const ms of childrenOf(body.node, body.ns, 'ProbeMatches', DISCOVERY_NS)) {
    if (!isNode(ms.node)) continue;
    for (const m of childrenOf(ms.node, ms.ns, 'ProbeMatch', DISCOVERY_NS)) if (isNode(m.node)) add(messageOf('probe-match', m.node, m.ns, messageId));
  }
  return out;
}

/** A Probe for printers (WS-Discovery 2005/04, as Windows sends it). */
export function probeMessage(messageId = `urn:uuid:${randomUUID()}`): string {
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" ' +
    `xmlns:wsd="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:wprt="${PRINT_NS}">` +
    '<soap:Header><wsa:To>urn:schemas-xmlsoap-org:ws:2005:04:discovery</wsa:To>' +
    '<wsa:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</wsa:Action>' +
    `<wsa:MessageID>${messageId}</wsa:MessageID></soap:Header>` +
    '<soap:Body><wsd:Probe><wsd:Types>wprt:PrintDeviceType</wsd:Types></wsd:Probe></soap:Body></soap:Envelope>'
  );
}

export interface WsdListenerOptions {
  log: Logger;
  onAnnounce(p: AnnouncedPrinter): void;
  /** A printer's Bye, at the address its Hello or ProbeMatch gave. */
  onGoodbye(p: { address: string; name: string }): void;
  /** Probes are repeated this often (and interfaces that appeared since are joined). */
  requeryMs?: number;
  /** The same endpoint at the same address is announced again only after this (a Hello is sent twice or more). */
  repeatMs?: number;
  limits?: Partial<GuardLimits>;
  /** The guard's clock (tests). */
  now?: () => number;
  /** UDP port listened on (tests; WS-Discovery is 3702). */
  port?: number;
}

/**
 * A printer sends a Hello two or three times when it starts, one ProbeMatch per Probe, a Bye when
 * it stops: 20 datagrams a second from one address is far above that, and a Windows PC's Probes
 * (which reach the same socket) stay under it. An endpoint not heard of for an hour (four Probe
 * rounds unanswered) is forgotten; 32 per address covers a print server's devices.
 */
export const WSD_LIMITS: GuardLimits = { packetsPerSecond: 20, maxSources: 4096, maxEndpointsPerSource: 32, maxEndpoints: 1024, endpointTtlMs: 60 * 60_000 };
const MAX_MESSAGE_IDS = 256;

export class WsdListener {
  private socket?: Socket;
  private readonly joined = new Set<string>();
  private requery?: NodeJS.Timeout;
  private rounds: QueryRound[] = [];
  /** endpoint -> the address it was last announced at (and when: guard.heardAt), per source and in total capped. */
  private readonly guard: SourceGuard<string>;
  private readonly messageIds = new Set<string>();

  constructor(private readonly opts: WsdListenerOptions) {
    this.guard = new SourceGuard({ limits: { ...WSD_LIMITS, ...opts.limits }, log: opts.log, what: 'WS-Discovery', ...(opts.now ? { now: opts.now } : {}) });
  }

  /** What a flood made the listener drop, and the endpoints it remembers (GET /discover/status). */
  status(): GuardStatus {
    return this.guard.status();
  }

  get running(): boolean {
    return this.socket !== undefined;
  }

  start(): void {
    if (this.socket) return;
    const { log } = this.opts;
    const s = createSocket({ type: 'udp4', reuseAddr: true });
    this.socket = s;
    s.on('error', (err) => log.warn({ err: err.message }, 'WS-Discovery: socket error'));
    s.on('message', (msg, from) => {
      if (msg.length <= MAX_WSD_DATAGRAM) this.received(msg, from);
    });
    s.bind(this.opts.port ?? WSD_PORT, () => {
      if (this.socket !== s) return;
      this.join();
      this.probe();
    });
    this.requery = setInterval(() => {
      this.join();
      this.probe();
    }, this.opts.requeryMs ?? 15 * 60_000);
    this.requery.unref();
    log.info({ group: `${WSD_GROUP}:${WSD_PORT}` }, 'WS-Discovery: listening for printers');
  }

  stop(): void {
    if (!this.socket) return;
    clearInterval(this.requery);
    for (const r of this.rounds.splice(0)) r.close();
    this.socket.close();
    this.socket = undefined;
    this.joined.clear();
    this.guard.clear();
    this.messageIds.clear();
    this.opts.log.info('WS-Discovery: stopped listening');
  }

  /** Joins the group on every own interface not joined yet. */
  private join(): void {
    for (const address of ownIPv4Addresses()) {
      if (this.joined.has(address)) continue;
      try {
        this.socket?.addMembership(WSD_GROUP, address);
        this.joined.add(address);
      } catch (err) {
        this.opts.log.warn({ err: errorText(err), interface: address }, 'WS-Discovery: could not join the group');
      }
    }
  }

  /** Sends a Probe for printers; ProbeMatches come back to the socket that sent it. */
  probe(): void {
    if (!this.socket) return;
    const round = queryEachInterface({
      payload: Buffer.from(probeMessage()),
      group: WSD_GROUP,
      port: WSD_PORT,
      lingerMs: 10_000,
      maxBytes: MAX_WSD_DATAGRAM,
      log: this.opts.log,
      what: 'WS-Discovery Probe',
      onMessage: (msg, from) => this.received(msg, from),
    });
    // At most two rounds listening at once: the oldest stops first.
    this.rounds.push(round);
    while (this.rounds.length > 2) this.rounds.shift()!.close();
    this.opts.log.debug('WS-Discovery: Probe sent');
  }

  /** A datagram from the LAN: charged to its sender before it is parsed. */
  received(msg: Buffer, from: Pick<RemoteInfo, 'address'>): void {
    if (!this.guard.allow(from.address)) return;
    for (const m of parseWsdMessage(msg)) this.handle(m, from.address);
  }

  private handle(m: WsdMessage, source: string): void {
    const { log } = this.opts;
    // SOAP-over-UDP repeats a message with the same MessageID: one is enough.
    if (m.messageId && m.kind !== 'probe-match') {
      if (this.messageIds.has(`${m.kind} ${m.messageId}`)) return;
      this.messageIds.add(`${m.kind} ${m.messageId}`);
      if (this.messageIds.size > MAX_MESSAGE_IDS) this.messageIds.delete(this.messageIds.values().next().value!);
    }
    if (m.kind === 'bye') {
      const address = this.guard.forget(m.endpoint);
      if (address !== undefined) this.opts.onGoodbye({ address, name: m.endpoint });
      return;
    }
    if (!m.printer) return;
    if (!m.address) {
      log.debug({ endpoint: m.endpoint, xaddrs: m.xaddrs }, 'WS-Discovery: printer announced without an IPv4 address, not read');
      return;
    }
    const now = (this.opts.now ?? Date.now)();
    const heardAt = this.guard.heardAt(m.endpoint);
    if (heardAt !== undefined && this.guard.get(m.endpoint) === m.address && now - heardAt < (this.opts.repeatMs ?? 10_000)) return;
    // Over the caps (per source, in total) a new endpoint is dropped and counted, not read.
    if (!this.guard.remember(m.endpoint, source, m.address)) return;
    const what = m.kind === 'hello' ? 'Hello' : 'ProbeMatch';
    log.debug({ endpoint: m.endpoint, ip: m.address }, `WS-Discovery: ${what} of a printer`);
    this.opts.onAnnounce({
      address: m.address,
      name: m.endpoint,
      services: [],
      txt: m.uuid ? { uuid: m.uuid } : {},
      method: 'wsd',
      seen: [`wsd: ${what} of ${m.endpoint}, wprt:PrintDeviceType at ${m.xaddrs.find((x) => ipv4Host(x) === m.address)}`],
    });
  }
}
