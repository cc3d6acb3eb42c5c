// Kyocera (enterprise 1347). KYOCERA-MIB facts:
//   …1347.40.1.1.1.8.1            IEEE 1284 device ID
//   …1347.40.10.1.1.5.1           host name
//   …1347.43.5.1.1.1.1            model name; ….28.1 serial number
//   …1347.43.5.4.1.5.1.1          main firmware version
//   …1347.43.10.1.1.12.1.1        total printed pages
//   …1347.42.3.1.1.1.1.<f>        pages by function f (1 printer, 2 copy, 4 fax), device 1
//   …1347.42.3.1.2.1.1.<f>.<c>    pages by function and colour mode c (1 black & white,
//                                 2 single colour, 3 full colour)
//   …1347.42.3.1.3.1.1.<f>        scans by function (2 copy, 4 fax); ….4.1.1.1 other scans
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, numAt, numColumn, presentOids } from './common.js';

const K = '1.3.6.1.4.1.1347';
const BY_FUNCTION = `${K}.42.3.1.1.1.1`;
const BY_FUNCTION_COLOUR = `${K}.42.3.1.2.1.1`;
const SCANS = `${K}.42.3.1.3.1.1`;
const OTHER_SCANS = `${K}.42.3.1.4.1.1`;
export const KYOCERA_OIDS = {
  deviceId: `${K}.40.1.1.1.8.1`,
  hostname: `${K}.40.10.1.1.5.1`,
  model: `${K}.43.5.1.1.1.1`,
  serial: `${K}.43.5.1.1.28.1`,
  firmware: `${K}.43.5.4.1.5.1.1`,
  totalPrinted: `${K}.43.10.1.1.12.1.1`,
} as const;

const FUNCTIONS: Record<string, string> = { '1': 'print_pages', '2': 'copy_pages', '4': 'fax_pages' };

export const kyocera: VendorModule = {
  name: 'Kyocera',
  enterprises: [1347],
  match: /\bkyocera\b|\bmita\b/i,
  getOids: Object.values(KYOCERA_OIDS),
  // Only the page and scan tables; 42.3.1.6 (pages by paper size) is large and unused.
  walkRoots: [`${K}.42.3.1.1`, `${K}.42.3.1.2`, `${K}.42.3.1.3`, `${K}.42.3.1.4`],
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
      m[name] = n;
      if (f === '2' && n > 0) caps.is_copier = true;
      if (f === '4' && n > 0) caps.is_fax = true;
    }
    const rows = numColumn(values, BY_FUNCTION_COLOUR);
    if (rows.length > 0) {
      let mono = 0;
      let colour = 0;
      for (const [suffix, n] of rows) {
        const mode = suffix.split('.')[1];
        if (mode === '1') mono += n;
        else if (mode === '2' || mode === '3') colour += n;
      }
      facts.mono_pages = { value: mono };
      facts.color_pages = { value: colour };
      facts.oids!.kyocera_pages_by_function_colour = BY_FUNCTION_COLOUR;
    }
    const scans = [...numColumn(values, SCANS), ...numColumn(values, OTHER_SCANS)];
    if (scans.length > 0) {
      const total = scans.reduce((a, [, n]) => a + n, 0);
      facts.scan_count = { value: total };
      if (total > 0) caps.is_scanner = true;
    }
    facts.capabilities = caps;
    return facts;
  },
};
