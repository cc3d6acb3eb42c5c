// Xerox (enterprise 253). XEROX-HOST-RESOURCES-EXT-MIB facts (xcmHrDevDetailTable,
// …253.8.53.13.2.1.6.<dev>.<class>.<n>):
//   ….6.1.20.1   total prints; ….6.1.20.33 colour prints; ….6.1.20.34 black prints
//   ….6.11.20.3  black copies; ….6.11.20.25 colour copies
//   ….6.10.20.11 scans sent by e-mail; ….6.10.20.12 scans saved to the network
import type { VendorFacts, VendorModule } from './types.js';
import { numAt, presentOids, sumAt } from './common.js';

const X = '1.3.6.1.4.1.253.8.53.13.2.1.6';
export const XEROX_OIDS = {
  totalPrints: `${X}.1.20.1`,
  colorPrints: `${X}.1.20.33`,
  blackPrints: `${X}.1.20.34`,
  blackCopies: `${X}.11.20.3`,
  colorCopies: `${X}.11.20.25`,
  scansEmail: `${X}.10.20.11`,
  scansNetwork: `${X}.10.20.12`,
} as const;

export const xerox: VendorModule = {
  name: 'Xerox',
  enterprises: [253],
  match: /\bxerox\b|fuji\s*xerox/i,
  getOids: Object.values(XEROX_OIDS),
  parse({ values }): VendorFacts {
    const facts: VendorFacts = { oids: presentOids(values, XEROX_OIDS, 'xerox'), meters: {} };
    facts.page_count = numAt(values, XEROX_OIDS.totalPrints);
    const mono = sumAt(values, [XEROX_OIDS.blackPrints, XEROX_OIDS.blackCopies]);
    const colour = sumAt(values, [XEROX_OIDS.colorPrints, XEROX_OIDS.colorCopies]);
    if (mono !== undefined) facts.mono_pages = { value: mono };
    if (colour !== undefined) facts.color_pages = { value: colour };
    const scans = sumAt(values, [XEROX_OIDS.scansEmail, XEROX_OIDS.scansNetwork]);
    if (scans !== undefined) facts.scan_count = { value: scans };
    const copies = sumAt(values, [XEROX_OIDS.blackCopies, XEROX_OIDS.colorCopies]);
    const split: Record<string, string> = { print_mono_pages: XEROX_OIDS.blackPrints, print_color_pages: XEROX_OIDS.colorPrints, copy_mono_pages: XEROX_OIDS.blackCopies, copy_color_pages: XEROX_OIDS.colorCopies };
    for (const [k, oid] of Object.entries(split)) {
      const n = numAt(values, oid);
      if (n) facts.meters![k] = n.value;
    }
    if (copies !== undefined) {
      facts.meters!.copy_pages = copies;
      if (copies > 0) facts.capabilities = { is_copier: true };
    }
    return facts;
  },
};
