// Every field of the device record, listed once. From this table come the contract's Device JSON
// (API views and the upload to the central server), the device line of the NDJSON backup, and the
// devices table's column list, row reader and upsert (store/device-rows.ts): a field added here
// reaches all of them, and a field missing here reaches none (test/unit/model/device-fields.test.ts
// checks the table against the schema the migrations build; the check at the end of this file
// against the Device interface is a build error when they differ).
import type { Device } from './device.js';
import type { Field, FieldKind, Fields } from './serialize.js';

/**
 * A field's kind fixes its JSON and its column alike (store/device-rows.ts):
 * string TEXT; int INTEGER; time INTEGER epoch ms in the record and the column, RFC 3339 in JSON;
 * bool INTEGER 0/1 in the column; array and object JSON text in the column.
 */
export type DeviceFieldKind = Exclude<FieldKind, 'any'>;

export interface DeviceField<N extends string = string, K extends DeviceFieldKind = DeviceFieldKind> extends Field {
  /** The record's property and the JSON name. */
  name: N;
  kind: K;
  /** The devices table's column, when it is not `name`. */
  column?: string;
  /**
   * false: stored, but not part of the contract's Device (2.2). printer_info is served as a
   * resource of its own (PrinterInfo, 2.4); trust is shown inside raw_data.
   */
  inDevice?: false;
}

// `required`: always in the JSON (contract 2.2); optional fields are omitted when empty or zero.
const req = <N extends string, K extends DeviceFieldKind>(name: N, kind: K): DeviceField<N, K> => ({ name, kind, required: true });
const opt = <N extends string, K extends DeviceFieldKind>(kind: K, ...names: N[]): DeviceField<N, K>[] =>
  names.map((name) => ({ name, kind }));

/** The device record, in the contract's order (2.2), which is also the order of the JSON. */
export const DEVICE_RECORD = [
  req('serial', 'string'),
  req('ip', 'string'),
  ...opt('string', 'manufacturer', 'model', 'hostname', 'firmware', 'mac_address', 'subnet_mask', 'gateway'),
  ...opt('array', 'consumables', 'status_messages'),
  req('last_seen', 'time'),
  req('created_at', 'time'),
  req('first_seen', 'time'),
  ...opt('string', 'discovery_method', 'asset_number', 'location', 'description', 'web_ui_url'),
  ...opt('object', 'raw_data'),
  ...opt('string', 'device_type', 'source_type', 'port_name', 'driver_name', 'spooler_status'),
  ...opt('bool', 'is_usb', 'is_default', 'is_shared', 'usb_webui_available'),
  ...opt('int', 'initial_page_count'),
  ...opt('array', 'dns_servers'),
  ...opt('string', 'dhcp_server'),
  req('is_saved', 'bool'),
  req('visible', 'bool'),
  ...opt('string', 'walk_filename'),
  ...opt('int', 'last_scan_id'),
  ...opt('array', 'locked_fields'),
  // Not in the contract's Device nor in the backup's device line: both show it inside raw_data
  // (model/trust.ts trustInRawData), as agents before the column did.
  { name: 'trust', kind: 'object', inDevice: false } satisfies DeviceField<'trust', 'object'>,
  { name: 'printer_info', kind: 'object', inDevice: false } satisfies DeviceField<'printer_info', 'object'>,
] as const;

/** Contract 2.2: the Device the API serves and the upload sends. */
export const DEVICE_FIELDS: Fields = DEVICE_RECORD.filter((f: DeviceField) => f.inDevice !== false);

/** The NDJSON backup's device line: the whole record, printer_info included (trust inside raw_data). */
export const DEVICE_BACKUP_FIELDS: Fields = DEVICE_RECORD.filter((f: DeviceField) => f.name !== 'trust');

/** The column a field is stored in. */
export const columnOf = (f: DeviceField): string => f.column ?? f.name;

// The Device interface keeps each field's precise type and documentation; this table keeps the
// list. These types make the build fail when they name different fields, or when a field's kind
// does not fit its type in the interface (its codec would be wrong).
type FieldName = (typeof DEVICE_RECORD)[number]['name'];
interface KindTypes {
  string: string;
  int: number;
  time: number;
  bool: boolean;
  array: readonly unknown[];
  object: Record<string, unknown>;
}
// (opt() gives one element type to several names: match by name within each element type)
type KindOf<N extends FieldName, F = (typeof DEVICE_RECORD)[number]> = F extends { name: infer M; kind: infer K }
  ? (N extends M ? K : never)
  : never;
type Mismatched = {
  [N in FieldName]: N extends keyof Device ? (NonNullable<Device[N]> extends KindTypes[KindOf<N>] ? never : N) : never;
}[FieldName];
type Assert<T extends true> = T;
export type DeviceFieldsMatchInterface = Assert<
  [Exclude<keyof Device, FieldName>, Exclude<FieldName, keyof Device>, Mismatched] extends [never, never, never] ? true : false
>;
