// Lexmark (enterprise 641). LEXMARK-PVT-MIB / LEXMARK-MPS-MIB facts:
//   …641.2.1.2.1.2.1   printer name; ….4.1 code revision; ….6.1 serial number
//   …641.6.2.3.1.4.1   device model; ….5.1 device serial
//   …641.6.3.3.1.7.1.1 software (firmware) revision
import type { VendorFacts, VendorModule } from './types.js';
import { firstText, presentOids } from './common.js';

export const LEXMARK_OIDS = {
  printerName: '1.3.6.1.4.1.641.2.1.2.1.2.1',
  codeRevision: '1.3.6.1.4.1.641.2.1.2.1.4.1',
  serial: '1.3.6.1.4.1.641.2.1.2.1.6.1',
  mpsModel: '1.3.6.1.4.1.641.6.2.3.1.4.1',
  mpsSerial: '1.3.6.1.4.1.641.6.2.3.1.5.1',
  swRevision: '1.3.6.1.4.1.641.6.3.3.1.7.1.1',
} as const;

export const lexmark: VendorModule = {
  name: 'Lexmark',
  enterprises: [641],
  match: /\blexmark\b/i,
  getOids: Object.values(LEXMARK_OIDS),
  parse({ values }): VendorFacts {
    const model = firstText(values, [LEXMARK_OIDS.mpsModel, LEXMARK_OIDS.printerName]);
    if (model) model.value = model.value.replace(/^lexmark\s+/i, '');
    return {
      oids: presentOids(values, LEXMARK_OIDS, 'lexmark'),
      serial: firstText(values, [LEXMARK_OIDS.mpsSerial, LEXMARK_OIDS.serial]),
      model,
      firmware: firstText(values, [LEXMARK_OIDS.swRevision, LEXMARK_OIDS.codeRevision]),
    };
  },
};
