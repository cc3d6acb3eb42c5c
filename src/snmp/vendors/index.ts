// Vendor registry: picks the module for a device and plans what a full read fetches.
import { IDENTITY_GET_OIDS, READ_GET_OIDS, SYS_OBJECT_ID, VENDOR_DEVICE_ID_OIDS, WALK_ROOTS } from '../oids.js';
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
  let v = vendorByEnterprise(ent);
  if (!v) {
    for (const [, val] of identity) {
      if (typeof val.value === 'string') {
        v = vendorByName(val.value);
        if (v) break;
      }
    }
  }
  const identityOids = new Set(IDENTITY_GET_OIDS);
  const gets = [...new Set([...READ_GET_OIDS, ...VENDOR_DEVICE_ID_OIDS, ...(v?.getOids ?? [])])].filter((o) => !identityOids.has(o));
  const walks = [...new Set([...WALK_ROOTS, ...(v?.walkRoots ?? [])])];
  return { vendor: v?.name, gets, walks };
}
