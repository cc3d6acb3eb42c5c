// Vendor registry: picks the module for a device and plans what a full read fetches.
import { HR_DEVICE_DESCR, IDENTITY_GET_OIDS, PPM_PRINTER_IEEE1284_DEVICE_ID, READ_GET_OIDS, SYS_DESCR, SYS_OBJECT_ID, VENDOR_DEVICE_ID_OIDS, WALK_ROOTS } from '../oids.js';
import { parseDeviceId } from '../parse/device-id.js';
import { makerOfDeviceId } from '../parse/identity.js';
import { enterpriseOf, text } from '../parse/values.js';
import type { OidValues } from '../types.js';
import { brother } from './brother.js';
import { canon } from './canon.js';
import { epson } from './epson.js';
import { hp } from './hp.js';
import { konica } from './konica.js';
import { kyocera } from './kyocera.js';
import { lexmark } from './lexmark.js';
import { oki } from './oki.js';
import { ricoh } from './ricoh.js';
import { samsung } from './samsung.js';
import { sharp } from './sharp.js';
import type { VendorModule } from './types.js';
import { xerox } from './xerox.js';
import { zebra } from './zebra.js';

export type { VendorModule, VendorFacts, VendorContext } from './types.js';

export const VENDORS: readonly VendorModule[] = [hp, brother, canon, epson, kyocera, lexmark, ricoh, xerox, konica, sharp, samsung, oki, zebra];

/** Module by IANA enterprise number. */
export function vendorByEnterprise(enterprise: number | undefined): VendorModule | undefined {
  if (enterprise === undefined) return undefined;
  return VENDORS.find((v) => v.enterprises.includes(enterprise));
}

/** Module whose name pattern matches the text (device ID MFG, hrDeviceDescr, sysDescr). */
export function vendorByName(textValue: string | undefined): VendorModule | undefined {
  if (!textValue) return undefined;
  return VENDORS.find((v) => v.match.test(textValue));
}

// Enterprise numbers that interface cards claim rather than own: HP's JetDirect sysObjectID
// (1.3.6.1.4.1.11.2.3.9.1) is answered by third-party print servers and by many non-HP printers'
// own network cards, for the sake of drivers that look for a JetDirect.
const CLAIMED_ENTERPRISES: readonly number[] = [11];

/**
 * The module whose private MIB a device answers: its enterprise's, except where that enterprise
 * is one cards claim and the printer names another maker (its 1284 MFG `maker`, else the first
 * text that names a known maker: 1284 MDL, hrDeviceDescr, then sysDescr); then that maker's
 * module, or none (a card's answers under the claimed MIB, its serial among them, are the
 * card's). With no enterprise module, the first text that names one. A rebadged line (HP on a
 * Samsung platform, Toshiba on Lexmark) keeps its platform's module.
 */
export function vendorFor(enterprise: number | undefined, texts: ReadonlyArray<string | undefined>, maker?: string): VendorModule | undefined {
  const byEnterprise = vendorByEnterprise(enterprise);
  const named = vendorByName(maker) ?? texts.map((t) => vendorByName(t)).find((v) => v !== undefined);
  if (byEnterprise && CLAIMED_ENTERPRISES.includes(enterprise!)) {
    if (named && named !== byEnterprise) return named;
    if (!named && maker) return undefined;
  }
  return byEnterprise ?? named;
}

/** Manufacturer names as printers write them, mapped to the canonical module name. */
export function canonicalManufacturer(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const v = vendorByName(name);
  if (v) return v.name;
  const t = name.trim();
  if (t === '') return undefined;
  // Unknown vendor: keep its own spelling, but tame ALL-CAPS ("ACME" -> "Acme") only for long words.
  return t.length > 4 && t === t.toUpperCase() ? t[0] + t.slice(1).toLowerCase() : t;
}

export interface VendorReadPlan {
  vendor?: string;
  /** Scalar GETs beyond IDENTITY_GET_OIDS (which the identify step already fetched). */
  gets: string[];
  /** Subtrees to walk. */
  walks: string[];
}

/**
 * What a full read should fetch, given what a quick identify returned: the generic walks plus
 * the vendor's GETs and walks (vendor found from sysObjectID, else from the texts).
 * Matches scan.ts's planRead(identity, address) hook.
 */
export function readPlan(identity: OidValues, _address?: string): VendorReadPlan {
  const ent = enterpriseOf(text(identity, SYS_OBJECT_ID) ?? (identity.get(SYS_OBJECT_ID)?.value as string | undefined));
  // The same choice parsePrinter makes, from the identify's texts.
  const deviceIds = [`${PPM_PRINTER_IEEE1284_DEVICE_ID}.1`, ...VENDOR_DEVICE_ID_OIDS].map((o) => parseDeviceId(text(identity, o)));
  const v = vendorFor(
    ent,
    [...deviceIds.map((id) => id?.model), text(identity, `${HR_DEVICE_DESCR}.1`), text(identity, SYS_DESCR)],
    deviceIds.map((id) => makerOfDeviceId(id?.manufacturer)).find((m) => m !== undefined),
  );
  const identityOids = new Set(IDENTITY_GET_OIDS);
  const gets = [...new Set([...READ_GET_OIDS, ...VENDOR_DEVICE_ID_OIDS, ...(v?.getOids ?? [])])].filter((o) => !identityOids.has(o));
  const walks = [...new Set([...WALK_ROOTS, ...(v?.walkRoots ?? [])])];
  return { vendor: v?.name, gets, walks };
}
