// Canon (enterprise 1602). CANON-MIB facts:
//   …1602.1.1.1.1.0          product name
//   …1602.1.1.1.4.0          product (firmware) version
//   …1602.1.2.1.4.0          serial number (older devices)
//   …1602.1.2.1.8.1.3.1.1    serial number (service info table)
//   …1602.1.11.1.3.1.4.<id>  counter table: 101 = total 1, 108 = total black & white 1,
//                           201 = copy total, 301 = print total, 501 = scan total
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, numAt, numColumn, presentOids } from './common.js';

const COUNTERS = '1.3.6.1.4.1.1602.1.11.1.3.1.4';
export const CANON_OIDS = {
  model: '1.3.6.1.4.1.1602.1.1.1.1.0',
  firmware: '1.3.6.1.4.1.1602.1.1.1.4.0',
  serial: '1.3.6.1.4.1.1602.1.2.1.4.0',
  serialTable: '1.3.6.1.4.1.1602.1.2.1.8.1.3.1.1',
} as const;

export const canon: VendorModule = {
  name: 'Canon',
  enterprises: [1602],
  match: /\bcanon\b/i,
  getOids: Object.values(CANON_OIDS),
  walkRoots: [COUNTERS],
  parse({ values }): VendorFacts {
    const facts: VendorFacts = { oids: presentOids(values, CANON_OIDS, 'canon'), meters: {} };
    facts.serial = firstText(values, [CANON_OIDS.serialTable, CANON_OIDS.serial]);
    facts.model = firstText(values, [CANON_OIDS.model]);
    facts.firmware = firstText(values, [CANON_OIDS.firmware]);
    facts.page_count = numAt(values, `${COUNTERS}.101`);
    facts.mono_pages = numAt(values, `${COUNTERS}.108`);
    const names: Record<string, string> = { '201': 'copy_pages', '301': 'print_pages', '501': 'scan_count' };
    for (const [id, n] of numColumn(values, COUNTERS)) {
      facts.meters![names[id] ?? `canon_counter_${id.replace(/\./g, '_')}`] = n;
      if (id === '501') facts.scan_count = { value: n, oid: `${COUNTERS}.501` };
    }
    if (facts.page_count) facts.oids!.canon_total = `${COUNTERS}.101`;
    return facts;
  },
};
