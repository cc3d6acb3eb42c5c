// What POST /devices/update may change, and how (the central server's device edits included):
//   asset_number, location, description   a person's fields (docs/decisions/0008-person-fields.md): set and locked
//   manufacturer, model, hostname,         the technician's overrides: set and locked, so a later
//   web_ui_url                             SNMP or IPP poll keeps them; "" ends the override (the
//                                          field is cleared and polling fills it again)
//   visible                                shown in or hidden from the discovered list
//   firmware, ip, mac_address,             what the reference agent's edit also takes (the server's
//   subnet_mask, gateway, dns_servers,     "Apply All" after "Scan for Updates" sends them): the box
//   dhcp_server                            reads them from the printer and polls at the address it
//                                          found, so they are ignored, and named in the answer
// Any other field is a 400 from a local caller (a typo must not pass unseen); over the central
// server's channel it is ignored and named too, since that server's UI is another program that
// may send fields this box does not know. A value of the wrong type or too long is a 400 from
// anyone, and nothing is changed.
import type { Device } from '../model/device.js';
import { PERSON_FIELDS, clearAndUnlock, setAndLock } from '../model/record-fold.js';

export const OVERRIDE_FIELDS = ['manufacturer', 'model', 'hostname', 'web_ui_url'] as const;
export const IGNORED_FIELDS = ['firmware', 'ip', 'mac_address', 'subnet_mask', 'gateway', 'dns_servers', 'dhcp_server'] as const;
export const MAX_FIELD_LENGTH = 1024;

type TextField = (typeof PERSON_FIELDS)[number] | (typeof OVERRIDE_FIELDS)[number];
const TEXT_FIELDS: readonly TextField[] = [...PERSON_FIELDS, ...OVERRIDE_FIELDS];

export interface DeviceEdit {
  set: Partial<Record<TextField, string>>;
  visible?: boolean;
  /** Fields left as they were, in the order sent. */
  ignored: string[];
}

/** The edit a body asks for, or the 400's message. `lenient`: unknown fields are ignored (the server's channel). */
export function parseDeviceEdit(body: Record<string, unknown>, lenient: boolean): DeviceEdit | string {
  const edit: DeviceEdit = { set: {}, ignored: [] };
  for (const [k, v] of Object.entries(body)) {
    if (k === 'serial') continue;
    if (k === 'visible') {
      if (typeof v !== 'boolean') return 'field visible must be true or false';
      edit.visible = v;
    } else if ((TEXT_FIELDS as readonly string[]).includes(k)) {
      if (typeof v !== 'string') return `field ${k} must be a string`;
      if (v.length > MAX_FIELD_LENGTH) return `field ${k} is longer than ${MAX_FIELD_LENGTH} characters`;
      if (k === 'web_ui_url' && v !== '' && !isWebUrl(v)) return 'field web_ui_url must be an http:// or https:// URL';
      edit.set[k as TextField] = v;
    } else if ((IGNORED_FIELDS as readonly string[]).includes(k) || lenient) {
      edit.ignored.push(k);
    } else {
      return `unknown field ${k}`;
    }
  }
  return edit;
}

function isWebUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Applies an edit to a copy of `device`: each field set is locked, an emptied override is unlocked. */
export function applyDeviceEdit(device: Device, edit: DeviceEdit, lockedAt: string, lockedBy: string): Device {
  let d: Device = { ...device, locked_fields: [...(device.locked_fields ?? [])] };
  for (const [field, value] of Object.entries(edit.set) as [TextField, string][]) {
    const override = (OVERRIDE_FIELDS as readonly string[]).includes(field);
    if (override && value === '') {
      d = clearAndUnlock(d, field);
      continue;
    }
    const reason = override ? 'set by a technician: polling keeps this value' : 'set by a person';
    d = setAndLock(d, field, value, { reason, locked_at: lockedAt, locked_by: lockedBy });
  }
  if (edit.visible !== undefined) d.visible = edit.visible;
  return d;
}
