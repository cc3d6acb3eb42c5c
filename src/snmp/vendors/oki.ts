// OKI (enterprise 2001). OKI private MIB facts:
//   …2001.1.1.1.1.11.1.10.25.0   model; ….10.45.0 serial number
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, presentOids } from './common.js';

export const OKI_OIDS = {
  model: '1.3.6.1.4.1.2001.1.1.1.1.11.1.10.25.0',
  serial: '1.3.6.1.4.1.2001.1.1.1.1.11.1.10.45.0',
} as const;

export const oki: VendorModule = {
  name: 'OKI',
  enterprises: [2001],
  match: /\boki\b|okidata|oki\s*data/i,
  getOids: Object.values(OKI_OIDS),
  parse({ values }): VendorFacts {
    return {
      oids: presentOids(values, OKI_OIDS, 'oki'),
      model: firstText(values, [OKI_OIDS.model]),
      serial: firstText(values, [OKI_OIDS.serial]),
    };
  },
};
