// The one owner of how a reading meets a device record. A printer's answer (SNMP, IPP, USB) is
// folded into its record, and what a person set is kept (docs/decisions/0008-person-fields.md):
// - the person-set fields (PERSON_FIELDS) are filled by a reading only while nobody has set them;
// - a locked field (locked_fields: a person's field once set, a technician's override) is never
//   written by a reading; a person's edit sets a field and locks it, ending an override unlocks it;
// - a reading merged from a copy taken before it read the printer does not undo a choice made
//   while it was taken (withPersonsChoices).
// Discovery (discovery/merge.ts), the USB printers (usb/reading.ts), the store (store/devices.ts)
// and the device edit (api/device-edit.ts) go through here, so the rule is written once.
import type { Device, LockedField } from './device.js';

/** Fields a person sets (docs/decisions/0008-person-fields.md): discovery fills one only while nobody has. */
export const PERSON_FIELDS = ['asset_number', 'location', 'description'] as const;

const PERSON_FIELD_SET = new Set<string>(PERSON_FIELDS);

/** True when no reading may write `field` of `d` (a person or a technician locked it). */
export function isLocked(d: Device | undefined, field: string): boolean {
  return (d?.locked_fields ?? []).some((l) => l.field === field);
}

/**
 * Writes what a reading says into `d`, a copy of the record (or a new record) the caller is
 * building: a value left undefined is not written, a locked field never is, and a person-set field
 * only while it is empty.
 */
export function foldReadFields(d: Device, read: Readonly<Record<string, unknown>>): void {
  const locked = new Set((d.locked_fields ?? []).map((l) => l.field));
  const record = d as unknown as Record<string, unknown>;
  for (const [k, v] of Object.entries(read)) {
    if (v === undefined || locked.has(k)) continue;
    if (PERSON_FIELD_SET.has(k) && record[k]) continue;
    record[k] = v;
  }
}

/** A person's or a technician's value for `field`, locked so that no reading changes it. */
export function setAndLock(d: Device, field: string, value: string, lock: Omit<LockedField, 'field'>): Device {
  const out = { ...d, [field]: value } as Device;
  const locks = d.locked_fields ?? [];
  out.locked_fields = locks.some((l) => l.field === field) ? [...locks] : [...locks, { field, ...lock }];
  return out;
}

/** `field` cleared and unlocked: the next reading fills it again. */
export function clearAndUnlock(d: Device, field: string): Device {
  const out = { ...d } as unknown as Record<string, unknown>;
  delete out[field];
  const result = out as unknown as Device;
  result.locked_fields = (d.locked_fields ?? []).filter((l) => l.field !== field);
  return result;
}

/**
 * `read` (a record a scan or poll merged from a copy taken before it read the printer) with what
 * a person decided since, as `current` holds it: saved, visible, the locked fields and their
 * values, and the person-set fields. A reading must never undo a change made while it was taken.
 */
export function withPersonsChoices(read: Device, current: Device): Device {
  const out: Device = { ...read, is_saved: current.is_saved, visible: current.visible, locked_fields: current.locked_fields };
  const o = out as unknown as Record<string, unknown>;
  const c = current as unknown as Record<string, unknown>;
  for (const k of PERSON_FIELDS) if (c[k]) o[k] = c[k];
  for (const { field } of current.locked_fields ?? []) o[field] = c[field];
  return out;
}
