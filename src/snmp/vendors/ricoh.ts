// Ricoh (enterprise 367). RICOH-PRIVATE-MIB facts:
//   …367.3.2.1.2.19.5.1.2.<n>   engine counter type; ….9.<n> its value. Types: 10 total,
//     200 copy total, 201 copy black, 202/203 copy colour, 300 fax, 400 print total,
//     401 print black, 402/403 print colour, 870/871 scans
//   …367.3.2.1.6.1.1.7.1        host name
//   …367.3.2.1.2.1.4.0          serial number
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, numColumn, presentOids } from './common.js';

const ENG = '1.3.6.1.4.1.367.3.2.1.2.19.5.1';
export const RICOH_OIDS = { hostname: '1.3.6.1.4.1.367.3.2.1.6.1.1.7.1', serial: '1.3.6.1.4.1.367.3.2.1.2.1.4.0' } as const;

export const ricoh: VendorModule = {
  name: 'Ricoh',
  enterprises: [367],
  match: /\bricoh\b|\bsavin\b|\blanier\b|nashuatec|\brex-?rotary\b|\bgestetner\b/i,
  getOids: Object.values(RICOH_OIDS),
  walkRoots: [`${ENG}.2`, `${ENG}.9`],
  parse({ values }): VendorFacts {
    const facts: VendorFacts = { oids: presentOids(values, RICOH_OIDS, 'ricoh'), meters: {} };
    facts.hostname = firstText(values, [RICOH_OIDS.hostname]);
    facts.serial = firstText(values, [RICOH_OIDS.serial]);
    const valueBy = new Map(numColumn(values, `${ENG}.9`));
    const sums: Record<string, number> = {};
    const add = (k: string, n: number) => (sums[k] = (sums[k] ?? 0) + n);
    for (const [idx, type] of numColumn(values, `${ENG}.2`)) {
      const n = valueBy.get(idx);
      if (n === undefined || n < 0) continue;
      if (type === 10) add('total', n);
      else if (type === 200) add('copy', n);
      else if (type === 300) add('fax', n);
      else if (type === 400) add('print', n);
      else if (type === 870 || type === 871) add('scan', n);
      const fn = type === 201 || type === 202 || type === 203 ? 'copy' : type === 401 || type === 402 || type === 403 ? 'print' : undefined;
      if (!fn) continue;
      const colour = type % 100 === 1 ? 'mono' : 'colour';
      add(colour, n);
      add(`${fn}_${colour}`, n);
    }
    if (sums.total !== undefined) facts.page_count = { value: sums.total };
    if (sums.mono !== undefined) facts.mono_pages = { value: sums.mono };
    if (sums.colour !== undefined) facts.color_pages = { value: sums.colour };
    if (sums.scan !== undefined) facts.scan_count = { value: sums.scan };
    if (sums.copy !== undefined) facts.meters!.copy_pages = sums.copy;
    if (sums.print !== undefined) facts.meters!.print_pages = sums.print;
    if (sums.fax !== undefined) facts.meters!.fax_pages = sums.fax;
    for (const fn of ['print', 'copy']) {
      if (sums[`${fn}_mono`] !== undefined) facts.meters![`${fn}_mono_pages`] = sums[`${fn}_mono`];
      if (sums[`${fn}_colour`] !== undefined) facts.meters![`${fn}_color_pages`] = sums[`${fn}_colour`];
    }
    const caps: VendorFacts['capabilities'] = {};
    if (sums.copy) caps.is_copier = true;
    if (sums.fax) caps.is_fax = true;
    if (sums.scan) caps.is_scanner = true;
    facts.capabilities = caps;
    return facts;
  },
};
