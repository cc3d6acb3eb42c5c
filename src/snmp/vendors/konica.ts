// Konica Minolta (enterprise 18334). Facts:
//   …18334.1.1.1.1.6.2.1.0         model
//   …18334.1.1.1.5.7.2.1.1.0       total counter; ….1.3.0 duplex
//   …18334.1.1.1.5.7.2.2.1.5.1.1   black copies; ….5.1.2 black prints
//   …18334.1.1.1.5.7.2.2.1.5.2.1   colour copies; ….5.2.2 colour prints
//   …18334.1.1.1.5.7.2.3.1.5.1     scans
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, numAt, presentOids, sumAt } from './common.js';

const C = '1.3.6.1.4.1.18334.1.1.1.5.7.2';
export const KONICA_OIDS = {
  model: '1.3.6.1.4.1.18334.1.1.1.1.6.2.1.0',
  total: `${C}.1.1.0`,
  duplex: `${C}.1.3.0`,
  blackCopy: `${C}.2.1.5.1.1`,
  blackPrint: `${C}.2.1.5.1.2`,
  colorCopy: `${C}.2.1.5.2.1`,
  colorPrint: `${C}.2.1.5.2.2`,
  scans: `${C}.3.1.5.1`,
} as const;

export const konica: VendorModule = {
  name: 'Konica Minolta',
  enterprises: [18334],
  match: /konica|minolta|develop\b|\bineo\b/i,
  getOids: Object.values(KONICA_OIDS),
  parse({ values }): VendorFacts {
    const facts: VendorFacts = { oids: presentOids(values, KONICA_OIDS, 'konica'), meters: {} };
    const model = firstText(values, [KONICA_OIDS.model]);
    if (model) model.value = model.value.replace(/^konica\s+minolta\s+/i, '');
    facts.model = model;
    facts.page_count = numAt(values, KONICA_OIDS.total);
    const mono = sumAt(values, [KONICA_OIDS.blackCopy, KONICA_OIDS.blackPrint]);
    const colour = sumAt(values, [KONICA_OIDS.colorCopy, KONICA_OIDS.colorPrint]);
    if (mono !== undefined) facts.mono_pages = { value: mono };
    if (colour !== undefined) facts.color_pages = { value: colour };
    facts.scan_count = numAt(values, KONICA_OIDS.scans);
    const duplex = numAt(values, KONICA_OIDS.duplex);
    if (duplex) facts.meters!.duplex_pages = duplex.value;
    const split: Record<string, string> = { print_mono_pages: KONICA_OIDS.blackPrint, print_color_pages: KONICA_OIDS.colorPrint, copy_mono_pages: KONICA_OIDS.blackCopy, copy_color_pages: KONICA_OIDS.colorCopy };
    for (const [k, oid] of Object.entries(split)) {
      const n = numAt(values, oid);
      if (n) facts.meters![k] = n.value;
    }
    const prints = sumAt(values, [KONICA_OIDS.blackPrint, KONICA_OIDS.colorPrint]);
    if (prints !== undefined) facts.meters!.print_pages = prints;
    const copies = sumAt(values, [KONICA_OIDS.blackCopy, KONICA_OIDS.colorCopy]);
    if (copies !== undefined) facts.meters!.copy_pages = copies;
    return facts;
  },
};
