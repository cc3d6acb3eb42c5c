// A saved printer's identity answering from another address: is it the printer, renumbered (a DHCP
// lease renewed after a power cut), or a host claiming to be it?
//
// SNMP v1/v2c and IPP replies carry nothing that proves who sent them: any host can answer with
// any serial, printer-uuid, model, MAC (ifPhysAddress) and counters. What the box can check, and
// what each is worth:
// - the neighbour table's MAC for the new address (what the box saw on the wire: on-link hosts
//   only) against the printer's known MAC: a host must take the printer's MAC to pass;
// - SNMPv3 with authentication: the snmpEngineID, since an authenticated reply needs the user's
//   keys localised to that engine;
// - the reply's own ifPhysAddress, model and manufacturer: a mismatch is a warning, a match
//   proves nothing (a spoofer copies them);
// - whether the saved address still answers as the printer.
// The record follows its printer by itself, at the first sighting, when nothing differs, the MAC
// the box sees (or an authenticated engine ID) matches, and the saved address no longer answers
// as the printer (silent, or another device took the address). Everything else is a pending
// move (the record's trust.pending_move, with a status line) that a person confirms (POST
// /devices/confirm-move): two live addresses claiming one printer, a MAC or engine that differs,
// or a sighting with nothing the box could check (an off-link host, where any host could claim
// any serial). docs/api.md, "Discovery", states the rule.
import type { Device } from '../model/device.js';
import { formatTime } from '../model/time.js';
import { counterFlagOf, knownIdentity, pendingMoveOf, withTrust, type Check, type Fingerprint, type PendingMove, type TrustState } from '../model/trust.js';
import { normalMac } from './neighbours.js';
import { isPresenceLine } from './status-lines.js';

export type { Check, CounterFlag, Fingerprint, PendingMove } from '../model/trust.js';
export { counterFlagOf, pendingMoveOf } from '../model/trust.js';

const AUTHENTICATED: readonly string[] = ['v3 authNoPriv', 'v3 authPriv'];

export const PENDING_MOVE_NOTE = 'address move pending';
export const COUNTER_NOTE = 'page counter went down';

const same = (a: string | undefined, b: string | undefined): Check => (!a || !b ? 'unknown' : a === b ? 'match' : 'differs');
const word = (s: string | undefined) => s?.trim().toLowerCase() || undefined;

export function checkFingerprint(d: Device, fp: Fingerprint): PendingMove['checks'] {
  const k = knownIdentity(d);
  const printerMac = normalMac(d.mac_address);
  const ids = [same(word(d.model), word(fp.model)), same(word(d.manufacturer), word(fp.manufacturer))];
  return {
    neighbour_mac: same(k.neighbour_mac ?? printerMac, normalMac(fp.neighbour_mac)),
    reported_mac: same(printerMac, normalMac(fp.reported_mac)),
    // A printer that answered SNMPv3 before does not stop speaking it: a reply without is a downgrade.
    engine_id: k.snmp_engine_id && !fp.engine_id ? 'differs' : same(k.snmp_engine_id, fp.engine_id),
    identity: ids.includes('differs') ? 'differs' : ids.includes('match') ? 'match' : 'unknown',
  };
}

/** The same host as last time: every part of the fingerprint equal. */
function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return (['ip', 'neighbour_mac', 'reported_mac', 'engine_id', 'snmp', 'model', 'manufacturer'] as const).every((k) => (a[k] ?? '') === (b[k] ?? ''));
}

function reasonOf(d: Device, fp: Fingerprint, checks: PendingMove['checks'], savedAnswers: boolean): string {
  const parts = [`a reply with this serial came from ${fp.ip}, not the saved address ${d.ip}`];
  if (savedAnswers) parts.push(`the saved address still answers with this serial (two live addresses claim one printer)`);
  const k = knownIdentity(d);
  if (checks.neighbour_mac === 'differs') parts.push(`the box sees MAC ${fp.neighbour_mac} at ${fp.ip}, the printer's is ${k.neighbour_mac ?? normalMac(d.mac_address)}`);
  if (checks.reported_mac === 'differs') parts.push(`the reply reports MAC ${normalMac(fp.reported_mac)}, the printer's is ${normalMac(d.mac_address)}`);
  if (checks.engine_id === 'differs') parts.push(fp.engine_id ? `SNMPv3 engine ID ${fp.engine_id} differs from the printer's ${k.snmp_engine_id}` : `the printer answered SNMPv3 (engine ID ${k.snmp_engine_id}), this reply did not`);
  if (checks.identity === 'differs') parts.push(`it says ${[fp.manufacturer, fp.model].filter(Boolean).join(' ')}, the printer is ${[d.manufacturer, d.model].filter(Boolean).join(' ')}`);
  if (!proven(fp, checks)) {
    if (!AUTHENTICATED.includes(fp.snmp)) parts.push(`${fp.snmp === 'ipp' ? 'IPP' : `SNMP ${fp.snmp}`} does not prove who sent the reply`);
    if (checks.neighbour_mac === 'unknown') parts.push('no MAC or engine ID the box could check');
  }
  return parts.join('; ');
}

/** The box itself saw the printer's MAC at the new address, or an authenticated engine ID matches. */
function proven(fp: Fingerprint, checks: PendingMove['checks']): boolean {
  return checks.neighbour_mac === 'match' || (checks.engine_id === 'match' && AUTHENTICATED.includes(fp.snmp));
}

export type Decision = { move: true; checks: PendingMove['checks'] } | { move: false; pending: PendingMove };

/** What to do with a reply carrying `d`'s identity from another address (the rule: top of this file). */
export function judgeSighting(d: Device, fp: Fingerprint, now: number, savedAnswers: boolean): Decision {
  const checks = checkFingerprint(d, fp);
  const before = pendingMoveOf(d);
  const differs = Object.values(checks).includes('differs');
  if (!savedAnswers && !differs && proven(fp, checks)) return { move: true, checks };
  const at = formatTime(now);
  const again = before !== undefined && sameFingerprint(before, fp);
  return {
    move: false,
    pending: {
      ...fp,
      first_seen_at: again ? before.first_seen_at : at,
      seen_at: at,
      sightings: again ? before.sightings + 1 : 1,
      saved_address_answers: savedAnswers,
      checks,
      reason: reasonOf(d, fp, checks, savedAnswers),
    },
  };
}

/** The status lines that say a pending move or a flagged counter, first; the others after. */
export function withTrustNotes(d: Device): Device {
  const others = (d.status_messages ?? []).filter((m) => !m.startsWith(PENDING_MOVE_NOTE) && !m.startsWith(COUNTER_NOTE));
  const notes: string[] = [];
  const p = pendingMoveOf(d);
  if (p) notes.push(`${PENDING_MOVE_NOTE}: ${p.ip} answers with this serial; the record stays at ${d.ip} until a person confirms the move`);
  const c = counterFlagOf(d);
  if (c) notes.push(`${COUNTER_NOTE}: ${c.page_count} read at ${c.ip}, ${c.stored_page_count} stored; not stored until a person accepts it`);
  return { ...d, status_messages: [...notes, ...others].slice(0, 32) };
}

/** `d` with its trust state changed (parts set to undefined are removed), its notes updated. */
export function withTrustChange(d: Device, change: Partial<Record<keyof TrustState, unknown>>): Device {
  return withTrustNotes(withTrust(d, change));
}

/**
 * The record at its printer's new address: what was said about the old one goes (a pending move,
 * not answering, said goodbye), and `learned` (what the move's proof showed: the MAC seen there,
 * the SNMPv3 engine) is remembered. A flagged page counter stays: it is about the printer's meter,
 * for a person to accept, wherever the printer is.
 */
export function atNewAddress(d: Device, ip: string, learned: Partial<Record<keyof TrustState, unknown>> = {}): Device {
  const status_messages = (d.status_messages ?? []).filter((m) => !isPresenceLine(m));
  // The printer information carries a copy of the lines (markGone): the note about the move goes too.
  const stale = (m: string) => isPresenceLine(m) || m.startsWith(PENDING_MOVE_NOTE);
  const printer_info = d.printer_info ? { ...d.printer_info, status_messages: (Array.isArray(d.printer_info.status_messages) ? (d.printer_info.status_messages as string[]) : []).filter((m) => !stale(m)) } : d.printer_info;
  const raw: Record<string, unknown> = { ...(d.raw_data ?? {}) };
  for (const k of ['not_answering_since', 'mdns_goodbye_at', 'wsd_goodbye_at']) delete raw[k];
  return withTrustChange({ ...d, ip, status_messages, printer_info, raw_data: raw }, { pending_move: undefined, ...learned });
}

/** What a trusted reading (at the record's own address, or a move made) teaches about the printer. */
export function rememberIdentity(d: Device, fp: Pick<Fingerprint, 'neighbour_mac' | 'engine_id'>): Device {
  const k = knownIdentity(d);
  const mac = normalMac(fp.neighbour_mac);
  if ((!mac || mac === k.neighbour_mac) && (!fp.engine_id || fp.engine_id === k.snmp_engine_id)) return d;
  return withTrustChange(d, { ...(mac ? { neighbour_mac: mac } : {}), ...(fp.engine_id ? { snmp_engine_id: fp.engine_id } : {}) });
}
