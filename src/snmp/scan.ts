// The discovery scanner: probes a list of IPv4 addresses with SNMP and reads the raw values of
// every host that answers. Parsing the values into devices is the parsers' job (src/snmp/parse).
//
// Cost model: each address gets ONE identity GET per credential, all credentials at once, with no
// retries, so a dead address costs exactly one timeout whatever the number of credentials and
// OIDs. Only hosts that answered are read further (remaining GETs and subtree walks, retries 1).
// The credential used is the first in list order that answered.
//
// Safety: no packet is sent to an address outside `allowedRanges` (non-empty list); such targets
// are reported in `skipped`. Only the given targets are contacted: addresses read from a printer
// (ARP, routes) are never followed.
import { setMaxListeners } from 'node:events';
import { inAllowedRanges, parseIPv4 } from '../shared/ranges.js';
import { IDENTITY_GET_OIDS, READ_GET_OIDS, WALK_ROOTS } from './oids.js';
import { openSession, SnmpError, type SecurityLevel, type SessionOptions, type SnmpCredential, type SnmpSession } from './client.js';
import type { OidValues } from './types.js';
import { paced } from '../shared/pace.js';
import { errorText } from '../shared/error-text.js';

export const DEFAULT_SCAN_TIMEOUT_MS = 2000;
export const DEFAULT_SCAN_CONCURRENCY = 64;
export const DEFAULT_MAX_REPETITIONS = 20;
/** GET requests carry at most this many OIDs (snmpsim answers at most 64; small PDUs stay under any MTU). */
const GET_CHUNK = 24;
/** UDP sockets a scan holds at once at most (hosts in flight x credentials). */
const MAX_SOCKETS = 512;

export interface ScanProgress {
  scanned: number;
  total: number;
  found: number;
}

/** What to read from a host that answered, decided from its identity values. */
export interface ReadPlan {
  gets: readonly string[];
  walks: readonly string[];
}

export interface ReadOptions {
  /** Credentials in order of preference: v1/v2c communities and v3 users. */
  credentials: readonly SnmpCredential[];
  /** Per-request timeout, ms (settings `snmp_timeout_ms`). Default 2000. */
  timeoutMs?: number;
  /** UDP port, default 161 (tests use the simulator's port). */
  port?: number;
  /** CIDR list; non-empty = no packet outside it (settings `discovery.allowed_ranges`). */
  allowedRanges?: readonly string[];
  /** GETBULK max-repetitions for walks, default 20. */
  maxRepetitions?: number;
  /** The identity GET (one request per credential). Default IDENTITY_GET_OIDS. */
  identityOids?: readonly string[];
  /** Decides the full read from the identity values. Default: READ_GET_OIDS + WALK_ROOTS. */
  planRead?: (identity: OidValues, address: string) => ReadPlan;
  /** Time allowed for reading one host after it answered (ms); then it is cut short (partial). */
  hostBudgetMs?: number;
  /** Values per walk at most (default 5000). */
  maxOidsPerWalk?: number;
  /** Aborts the read: sessions are closed at once. */
  signal?: AbortSignal;
  /** Called when a credential's probe failed for another reason than silence (v3 auth, DES unavailable...). */
  onProbeError?: (address: string, credentialIndex: number, error: SnmpError) => void;
  /** Test hook: opens sessions (default client.openSession). */
  openSession?: (credential: SnmpCredential, options: SessionOptions) => SnmpSession;
}

export interface ScanOptions extends ReadOptions {
  /** Addresses to probe (IPv4 literals, e.g. from parseRangesText / localSubnetTargets). */
  targets: readonly string[];
  /** Hosts probed at once (settings `discover_concurrency`). Default 64. */
  concurrency?: number;
  /** Called at start and after every address. */
  onProgress?: (p: ScanProgress) => void;
  /** Called as soon as a host has been read (before the scan ends). */
  onHost?: (host: HostReadResult) => void;
  /** Called when an address's identity probe is about to be sent (work beside it can start). */
  onStart?: (address: string) => void;
  /** Called once per address that was probed, after onHost: whether it answered. */
  onScanned?: (address: string, answered: boolean) => void;
}

export interface HostReadResult {
  address: string;
  /** Index into `credentials` of the credential that answered. */
  credentialIndex: number;
  credential: SnmpCredential;
  /** What the answering credential proves about the sender (v1/v2c: nothing). */
  securityLevel: SecurityLevel;
  /** SNMPv3 only: the agent's snmpEngineID (hex), as its discovery Report gave it. */
  engineId?: string;
  /** Identity GETs plus the full read, keyed by OID without leading dot. */
  values: OidValues;
  /** True when the read was cut short (host budget, timeout mid-read, abort). */
  partial: boolean;
  /** Problems met after the host answered (e.g. a walk that timed out). */
  errors: string[];
  /** SNMP requests sent to this host (all credentials). */
  requests: number;
  durationMs: number;
}

export interface ScanResult {
  hosts: HostReadResult[];
  total: number;
  scanned: number;
  /** Targets refused: outside allowedRanges or not an IPv4 address. Nothing was sent to them. */
  skipped: string[];
  aborted: boolean;
  durationMs: number;
  /** SNMP requests sent during the scan (re-sends not counted). */
  requests: number;
}

function defaultPlan(): ReadPlan {
  return { gets: READ_GET_OIDS, walks: WALK_ROOTS };
}

function errText(e: unknown): string {
  return errorText(e);
}

/**
 * Probes one address with every credential at once (one GET each, no retries) and, when one
 * answered, reads the host. Resolves null when nothing answered (or on abort before an answer).
 * Usable on its own by the collector to poll a known device.
 */
export function readHost(address: string, options: ReadOptions): Promise<HostReadResult | null> {
  return readHostCounted(address, options, { requests: 0 });
}

async function readHostCounted(address: string, options: ReadOptions, stats: { requests: number }): Promise<HostReadResult | null> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_SCAN_TIMEOUT_MS;
  const open = options.openSession ?? openSession;
  const identityOids = options.identityOids ?? IDENTITY_GET_OIDS;
  const signal = options.signal;
  if (signal?.aborted) return null;
  if (parseIPv4(address) === null || !inAllowedRanges(address, options.allowedRanges)) {
    throw new SnmpError('not-allowed', `SNMP target ${address} is outside discovery.allowed_ranges`);
  }

  const sessions: SnmpSession[] = [];
  const closeAll = () => sessions.forEach((s) => s.close());
  signal?.addEventListener('abort', closeAll, { once: true });
  try {
    for (const cred of options.credentials) {
      sessions.push(
        open(cred, { host: address, port: options.port, timeoutMs, retries: 0, allowedRanges: options.allowedRanges }),
      );
    }
    const probes = sessions.map((s, i) =>
      s.get(identityOids).then(
        (v) => v,
        (e: unknown) => {
          // Timeouts are the normal answer of an empty address or a wrong community; other
          // failures (v3 authentication, DES unavailable, undecodable replies) are worth a log line.
          if (e instanceof SnmpError && e.kind !== 'timeout' && e.kind !== 'closed') {
            try {
              options.onProbeError?.(address, i, e);
            } catch {
              /* listener errors ignored */
            }
          }
          return null;
        },
      ),
    );
    // Prefer the first credential in list order that answered. All probes run at once, so waiting
    // on them in order costs no more than the slowest single timeout.
    let chosen = -1;
    let identity: OidValues | null = null;
    for (let i = 0; i < probes.length; i++) {
      identity = await probes[i];
      if (identity) {
        chosen = i;
        break;
      }
    }
    // Close the other credentials' sessions (cancels probes still waiting).
    sessions.forEach((s, i) => i !== chosen && s.close());
    if (chosen < 0 || !identity || signal?.aborted) return null;

    const session = sessions[chosen];
    session.retries = 1; // it answered: a lost datagram should not lose data
    const values: OidValues = new Map(identity);
    const errors: string[] = [];
    let partial = false;
    const budget = options.hostBudgetMs ?? Math.max(30_000, timeoutMs * 15);
    const budgetTimer = setTimeout(() => {
      partial = true;
      errors.push(`read cut short after ${budget} ms`);
      session.close();
    }, budget);
    try {
      let plan: ReadPlan;
      try {
        plan = (options.planRead ?? defaultPlan)(identity, address);
      } catch (e) {
        errors.push(`read plan: ${errText(e)}; default plan used`);
        plan = defaultPlan();
      }
      const gets = [...new Set(plan.gets)].filter((o) => !values.has(o));
      const steps: { what: string; run: () => Promise<OidValues> }[] = [];
      for (let i = 0; i < gets.length; i += GET_CHUNK) {
        const chunk = gets.slice(i, i + GET_CHUNK);
        steps.push({ what: 'GET', run: () => session.get(chunk) });
      }
      for (const root of plan.walks) {
        steps.push({
          what: `walk ${root}`,
          run: () => session.walk(root, options.maxRepetitions ?? DEFAULT_MAX_REPETITIONS, { maxOids: options.maxOidsPerWalk ?? 5000 }),
        });
      }
      for (const step of steps) {
        if (session.isClosed) {
          partial = true;
          break;
        }
        try {
          for (const [k, v] of await step.run()) values.set(k, v);
        } catch (e) {
          partial = true;
          if (session.isClosed) break;
          errors.push(`${step.what}: ${errText(e)}`);
          // A host that stopped answering mid-read: do not spend a timeout per remaining step.
          if (e instanceof SnmpError && e.kind === 'timeout') break;
        }
      }
    } finally {
      clearTimeout(budgetTimer);
    }
    if (signal?.aborted) partial = true;
    return {
      address,
      credentialIndex: chosen,
      credential: options.credentials[chosen],
      securityLevel: session.securityLevel,
      ...(session.engineId ? { engineId: session.engineId } : {}),
      values,
      partial,
      errors,
      requests: sessions.reduce((n, s) => n + s.requests, 0),
      durationMs: Date.now() - started,
    };
  } finally {
    signal?.removeEventListener('abort', closeAll);
    stats.requests += sessions.reduce((n, s) => n + s.requests, 0);
    closeAll();
  }
}

/**
 * Scans `targets` with a pool of `concurrency` workers. Never rejects for a host's failure; on
 * abort it resolves early with `aborted: true` and the hosts read so far.
 */
export async function scan(options: ScanOptions): Promise<ScanResult> {
  // Each host being read holds one abort listener: up to `concurrency` at once, by design.
  if (options.signal) setMaxListeners((options.concurrency ?? DEFAULT_SCAN_CONCURRENCY) + 10, options.signal);
  const started = Date.now();
  const stats = { requests: 0 };
  const skipped: string[] = [];
  const targets: string[] = [];
  const seen = new Set<string>();
  for (const t of options.targets) {
    if (seen.has(t)) continue;
    seen.add(t);
    if (parseIPv4(t) === null || !inAllowedRanges(t, options.allowedRanges)) skipped.push(t);
    else targets.push(t);
  }
  const total = targets.length;
  const hosts: HostReadResult[] = [];
  let scanned = 0;
  const progress = () => {
    try {
      options.onProgress?.({ scanned, total, found: hosts.length });
    } catch {
      /* a listener's error does not stop the scan */
    }
  };
  progress();
  if (options.credentials.length === 0) {
    return { hosts, total, scanned, skipped, aborted: false, durationMs: Date.now() - started, requests: 0 };
  }

  // Each host in flight holds one UDP socket per credential: keep the sockets bounded too.
  const bySockets = Math.max(1, Math.floor(MAX_SOCKETS / Math.max(1, options.credentials.length)));
  const concurrency = Math.max(1, Math.min(options.concurrency ?? DEFAULT_SCAN_CONCURRENCY, 1024, bySockets));
  let next = 0;
  const worker = async () => {
    while (!options.signal?.aborted) {
      const i = next++;
      if (i >= targets.length) return;
      let host: HostReadResult | null = null;
      try {
        await paced();
        try {
          options.onStart?.(targets[i]);
        } catch {
          /* ignore listener errors */
        }
        host = await readHostCounted(targets[i], options, stats);
      } catch {
        host = null; // one host's failure never ends the scan
      }
      scanned++;
      if (host && !options.signal?.aborted) {
        hosts.push(host);
        try {
          options.onHost?.(host);
        } catch {
          /* ignore listener errors */
        }
      }
      try {
        options.onScanned?.(targets[i], host !== null);
      } catch {
        /* ignore listener errors */
      }
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, targets.length)) }, worker));
  hosts.sort((a, b) => parseIPv4(a.address)! - parseIPv4(b.address)!);
  return {
    hosts,
    total,
    scanned,
    skipped,
    aborted: options.signal?.aborted ?? false,
    durationMs: Date.now() - started,
    requests: stats.requests,
  };
}
