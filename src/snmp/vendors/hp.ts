// HP (enterprise 11). HP-LASERJET-COMMON-MIB facts (as used by GLPI agent / hplip):
//   …11.2.3.9.1.1.7.0            gdStatusId: IEEE 1284 device ID
//   …11.2.3.9.4.2.1.1.3.2.0      model name
//   …11.2.3.9.4.2.1.1.3.3.0      serial number
//   …11.2.3.9.4.2.1.1.3.6.0      firmware ROM revision
//   …11.2.3.9.4.2.1.4.1.2.5.0    total engine page count
//   …11.2.3.9.4.2.1.4.1.2.7.0    total colour page count
//   …11.2.3.9.4.2.1.4.1.2.22.0   duplex page count
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, numAt, presentOids } from './common.js';

const D = '1.3.6.1.4.1.11.2.3.9.4.2.1';
export const HP_OIDS = {
  deviceId: '1.3.6.1.4.1.11.2.3.9.1.1.7.0',
  model: `${D}.1.3.2.0`,
  serial: `${D}.1.3.3.0`,
  firmware: `${D}.1.3.6.0`,
  totalPages: `${D}.4.1.2.5.0`,
  colorPages: `${D}.4.1.2.7.0`,
  duplexPages: `${D}.4.1.2.22.0`,
} as const;

export const hp: VendorModule = {
  name: 'HP',
  enterprises: [11, 26696],
  match: /\b(hp|hewlett[-\s]?packard)\b/i,
  getOids: Object.values(HP_OIDS),
  parse({ values }): VendorFacts {
    const facts: VendorFacts = { oids: presentOids(values, HP_OIDS, 'hp'), meters: {} };
    facts.serial = firstText(values, [HP_OIDS.serial]);
    facts.model = firstText(values, [HP_OIDS.model]);
    facts.firmware = firstText(values, [HP_OIDS.firmware]);
    facts.page_count = numAt(values, HP_OIDS.totalPages);
    facts.color_pages = numAt(values, HP_OIDS.colorPages);
    // HP's engine total counts colour pages too; mono is the difference.
    if (facts.page_count && facts.color_pages && facts.page_count.value >= facts.color_pages.value) {
      facts.mono_pages = { value: facts.page_count.value - facts.color_pages.value };
    }
    const duplex = numAt(values, HP_OIDS.duplexPages);
    if (duplex) {
      facts.meters!.duplex_pages = duplex.value;
      facts.capabilities = { has_duplex: true };
    }
    return facts;
  },
};
