// Sharp (enterprise 2385). Identification only: no public, verifiable facts about Sharp's
// private counter/serial OIDs were found, so Sharp devices are read through Printer-MIB and
// HOST-RESOURCES-MIB alone.
import type { VendorModule } from './types.js';

export const sharp: VendorModule = {
  name: 'Sharp',
  enterprises: [2385],
  match: /\bsharp\b/i,
};
