// Epson (enterprise 1248). EPSON private MIB facts:
//   …1248.1.2.2.1.1.1.1.1        IEEE 1284 device ID
//   …1248.1.2.2.1.1.1.2.1        model
//   …1248.1.2.2.1.1.1.5.1        serial number
//   …1248.1.2.2.2.1.1.2.1.<n>    firmware table: version; ….3.1.<n> its name ("Main FW",
//                               "Printer FW", "Network FW", ...)
//   …1248.1.2.2.27.1.1.30.1.1    total pages; ….3.1.1 black & white; ….4.1.1 colour
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, numAt, presentOids } from './common.js';
import { column, textOf } from '../parse/values.js';

const FW = '1.3.6.1.4.1.1248.1.2.2.2.1.1';
const CNT = '1.3.6.1.4.1.1248.1.2.2.27.1.1';
export const EPSON_OIDS = {
  deviceId: '1.3.6.1.4.1.1248.1.2.2.1.1.1.1.1',
  model: '1.3.6.1.4.1.1248.1.2.2.1.1.1.2.1',
  serial: '1.3.6.1.4.1.1248.1.2.2.1.1.1.5.1',
  totalPages: `${CNT}.30.1.1`,
  monoPages: `${CNT}.3.1.1`,
  colorPages: `${CNT}.4.1.1`,
} as const;

export const epson: VendorModule = {
  name: 'Epson',
  enterprises: [1248],
  match: /\bepson\b/i,
  getOids: Object.values(EPSON_OIDS),
  walkRoots: [FW],
  parse({ values }): VendorFacts {
    const facts: VendorFacts = { oids: presentOids(values, EPSON_OIDS, 'epson') };
    facts.serial = firstText(values, [EPSON_OIDS.serial]);
    facts.model = firstText(values, [EPSON_OIDS.model]);
    // Firmware: the version whose name is the main/printer firmware.
    const names = column(values, `${FW}.3`);
    for (const [idx, v] of names) {
      if (/^(main|printer)\s*f\/?w/i.test(textOf(v) ?? '')) {
        const oid = `${FW}.2.${idx}`;
        const ver = textOf(values.get(oid));
        if (ver) {
          facts.firmware = { value: ver, oid };
          break;
        }
      }
    }
    facts.page_count = numAt(values, EPSON_OIDS.totalPages);
    facts.mono_pages = numAt(values, EPSON_OIDS.monoPages);
    facts.color_pages = numAt(values, EPSON_OIDS.colorPages);
    facts.capabilities = { is_inkjet: true, is_laser: false };
    return facts;
  },
};
