// Whether to believe what a printer's readings say, kept on its device record as `trust`: a
// sighting of its identity at another address not yet trusted (a pending move), a page counter
// read lower than the stored one (a flagged counter), and what trusted readings showed of the
// printer (the MAC the box saw, its SNMPv3 engine). discovery/move-check.ts decides these; the
// API and alerts read them here.
//
// The contract has no place of its own for them: the API, the upload and the backup show them
// inside `raw_data` (docs/openapi.yaml, Device.raw_data), as agents before this field kept them.
// trustInRawData makes that form, liftTrust reads it back (a backup, an older agent's row).

/** How a reply came: an SNMP security level, or IPP (which proves nothing of who answered). */
export type SnmpSecurityLevel = 'v1' | 'v2c' | 'v3 noAuthNoPriv' | 'v3 authNoPriv' | 'v3 authPriv';

export type Check = 'match' | 'differs' | 'unknown';

/** What one reply from the new address showed. */
export interface Fingerprint {
  ip: string;
  /** The kernel neighbour table's MAC for `ip` (on-link hosts only). */
  neighbour_mac?: string;
  /** The reply's own ifPhysAddress. */
  reported_mac?: string;
  /** SNMPv3: the agent's snmpEngineID (hex). */
  engine_id?: string;
  snmp: SnmpSecurityLevel | 'ipp';
  model?: string;
  manufacturer?: string;
}

/** A sighting of the printer's serial at another address, not yet trusted. */
export interface PendingMove extends Fingerprint {
  first_seen_at: string;
  seen_at: string;
  /** Rounds (scans, polls) it was seen in at this address with this fingerprint. */
  sightings: number;
  /** The saved address answered with this serial when the sighting was checked. */
  saved_address_answers: boolean;
  checks: { neighbour_mac: Check; reported_mac: Check; engine_id: Check; identity: Check };
  reason: string;
}

/** A reading whose page counter was below the last stored one (not stored). */
export interface CounterFlag {
  ip: string;
  seen_at: string;
  page_count: number;
  stored_page_count: number;
  /** The flagged reading's counters: what POST /devices/confirm-counter stores. */
  reading: { page_count: number; color_pages?: number; mono_pages?: number; scan_count?: number };
}

/** The record's trust state. Each part is absent when there is nothing to say. */
// A type, not an interface: the record's field kinds (model/device-fields.ts) take it as a JSON object.
export type TrustState = {
  pending_move?: PendingMove;
  counter_flag?: CounterFlag;
  /** The MAC the box's neighbour table had for the printer at a trusted reading. */
  neighbour_mac?: string;
  /** The printer's SNMPv3 engine ID (hex), seen at a trusted reading. */
  snmp_engine_id?: string;
};

/** The trust state's parts: also their names inside raw_data, where the API shows them. */
export const TRUST_KEYS = ['pending_move', 'counter_flag', 'neighbour_mac', 'snmp_engine_id'] as const;

type WithTrust = { raw_data?: Record<string, unknown>; trust?: TrustState };

/** The pending move, when the record holds a well-formed one. */
export function pendingMoveOf(d: WithTrust): PendingMove | undefined {
  const p = d.trust?.pending_move;
  return p && typeof p === 'object' && typeof p.ip === 'string' ? p : undefined;
}

/** The flagged page counter, when the record holds a well-formed one. */
export function counterFlagOf(d: WithTrust): CounterFlag | undefined {
  const c = d.trust?.counter_flag;
  return c && typeof c === 'object' && typeof c.page_count === 'number' ? c : undefined;
}

/** The printer's identity learned at trusted readings, besides mac_address. */
export function knownIdentity(d: WithTrust): { neighbour_mac?: string; snmp_engine_id?: string } {
  const t = d.trust ?? {};
  return {
    neighbour_mac: typeof t.neighbour_mac === 'string' ? t.neighbour_mac : undefined,
    snmp_engine_id: typeof t.snmp_engine_id === 'string' ? t.snmp_engine_id : undefined,
  };
}

/** `d` with its trust state changed: parts set to undefined are removed (no trust left: none). */
export function withTrust<D extends WithTrust>(d: D, change: Partial<Record<keyof TrustState, unknown>>): D {
  const trust: Record<string, unknown> = { ...(d.trust ?? {}) };
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) delete trust[k];
    else trust[k] = v;
  }
  if (Object.keys(trust).length > 0) return { ...d, trust: trust as TrustState };
  const { trust: _none, ...rest } = d;
  return rest as D;
}

/**
 * The record's raw_data as the API, the upload and the backup show it: with the trust state's
 * parts in it (their place before the record had a field for them). `d` itself when it has none.
 */
export function trustInRawData<D extends WithTrust>(d: D): D {
  if (!d.trust) return d;
  const { trust, ...rest } = d;
  if (Object.keys(trust).length === 0) return rest as D;
  return { ...rest, raw_data: { ...(d.raw_data ?? {}), ...trust } } as D;
}

/**
 * A record whose raw_data still holds trust parts (a backup line, a row changed by hand): them
 * moved to its trust state. They win over the state's own parts: since migration 21 the agent
 * never writes them into raw_data, so whatever put them there wrote after it.
 * `d` itself when raw_data holds none.
 */
export function liftTrust<D extends WithTrust>(d: D): D {
  const raw = d.raw_data;
  if (!raw || !TRUST_KEYS.some((k) => k in raw)) return d;
  const rest: Record<string, unknown> = {};
  const found: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) ((TRUST_KEYS as readonly string[]).includes(k) ? found : rest)[k] = v;
  return { ...d, raw_data: rest, trust: { ...(d.trust ?? {}), ...found } as TrustState };
}
