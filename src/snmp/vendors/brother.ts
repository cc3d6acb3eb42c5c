// Brother (enterprise 2435). Facts used (BRN printer MIB, as documented by the public
// "brother" Python library and saper-2/BRN-Printer-sCounters-Info):
//   …2435.2.3.9.1.1.7.0            IEEE 1284 device ID (MFG/MDL/CMD/CID)
//   …2435.2.3.9.4.2.1.5.5.1.0      serial number
//   …2435.2.3.9.4.2.1.5.5.17.0     firmware version
//   …2435.2.3.9.4.2.1.5.5.8.0      maintenance blob
//   …2435.2.3.9.4.2.1.5.5.10.0     counters blob
//   …2435.2.3.9.4.2.1.5.5.11.0     "next care" blob (pages left per maintenance part)
// A blob is a run of records: code (1 byte), 0x01, length (1 byte), value (length bytes,
// big-endian). Four-byte values are counts, or hundredths of a percent for "remaining" codes.
// Older inkjets use two-byte values (current, max) for ink (codes a1..a4). A trailing 0xff is
// a checksum/terminator.
import type { Supply } from '../parse/supplies.js';
import { bytesOf, text, type Found } from '../parse/values.js';
import type { OidValues } from '../types.js';
import type { VendorContext, VendorFacts, VendorModule } from './types.js';

const B = '1.3.6.1.4.1.2435.2.3.9.4.2.1.5';
export const BROTHER_OIDS = {
  deviceId: '1.3.6.1.4.1.2435.2.3.9.1.1.7.0',
  serial: `${B}.5.1.0`,
  maintenance: `${B}.5.8.0`,
  counters: `${B}.5.10.0`,
  nextCare: `${B}.5.11.0`,
  firmware: `${B}.5.17.0`,
  panelText: `${B}.4.5.2.0`,
} as const;

export interface BlobRecord {
  code: number;
  value: Buffer;
}

/** Splits a Brother blob into records; stops at the terminator or a malformed record. */
export function parseBrotherBlob(buf: Buffer | undefined): BlobRecord[] {
  const out: BlobRecord[] = [];
  if (!buf) return out;
  let i = 0;
  while (i + 3 <= buf.length) {
    const code = buf[i];
    const len = buf[i + 2];
    if (code === 0xff && buf[i + 1] !== 0x01) break;
    if (buf[i + 1] !== 0x01 || len === 0 || i + 3 + len > buf.length) break;
    out.push({ code, value: buf.subarray(i + 3, i + 3 + len) });
    i += 3 + len;
  }
  return out;
}

function u32(v: Buffer): number | undefined {
  return v.length === 4 ? v.readUInt32BE(0) : undefined;
}

const COLOURS = ['black', 'cyan', 'magenta', 'yellow'] as const;

/** Maintenance codes holding "remaining life" in hundredths of a percent. */
const REMAINING: Record<number, string> = {
  0x41: 'drum',
  0x69: 'belt',
  0x6a: 'fuser',
  0x6b: 'laser_unit',
  0x6c: 'paper_feed_kit_mp',
  0x6d: 'paper_feed_kit_1',
  0x6f: 'black',
  0x70: 'cyan',
  0x71: 'magenta',
  0x72: 'yellow',
  0x80: 'drum_black',
  0x79: 'drum_cyan',
  0x7a: 'drum_magenta',
  0x7b: 'drum_yellow',
};

/** Maintenance codes holding page counts. */
const MAINT_COUNTS: Record<number, string> = {
  0x11: 'drum_count',
  0x7e: 'drum_black_count',
  0x73: 'drum_cyan_count',
  0x74: 'drum_magenta_count',
  0x75: 'drum_yellow_count',
};

/** Maintenance codes that mean the same on inkjets (ink remaining); the others are laser parts. */
const INK_CODES = new Set([0x6f, 0x70, 0x71, 0x72]);

/** Legacy two-byte (current, max) ink records. */
const LEGACY: Record<number, string> = { 0xa1: 'black', 0xa2: 'cyan', 0xa3: 'magenta', 0xa4: 'yellow' };

/** Next-care codes: pages left before the part needs replacing. */
const NEXT_CARE: Record<number, string> = {
  0x73: 'laser_unit_remaining_pages',
  0x77: 'paper_feed_kit_1_remaining_pages',
  0x82: 'drum_remaining_pages',
  0x86: 'paper_feed_kit_mp_remaining_pages',
  0x88: 'belt_remaining_pages',
  0x89: 'fuser_remaining_pages',
  0xa4: 'drum_black_remaining_pages',
  0xa5: 'drum_cyan_remaining_pages',
  0xa6: 'drum_magenta_remaining_pages',
  0xa7: 'drum_yellow_remaining_pages',
};

/** Counter codes. */
const COUNTERS: Record<number, string> = {
  0x00: 'total_pages',
  0x01: 'mono_pages',
  0x02: 'color_pages',
  0x06: 'duplex_pages',
  0x12: 'black_impressions',
  0x13: 'cyan_impressions',
  0x14: 'magenta_impressions',
  0x15: 'yellow_impressions',
  0x16: 'image_count',
};

/**
 * Brother inkjets: DCP-J / MFC-J / DCP-T / MFC-T series, and older models named
 * DCP-/MFC-<digits>C, CN or CW. Everything else Brother sells under HL/DCP/MFC is laser/LED.
 */
export function brotherIsInkjet(model: string | undefined): boolean | undefined {
  if (!model) return undefined;
  const m = model.toUpperCase();
  if (/^(DCP|MFC)-(J|T)\d/.test(m) || /^(DCP|MFC)-\d+C[NW]?\b/.test(m)) return true;
  if (/^(HL|DCP|MFC|FAX)-/.test(m)) return false;
  return undefined;
}

export interface BrotherBlobs {
  supplies: Supply[];
  meters: Record<string, number>;
}

/** Decodes the three blobs of a Brother printer. */
export function decodeBrother(values: OidValues, inkjet: boolean | undefined): BrotherBlobs {
  const meters: Record<string, number> = {};
  const supplies: Supply[] = [];
  const addSupply = (key: string, pct: number, code: number, oid: string) => {
    if (supplies.some((s) => s.key === key)) return;
    const colourant = (COLOURS as readonly string[]).includes(key);
    supplies.push({
      index: `brother.${code.toString(16)}`,
      key,
      description: colourant ? `${key[0].toUpperCase()}${key.slice(1)} ${inkjet ? 'ink' : 'toner'}` : undefined,
      type: colourant ? (inkjet ? 'ink' : 'toner') : undefined,
      percent: Math.max(0, Math.min(100, pct)),
      state: 'measured',
      source: 'vendor',
      oid,
    });
  };

  for (const r of parseBrotherBlob(bytesOf(values.get(BROTHER_OIDS.maintenance)))) {
    if (r.value.length === 2 && LEGACY[r.code] && r.value[1] > 0) {
      addSupply(LEGACY[r.code], Math.round((r.value[0] * 100) / r.value[1]), r.code, BROTHER_OIDS.maintenance);
      continue;
    }
    const n = u32(r.value);
    if (n === undefined) continue;
    // On inkjets only the ink codes apply (drum/belt/fuser codes describe laser parts).
    if (inkjet && !INK_CODES.has(r.code)) continue;
    if (REMAINING[r.code]) addSupply(REMAINING[r.code], Math.round(n / 100), r.code, BROTHER_OIDS.maintenance);
    else if (MAINT_COUNTS[r.code]) meters[MAINT_COUNTS[r.code]] = n;
  }
  for (const r of inkjet ? [] : parseBrotherBlob(bytesOf(values.get(BROTHER_OIDS.nextCare)))) {
    const n = u32(r.value);
    if (n !== undefined && NEXT_CARE[r.code]) meters[NEXT_CARE[r.code]] = n;
  }
  for (const r of parseBrotherBlob(bytesOf(values.get(BROTHER_OIDS.counters)))) {
    const n = u32(r.value);
    if (n !== undefined && COUNTERS[r.code]) meters[COUNTERS[r.code]] = n;
  }
  return { supplies, meters };
}

function found(values: OidValues, oid: string): Found<string> | undefined {
  const t = text(values, oid);
  return t === undefined ? undefined : { value: t, oid };
}

export const brother: VendorModule = {
  name: 'Brother',
  enterprises: [2435],
  match: /\bbrother\b/i,
  getOids: Object.values(BROTHER_OIDS),
  parse(ctx: VendorContext): VendorFacts {
    const { values } = ctx;
    const inkjet = brotherIsInkjet(ctx.model);
    const { supplies, meters } = decodeBrother(values, inkjet);
    const facts: VendorFacts = { supplies, meters: {}, oids: {} };
    facts.serial = found(values, BROTHER_OIDS.serial);
    facts.firmware = found(values, BROTHER_OIDS.firmware);
    const m = facts.meters!;
    for (const [k, v] of Object.entries(meters)) {
      if (k === 'total_pages') facts.page_count = { value: v, oid: BROTHER_OIDS.counters };
      else if (k === 'mono_pages') facts.mono_pages = { value: v, oid: BROTHER_OIDS.counters };
      else if (k === 'color_pages') facts.color_pages = { value: v, oid: BROTHER_OIDS.counters };
      else m[k] = v;
    }
    for (const [k, oid] of Object.entries(BROTHER_OIDS)) if (values.has(oid)) facts.oids![`brother_${k}`] = oid;
    const caps: VendorFacts['capabilities'] = {};
    if (inkjet !== undefined) {
      caps.is_inkjet = inkjet;
      caps.is_laser = !inkjet;
    }
    // Brother model families: DCP = print/copy/scan, MFC = DCP plus fax. (Some HL models
    // scan too, so nothing is concluded from HL.)
    const model = (ctx.model ?? '').toUpperCase();
    if (/^(DCP|MFC)-/.test(model)) {
      caps.is_copier = true;
      caps.is_scanner = true;
      if (model.startsWith('MFC-')) caps.is_fax = true;
    }
    if (meters.duplex_pages !== undefined) caps.has_duplex = true;
    facts.capabilities = caps;
    return facts;
  },
};
