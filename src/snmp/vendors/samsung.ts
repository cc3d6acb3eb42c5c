// Samsung (enterprise 236). Facts:
//   …236.11.5.11.53.31.1.4.0   model name (used only when the 1284 device ID has no MDL)
// Counters and serial come from Printer-MIB (prtMarkerLifeCount, prtGeneralSerialNumber).
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, presentOids } from './common.js';

export const SAMSUNG_OIDS = { model: '1.3.6.1.4.1.236.11.5.11.53.31.1.4.0' } as const;

export const samsung: VendorModule = {
  name: 'Samsung',
  enterprises: [236],
  match: /\bsamsung\b/i,
  getOids: Object.values(SAMSUNG_OIDS),
  parse({ values }): VendorFacts {
    return { oids: presentOids(values, SAMSUNG_OIDS, 'samsung'), model: firstText(values, [SAMSUNG_OIDS.model]) };
  },
};
