// A thin, defensive wrapper over net-snmp: one session per (host, credential), promise-based GET and
// subtree walk, values converted with `fromVarbind` (types.ts).
//
// Rules this file keeps:
// - No packet leaves for an address outside `allowedRanges` (checked when the session is opened;
//   the target must be an IPv4 literal, never a name to resolve).
// - Retries default to 0: a dead address costs one timeout. Raise them (`session.retries = 1`)
//   only for hosts that already answered.
// - Replies that do not decode never crash the process or stall a request past its timeout.
// - Walks stop at the end of the subtree, at endOfMibView, at an OID that does not increase (a
//   looping agent), at `maxOids`, and on error (what was read so far is kept).
import { createRequire } from 'node:module';
import { inAllowedRanges, parseIPv4 } from '../shared/ranges.js';
import { compareOids, fromVarbind, type OidValues, type SnmpValue } from './types.js';
import type { SnmpSecurityLevel } from '../model/trust.js';

// net-snmp ships no type declarations: the part used here is typed locally.
interface NsVarbind {
  oid: string;
  type: number;
  value: unknown;
}
type NsCallback<T> = (error: (Error & { status?: number }) | null, result: T) => void;
interface NsSession {
  retries: number;
  get(oids: string[], cb: NsCallback<NsVarbind[]>): void;
  getNext(oids: string[], cb: NsCallback<NsVarbind[]>): void;
  getBulk(oids: string[], nonRepeaters: number, maxRepetitions: number, cb: NsCallback<NsVarbind[][]>): void;
  close(): void;
  on(event: string, listener: (...args: unknown[]) => void): void;
  onMsg(buffer: Buffer): void;
  /** SNMPv3: what the agent's discovery Report (and later replies) carried. */
  msgSecurityParameters?: { msgAuthoritativeEngineID?: Buffer };
  dgram: { removeAllListeners(event: string): void; on(event: string, l: (...a: any[]) => void): void };
}
interface NetSnmp {
  Version1: number;
  Version2c: number;
  createSession(target: string, community: string, options: object): NsSession;
  createV3Session(target: string, user: object, options: object): NsSession;
  ObjectType: Record<string, number>;
  ErrorStatus: Record<string, number>;
  SecurityLevel: Record<string, number>;
  AuthProtocols: Record<string, number>;
  PrivProtocols: Record<string, number>;
  RequestFailedError: unknown;
  RequestTimedOutError: unknown;
  ResponseInvalidError: unknown;
}
const snmp = createRequire(import.meta.url)('net-snmp') as NetSnmp;

export type SnmpVersion = 'v1' | 'v2c' | 'v3';

/** What a reply can prove about who sent it (docs/api.md, "Spoofed printers"); a pending move records it (model/trust.ts). */
export type SecurityLevel = SnmpSecurityLevel;

export type SnmpCredential = CommunityCredential | V3Credential;

export interface CommunityCredential {
  version: 'v1' | 'v2c';
  community: string;
}

export interface V3Credential {
  version: 'v3';
  user: string;
  /** Omit (with authKey) for noAuthNoPriv. */
  authProtocol?: 'SHA' | 'MD5';
  authKey?: string;
  /** Needs auth; omit (with privKey) for authNoPriv. DES needs Node's --openssl-legacy-provider. */
  privProtocol?: 'AES' | 'DES';
  privKey?: string;
  /** SNMPv3 context name; real printers use "" (the default). */
  context?: string;
}

export interface SessionOptions {
  /** IPv4 literal. */
  host: string;
  /** UDP port, default 161. */
  port?: number;
  /** Per-request timeout in ms. */
  timeoutMs: number;
  /** Re-sends per request, default 0 (one timeout per dead host). */
  retries?: number;
  /** CIDR list; when non-empty the host must be inside it or the session is refused. */
  allowedRanges?: readonly string[];
}

export type SnmpErrorKind = 'timeout' | 'not-allowed' | 'auth' | 'invalid-response' | 'closed' | 'failed' | 'unsupported';

export class SnmpError extends Error {
  readonly kind: SnmpErrorKind;
  constructor(kind: SnmpErrorKind, message: string) {
    super(message);
    this.name = 'SnmpError';
    this.kind = kind;
  }
}

export interface WalkOptions {
  /** Stop after this many values (default 20,000). */
  maxOids?: number;
}

const DEFAULT_MAX_WALK_OIDS = 20_000;

export function oidInSubtree(root: string, oid: string): boolean {
  return oid.length > root.length && oid.startsWith(root) && oid[root.length] === '.';
}

/** `instanceof` against net-snmp's untyped error classes, without narrowing to never. */
function isA(e: unknown, ctor: unknown): boolean {
  return typeof ctor === 'function' && e instanceof ctor;
}

function normaliseOid(oid: string): string {
  return oid.replace(/^\./, '');
}

function isExceptionType(type: number): boolean {
  return type === snmp.ObjectType.NoSuchObject || type === snmp.ObjectType.NoSuchInstance || type === snmp.ObjectType.EndOfMibView;
}

function describeCredential(c: SnmpCredential): string {
  return c.version === 'v3' ? `v3 user ${c.user}` : `${c.version}`;
}

/**
 * One SNMP session to one host with one credential. Create with `openSession`; always `close()`.
 * `requests` counts the PDUs this session asked for (re-sends excluded).
 */
export class SnmpSession {
  readonly host: string;
  readonly port: number;
  readonly credential: SnmpCredential;
  requests = 0;
  readonly timeoutMs: number;
  private readonly ns: NsSession;
  private closed = false;
  /** Fails each request still waiting: close() settles them at once, never after a timeout. */
  private readonly pending = new Set<(e: SnmpError) => void>();

  constructor(credential: SnmpCredential, options: SessionOptions) {
    const ip = parseIPv4(options.host);
    if (ip === null) throw new SnmpError('not-allowed', `SNMP target "${options.host}" is not an IPv4 address`);
    if (!inAllowedRanges(options.host, options.allowedRanges)) {
      throw new SnmpError('not-allowed', `SNMP target ${options.host} is outside discovery.allowed_ranges`);
    }
    this.host = options.host;
    this.port = options.port ?? 161;
    this.credential = credential;
    this.timeoutMs = Math.max(1, options.timeoutMs);
    const common = {
      port: this.port,
      retries: Math.max(0, options.retries ?? 0),
      timeout: this.timeoutMs,
      backoff: 1,
      transport: 'udp4',
    };
    if (credential.version === 'v3') {
      const user: Record<string, unknown> = { name: credential.user, level: snmp.SecurityLevel.noAuthNoPriv };
      if (credential.authKey) {
        user.level = snmp.SecurityLevel.authNoPriv;
        user.authProtocol = credential.authProtocol === 'MD5' ? snmp.AuthProtocols.md5 : snmp.AuthProtocols.sha;
        user.authKey = credential.authKey;
        if (credential.privKey) {
          user.level = snmp.SecurityLevel.authPriv;
          user.privProtocol = credential.privProtocol === 'DES' ? snmp.PrivProtocols.des : snmp.PrivProtocols.aes;
          user.privKey = credential.privKey;
        }
      }
      this.ns = snmp.createV3Session(this.host, user, { ...common, context: credential.context ?? '' });
    } else {
      this.ns = snmp.createSession(this.host, credential.community, {
        ...common,
        version: credential.version === 'v1' ? snmp.Version1 : snmp.Version2c,
      });
    }
    // An undecodable datagram makes net-snmp emit "error": listen, so it is dropped (the request it
    // might have answered then times out) rather than thrown at the event loop.
    this.ns.on('error', () => {});
    // And anything else thrown while handling a datagram is contained the same way.
    const ns = this.ns;
    ns.dgram.removeAllListeners('message');
    ns.dgram.on('message', (buf: Buffer) => {
      try {
        ns.onMsg(buf);
      } catch {
        /* dropped: a malformed reply is a non-reply */
      }
    });
  }

  get version(): SnmpVersion {
    return this.credential.version;
  }

  get retries(): number {
    return this.ns.retries;
  }

  /** Re-sends per request from now on (e.g. 1 once the host has answered). */
  set retries(n: number) {
    this.ns.retries = Math.max(0, n);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * SNMPv3: the agent's snmpEngineID (hex) learnt from its discovery Report, once it answered;
   * undefined for v1/v2c. Under authNoPriv/authPriv a reply is only accepted when it is
   * authenticated with keys localised to this engine ID, so it identifies the agent that knows the
   * user's secret; without authentication anyone can claim it.
   */
  get engineId(): string | undefined {
    if (this.credential.version !== 'v3') return undefined;
    const id = this.ns.msgSecurityParameters?.msgAuthoritativeEngineID;
    return Buffer.isBuffer(id) && id.length > 0 ? id.toString('hex') : undefined;
  }

  /** How much a reply on this session proves: `v1`, `v2c` or the v3 security level. */
  get securityLevel(): SecurityLevel {
    const c = this.credential;
    if (c.version !== 'v3') return c.version;
    return c.authKey ? (c.privKey ? 'v3 authPriv' : 'v3 authNoPriv') : 'v3 noAuthNoPriv';
  }

  /**
   * Closes the socket; requests in flight fail at once with kind 'closed' (not when their timeout
   * would have fired: shutdown and scan aborts rely on it). Idempotent.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.ns.close();
    } catch {
      /* already closed */
    }
    // net-snmp cancels its requests when the socket's "close" event comes; whatever it would not
    // cancel (or cancels late) is failed here, now.
    for (const fail of [...this.pending]) fail(new SnmpError('closed', `${this.host}: session closed`));
  }

  private mapError(err: unknown): SnmpError {
    if (err instanceof SnmpError) return err;
    const e = err instanceof Error ? err : new Error(String(err));
    if (isA(e, snmp.RequestTimedOutError)) return new SnmpError('timeout', `${this.host}: request timed out`);
    if (this.closed || /forcibly closed/i.test(e.message)) return new SnmpError('closed', `${this.host}: session closed`);
    if (/unsupported/i.test(e.message) && this.credential.version === 'v3' && this.credential.privProtocol === 'DES') {
      return new SnmpError('unsupported', `${this.host}: DES privacy is not available in this Node.js (needs --openssl-legacy-provider)`);
    }
    if (isA(e, snmp.ResponseInvalidError)) {
      const auth = /auth|usm|unknown user|engine|time window|decrypt|digest/i.test(e.message);
      return new SnmpError(auth ? 'auth' : 'invalid-response', `${this.host}: ${e.message}`);
    }
    return new SnmpError('failed', `${this.host} (${describeCredential(this.credential)}): ${e.message}`);
  }

  private call<T>(fn: (cb: NsCallback<T>) => void): Promise<T> {
    if (this.closed) return Promise.reject(new SnmpError('closed', `${this.host}: session closed`));
    this.requests++;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (error: unknown, result?: T) => {
        if (settled) return;
        settled = true;
        clearTimeout(guard);
        this.pending.delete(settle);
        if (error) reject(error);
        else resolve(result as T);
      };
      // Backstop: if net-snmp ever drops a request without calling back (e.g. a reply that throws
      // after the request was unregistered), fail it rather than stall. v3 may need two exchanges
      // (engine discovery, then the request), each with its own timeout and retries.
      const attempts = this.ns.retries + 1;
      const exchanges = this.credential.version === 'v3' ? 2 : 1;
      const guard = setTimeout(
        () => settle(new SnmpError('timeout', `${this.host}: request timed out (no callback)`)),
        this.timeoutMs * attempts * exchanges + 1000,
      );
      this.pending.add(settle);
      try {
        fn((error, result) => settle(error, result));
      } catch (e) {
        settle(e ?? new Error('request failed'));
      }
    });
  }

  /**
   * GETs `oids`. Resolves once the host answered, even if every OID is missing: missing OIDs
   * (noSuchObject/noSuchInstance, or v1 noSuchName) are simply absent from the map. Rejects with
   * SnmpError (kind 'timeout' for no answer). A v1 error naming an OID drops that OID and asks
   * again; tooBig splits the request.
   */
  async get(oids: readonly string[]): Promise<OidValues> {
    const out: OidValues = new Map();
    const state = { answered: false };
    try {
      await this.getInto(oids.map(normaliseOid), out, 0, state);
    } catch (e) {
      // Once the host has answered (e.g. a v1 noSuchName before the retry without that OID), a
      // later loss only makes the result partial: the host is alive.
      if (!state.answered || this.closed) throw e;
    }
    return out;
  }

  private async getInto(oids: string[], out: OidValues, depth: number, state: { answered: boolean }): Promise<void> {
    if (oids.length === 0) return;
    let varbinds: NsVarbind[];
    try {
      varbinds = await this.call<NsVarbind[]>((cb) => this.ns.get(oids, cb));
      state.answered = true;
    } catch (err) {
      const e = err as Error & { status?: number };
      if (!isA(e, snmp.RequestFailedError) || depth > 64) throw this.mapError(e);
      state.answered = true;
      // The host answered with an error status.
      if (e.status === snmp.ErrorStatus.TooBig && oids.length > 1) {
        const mid = Math.ceil(oids.length / 2);
        await this.getInto(oids.slice(0, mid), out, depth + 1, state);
        await this.getInto(oids.slice(mid), out, depth + 1, state);
        return;
      }
      const named = /:\s*([0-9.]+)\s*$/.exec(e.message)?.[1];
      const rest = named ? oids.filter((o) => o !== normaliseOid(named)) : [];
      if (named && rest.length < oids.length) {
        await this.getInto(rest, out, depth + 1, state);
      } else if (oids.length > 1) {
        // Error without a usable index: ask one OID at a time, once.
        for (const o of oids) {
          try {
            await this.getInto([o], out, 65, state);
          } catch (e) {
            if (this.closed || (e instanceof SnmpError && e.kind !== 'failed')) throw e;
          }
        }
      }
      return;
    }
    for (const vb of varbinds ?? []) this.store(vb, out);
  }

  private store(vb: NsVarbind, out: OidValues): boolean {
    if (!vb || typeof vb.oid !== 'string' || isExceptionType(vb.type)) return false;
    let value: SnmpValue | null | undefined;
    try {
      value = fromVarbind(vb);
    } catch {
      value = undefined;
    }
    if (value === null || value === undefined) return false;
    out.set(normaliseOid(vb.oid), value);
    return true;
  }

  /**
   * Reads every value under `root` (GETBULK for v2c/v3, GETNEXT for v1). Errors after the first
   * response keep what was read; an error on the first request rejects.
   */
  async walk(root: string, maxRepetitions = 20, options: WalkOptions = {}): Promise<OidValues> {
    const base = normaliseOid(root);
    const maxOids = options.maxOids ?? DEFAULT_MAX_WALK_OIDS;
    const out: OidValues = new Map();
    let cursor = base;
    let reps = Math.max(1, Math.min(maxRepetitions, 100));
    let first = true;
    for (;;) {
      let batch: NsVarbind[];
      try {
        if (this.credential.version === 'v1') {
          batch = await this.call<NsVarbind[]>((cb) => this.ns.getNext([cursor], cb));
        } else {
          const rows = await this.call<NsVarbind[][]>((cb) => this.ns.getBulk([cursor], 0, reps, cb));
          batch = Array.isArray(rows?.[0]) ? rows[0] : [];
        }
      } catch (err) {
        const e = err as Error & { status?: number };
        if (isA(e, snmp.RequestFailedError)) {
          if (e.status === snmp.ErrorStatus.TooBig && reps > 1) {
            reps = Math.max(1, Math.floor(reps / 2));
            continue;
          }
          // v1 signals the end of the MIB with noSuchName; other statuses end the walk too.
          return out;
        }
        if (first) throw this.mapError(e);
        return out;
      }
      first = false;
      let advanced = false;
      for (const vb of batch ?? []) {
        if (!vb || typeof vb.oid !== 'string') return out;
        const oid = normaliseOid(vb.oid);
        if (vb.type === snmp.ObjectType.EndOfMibView) return out;
        if (!oidInSubtree(base, oid)) return out;
        if (compareOids(oid, cursor) <= 0) return out; // not increasing: a broken or looping agent
        this.store(vb, out);
        cursor = oid;
        advanced = true;
        if (out.size >= maxOids) return out;
      }
      if (!advanced) return out;
    }
  }
}

/** Opens a session (throws SnmpError 'not-allowed' for a target outside allowedRanges). */
export function openSession(credential: SnmpCredential, options: SessionOptions): SnmpSession {
  return new SnmpSession(credential, options);
}
