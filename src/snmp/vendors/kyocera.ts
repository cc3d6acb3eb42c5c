// Kyocera (enterprise 1347). KYOCERA-MIB facts:
//   …1347.40.1.1.1.8.1            IEEE 1284 device ID
//   …1347.40.10.1.1.5.1           host name
//   …1347.43.5.1.1.1.1            model name; ….28.1 serial number
//   …1347.43.5.4.1.5.1.1          main firmware version
//   …1347.43.10.1.1.12.1.1        total printed pages
//   …1347.42.2.1.1.1.2.1.<s>      the name the printer gives paper size s ("A3", "Ledger", "A4" ...)
//   …1347.42.3.1.1.1.1.<f>        pages by function f (1 printer, 2 copy, 4 fax), device 1
//   …1347.42.3.1.2.1.1.<f>.<c>    pages by function and colour mode c (1 black & white,
//                                 2 single colour, 3 full colour)
//   …1347.42.3.1.3.1.1.<f>        scans by function (2 copy, 4 fax); ….4.1.1.1 other scans
//   …1347.42.3.1.6.1.1.<f>.<s>    pages by function and paper size s, all colour modes (columns
//                                 2, 3, 4 of the same table split it by colour mode; column 1 is
//                                 their sum in every recording)
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, numAt, numColumn, presentOids } from './common.js';
import { column, textOf } from '../parse/values.js';

const K = '1.3.6.1.4.1.1347';
const BY_FUNCTION = `${K}.42.3.1.1.1.1`;
const BY_FUNCTION_COLOUR = `${K}.42.3.1.2.1.1`;
const SCANS = `${K}.42.3.1.3.1.1`;
const OTHER_SCANS = `${K}.42.3.1.4.1.1`;
const SIZE_NAMES = `${K}.42.2.1.1.1.2.1`;
const BY_FUNCTION_SIZE = `${K}.42.3.1.6.1.1`;

export const KYOCERA_OIDS = {
  deviceId: `${K}.40.1.1.1.8.1`,
  hostname: `${K}.40.10.1.1.5.1`,
  model: `${K}.43.5.1.1.1.1`,
  serial: `${K}.43.5.1.1.28.1`,
  firmware: `${K}.43.5.4.1.5.1.1`,
  totalPrinted: `${K}.43.10.1.1.12.1.1`,
} as const;

const FUNCTIONS: Record<string, string> = { '1': 'print', '2': 'copy', '4': 'fax' };
const SCAN_FUNCTIONS: Record<string, string> = { '2': 'copy_scans', '4': 'fax_scans' };

/** A paper size a dealer bills as large format: A3 and larger, SRA3, Ledger/Tabloid (11x17), 12x18. */
export const LARGE_FORMAT = /^\s*(sr)?a[0-3]\b|^\s*(ledger|tabloid|11\s*x\s*17|12\s*x\s*18)\b/i;

export const kyocera: VendorModule = {
  name: 'Kyocera',
  enterprises: [1347],
  match: /\bkyocera\b|\bmita\b/i,
  getOids: Object.values(KYOCERA_OIDS),
  // The page and scan tables, the size names and the all-modes column of pages by size (4
  // functions x 14 sizes); the rest of 42.3.1.6 (the same by colour mode) is not read.
  walkRoots: [`${K}.42.3.1.1`, `${K}.42.3.1.2`, `${K}.42.3.1.3`, `${K}.42.3.1.4`, SIZE_NAMES, BY_FUNCTION_SIZE],
  parse({ values }): VendorFacts {
    const facts: VendorFacts = { oids: presentOids(values, KYOCERA_OIDS, 'kyocera'), meters: {} };
    const m = facts.meters!;
    facts.serial = firstText(values, [KYOCERA_OIDS.serial]);
    facts.model = firstText(values, [KYOCERA_OIDS.model]);
    facts.firmware = firstText(values, [KYOCERA_OIDS.firmware]);
    facts.hostname = firstText(values, [KYOCERA_OIDS.hostname]);
    facts.page_count = numAt(values, KYOCERA_OIDS.totalPrinted);
    const caps: VendorFacts['capabilities'] = {};
    for (const [f, n] of numColumn(values, BY_FUNCTION)) {
      const name = FUNCTIONS[f];
      if (!name) continue;
      m[`${name}_pages`] = n;
      if (f === '2' && n > 0) caps.is_copier = true;
      if (f === '4' && n > 0) caps.is_fax = true;
    }
    const rows = numColumn(values, BY_FUNCTION_COLOUR);
    if (rows.length > 0) {
      const sums: Record<string, number> = {};
      const add = (k: string, n: number) => (sums[k] = (sums[k] ?? 0) + n);
      for (const [suffix, n] of rows) {
        const [f, mode] = suffix.split('.');
        const colour = mode === '1' ? 'mono' : mode === '2' || mode === '3' ? 'color' : undefined;
        if (!colour) continue;
        add(colour, n);
        if (mode === '2') add('single_color', n);
        if (mode === '3') add('full_color', n);
        if (FUNCTIONS[f] === 'print' || FUNCTIONS[f] === 'copy') add(`${FUNCTIONS[f]}_${colour}`, n);
      }
      facts.mono_pages = { value: sums.mono ?? 0 };
      facts.color_pages = { value: sums.color ?? 0 };
      for (const k of ['full_color', 'single_color', 'print_mono', 'print_color', 'copy_mono', 'copy_color']) {
        if (sums[k] !== undefined) m[`${k}_pages`] = sums[k];
      }
      facts.oids!.kyocera_pages_by_function_colour = BY_FUNCTION_COLOUR;
    }
    const scans = [...numColumn(values, SCANS), ...numColumn(values, OTHER_SCANS)];
    if (scans.length > 0) {
      const total = scans.reduce((a, [, n]) => a + n, 0);
      facts.scan_count = { value: total };
      if (total > 0) caps.is_scanner = true;
      for (const [f, n] of numColumn(values, SCANS)) if (SCAN_FUNCTIONS[f]) m[SCAN_FUNCTIONS[f]] = n;
    }
    // Large format: the pages of every function on the sizes the printer names A3, Ledger ...
    const large = new Set(column(values, SIZE_NAMES).filter(([, v]) => LARGE_FORMAT.test(textOf(v) ?? '')).map(([s]) => s));
    const bySize = numColumn(values, BY_FUNCTION_SIZE);
    if (large.size > 0 && bySize.length > 0) {
      m.large_format_pages = bySize.filter(([suffix]) => large.has(suffix.split('.')[1]!)).reduce((a, [, n]) => a + n, 0);
      facts.oids!.kyocera_pages_by_function_size = BY_FUNCTION_SIZE;
    }
    facts.capabilities = caps;
    return facts;
  },
};
