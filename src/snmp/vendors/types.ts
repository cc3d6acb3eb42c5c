// The shape of a vendor module: facts from a manufacturer's private MIB that add to (never
// replace) what Printer-MIB and HOST-RESOURCES-MIB report.
import type { DeviceId } from '../parse/device-id.js';
import type { Supply } from '../parse/supplies.js';
import type { Found } from '../parse/values.js';
import type { OidValues } from '../types.js';

export interface VendorContext {
  values: OidValues;
  deviceId?: DeviceId;
  /** Model as far as the generic code knows it (device ID, hrDeviceDescr). */
  model?: string;
}

export type Capability = 'is_color' | 'is_mono' | 'is_copier' | 'is_scanner' | 'is_fax' | 'is_laser' | 'is_inkjet' | 'has_duplex';

export interface VendorFacts {
  serial?: Found<string>;
  model?: Found<string>;
  firmware?: Found<string>;
  hostname?: Found<string>;
  /** Total pages from the vendor MIB; used only when Printer-MIB has no life count. */
  page_count?: Found<number>;
  mono_pages?: Found<number>;
  color_pages?: Found<number>;
  scan_count?: Found<number>;
  /** Extra counters, integers, keyed snake_case (copy_pages, duplex_pages, drum_count ...). */
  meters?: Record<string, number>;
  /** Supply percentages the vendor MIB knows better than Printer-MIB. */
  supplies?: Supply[];
  capabilities?: Partial<Record<Capability, boolean>>;
  /** The interface card the printer is reached through, when its MIB names one. */
  print_server?: { model: string; firmware?: string };
  /** OIDs worth remembering (learned_oids.vendor_specific_oids). */
  oids?: Record<string, string>;
}

export interface VendorModule {
  /** Canonical manufacturer name. */
  name: string;
  /** IANA enterprise numbers (sysObjectID under 1.3.6.1.4.1.N). */
  enterprises: readonly number[];
  /** Matches manufacturer text (device ID MFG, hrDeviceDescr, sysDescr). */
  match: RegExp;
  /** Scalar GETs for a full read. */
  getOids?: readonly string[];
  /** Subtrees to walk for a full read (keep them small). */
  walkRoots?: readonly string[];
  parse?(ctx: VendorContext): VendorFacts;
}
