// Zebra (enterprise 10642) label printers, read directly or through a ZebraNet print server
// (ESI-MIB, enterprise 683). The printer's own MIB names the printer; the print server's MIB
// names the card, and those are kept apart (print_server): the card's name is not the printer's.
//   10642.200.19.5.0   printer serial number        10642.200.19.7.0   printer model
//   10642.1.2.0        printer firmware
//   683.1.3.0          print server product name    683.1.9.0          print server firmware
import { firstText } from './common.js';
import { text } from '../parse/values.js';
import type { VendorFacts, VendorModule } from './types.js';

export const ZEBRA_OIDS = {
  serial: '1.3.6.1.4.1.10642.200.19.5.0',
  model: '1.3.6.1.4.1.10642.200.19.7.0',
  firmware: '1.3.6.1.4.1.10642.1.2.0',
  printServerName: '1.3.6.1.4.1.683.1.3.0',
  printServerFirmware: '1.3.6.1.4.1.683.1.9.0',
} as const;

export const zebra: VendorModule = {
  name: 'Zebra',
  enterprises: [10642],
  // "ZebraNet" print servers (ESI, enterprise 683) name themselves in sysDescr.
  match: /\bzebra|^ztc\s/i,
  getOids: Object.values(ZEBRA_OIDS),
  parse({ values }): VendorFacts {
    const facts: VendorFacts = {
      serial: firstText(values, [ZEBRA_OIDS.serial]),
      model: firstText(values, [ZEBRA_OIDS.model]),
      firmware: firstText(values, [ZEBRA_OIDS.firmware]),
    };
    const name = text(values, ZEBRA_OIDS.printServerName);
    if (name) facts.print_server = { model: name, firmware: text(values, ZEBRA_OIDS.printServerFirmware) };
    return facts;
  },
};
