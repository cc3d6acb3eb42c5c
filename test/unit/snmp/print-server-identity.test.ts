// Print-server identity: the name a printer gives itself (1284 MFG/MDL, hrDeviceDescr)
// wins over the sysObjectID enterprise number, which may be a print-server card's: third-party
// cards and many non-HP printers' own network cards answer HP's JetDirect OID
// 1.3.6.1.4.1.11.2.3.9.1. The enterprise number still picks the private MIB a rebadged line
// answers (an HP on a Samsung platform reads Samsung's counters). Each row is a table line:
// what the device answers, and what a technician reading the label would write down.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePrinter, readPlan } from '../../../src/snmp/parse/printer.js';
import type { OidValues, SnmpValue } from '../../../src/snmp/types.js';

const NOW = new Date('2026-01-02T03:04:05Z');
const JETDIRECT = '1.3.6.1.4.1.11.2.3.9.1';
const str = (s: string): SnmpValue => ({ type: 'str', value: s });

interface Row {
  what: string;
  sysObjectID: string;
  sysDescr: string;
  hrDeviceDescr?: string;
  /** IEEE 1284 device ID, in ppmPrinterIEEE1284DeviceId (PWG Port Monitor MIB) unless `idOid` says. */
  deviceId?: string;
  idOid?: string;
  manufacturer: string | undefined;
  model: string | undefined;
  /** The vendor module whose private MIB is read (undefined: none). */
  module: string | undefined;
}

const rows: Row[] = [
  {
    what: 'a real HP: JetDirect OID, HP texts everywhere',
    sysObjectID: JETDIRECT,
    sysDescr: 'HP ETHERNET MULTI-ENVIRONMENT,ROM none,JETDIRECT,JD153,EEPROM JSI24090012,CIDATE 10/17/2019',
    hrDeviceDescr: 'HP Color LaserJet MFP M479fdw',
    deviceId: 'MFG:HP;MDL:HP Color LaserJet MFP M479fdw;CMD:PJL,PCL,PCLXL,POSTSCRIPT,PDF,PWGRaster,URF;CLS:PRINTER;DES:HP Color LaserJet MFP M479fdw;',
    manufacturer: 'HP',
    model: 'Color LaserJet MFP M479fdw',
    module: 'HP',
  },
  {
    what: 'a Brother behind an external JetDirect box: the card speaks for itself, the printer through 1284',
    sysObjectID: JETDIRECT,
    sysDescr: 'HP ETHERNET MULTI-ENVIRONMENT,ROM J.08.52,JETDIRECT EX,JD28,EEPROM J.08.52',
    hrDeviceDescr: 'Brother HL-5450DN series',
    deviceId: 'MFG:Brother;CMD:PJL,PCL,PCLXL;MDL:HL-5450DN series;CLS:PRINTER;',
    idOid: '1.3.6.1.4.1.11.2.3.9.1.1.7.0',
    manufacturer: 'Brother',
    model: 'HL-5450DN',
    module: 'Brother',
  },
  {
    what: 'a Kyocera whose own card claims the JetDirect OID; hrDeviceDescr without the brand',
    sysObjectID: JETDIRECT,
    sysDescr: 'KYOCERA Document Solutions Printing System',
    hrDeviceDescr: 'ECOSYS P3045dn',
    deviceId: 'MFG:Kyocera;CMD:PJL,PCLXL,PCL5E,POSTSCRIPT,PDF;MDL:ECOSYS P3045dn;CLS:PRINTER;',
    manufacturer: 'Kyocera',
    model: 'ECOSYS P3045dn',
    module: 'Kyocera',
  },
  {
    what: 'an Epson behind a JetDirect-OID card, no 1284 ID: hrDeviceDescr names it',
    sysObjectID: JETDIRECT,
    sysDescr: 'EPSON Built-in 10Base-T/100Base-TX Print Server',
    hrDeviceDescr: 'EPSON WF-C5790 Series',
    manufacturer: 'Epson',
    model: 'WF-C5790',
    module: 'Epson',
  },
  {
    what: 'a printer with no hrDeviceDescr: the 1284 ID alone names it',
    sysObjectID: JETDIRECT,
    sysDescr: 'Network Printer',
    deviceId: 'MFG:EPSON;CMD:ESCPL2,BDC,D4,D4PX,ESCPR7,END4,GENEP,URF;MDL:ET-4750 Series;CLS:PRINTER;DES:EPSON ET-4750 Series;',
    manufacturer: 'Epson',
    model: 'ET-4750',
    module: 'Epson',
  },
  {
    what: 'a generic "Network Printer" card in front of a Lexmark that has no 1284 ID',
    sysObjectID: JETDIRECT,
    sysDescr: 'Network Printer',
    hrDeviceDescr: 'Lexmark MS610dn',
    manufacturer: 'Lexmark',
    model: 'MS610dn',
    module: 'Lexmark',
  },
  {
    what: 'a maker without a vendor module behind a JetDirect-OID card: its 1284 MFG, as written',
    sysObjectID: JETDIRECT,
    sysDescr: 'Network Printer',
    deviceId: 'MFG:Pantum;CMD:PJL,PCL5E,PCLXL,URF;MDL:P3300DW;CLS:PRINTER;',
    manufacturer: 'Pantum',
    model: 'P3300DW',
    module: undefined,
  },
  {
    what: 'a card whose 1284 MFG names nobody: hrDeviceDescr decides',
    sysObjectID: JETDIRECT,
    sysDescr: 'Network Printer',
    hrDeviceDescr: 'Samsung M2070 Series',
    deviceId: 'MFG:Generic;MDL:Network Printer;CLS:PRINTER;',
    manufacturer: 'Samsung',
    model: 'M2070',
    module: 'Samsung',
  },
  {
    what: 'nothing but a generic card and the JetDirect OID: the enterprise number is all there is',
    sysObjectID: JETDIRECT,
    sysDescr: 'Network Printer',
    manufacturer: 'HP',
    model: undefined,
    module: 'HP',
  },
  {
    what: 'an HP on a Samsung platform: HP on the label, Samsung\'s private MIB read',
    sysObjectID: '1.3.6.1.4.1.236.11.5.1',
    sysDescr: 'HP LaserJet MFP M433a; V3.82.01.10 OCT-29-2018;Engine V1.00.09;NIC V6.01.00;S/N CNB1234567',
    hrDeviceDescr: 'HP LaserJet MFP M433a',
    manufacturer: 'HP',
    model: 'LaserJet MFP M433a',
    module: 'Samsung',
  },
  {
    what: 'a Brother under its own enterprise number',
    sysObjectID: '1.3.6.1.4.1.2435.2.3.9.1',
    sysDescr: 'Brother NC-8300h, Firmware Ver.1.09  (08.12.03),MID 8C5-E05,FID 2',
    hrDeviceDescr: 'Brother HL-L8260CDW series',
    deviceId: 'MFG:Brother;CMD:PJL,PCL,PCLXL,URF;MDL:HL-L8260CDW series;CLS:PRINTER;CID:Brother Laser Type1;',
    manufacturer: 'Brother',
    model: 'HL-L8260CDW',
    module: 'Brother',
  },
];

function values(r: Row): OidValues {
  const v: OidValues = new Map();
  v.set('1.3.6.1.2.1.1.1.0', str(r.sysDescr));
  v.set('1.3.6.1.2.1.1.2.0', { type: 'oid', value: r.sysObjectID });
  if (r.hrDeviceDescr) v.set('1.3.6.1.2.1.25.3.2.1.3.1', str(r.hrDeviceDescr));
  if (r.deviceId) v.set(r.idOid ?? '1.3.6.1.4.1.2699.1.2.1.2.1.1.3.1', str(r.deviceId));
  return v;
}

describe('print-server identity: the printer\'s own name wins over a card\'s enterprise number', () => {
  for (const r of rows) {
    it(`${r.what} -> ${r.manufacturer} ${r.model ?? '(no model)'}`, () => {
      const v = values(r);
      const p = parsePrinter(v, '127.0.1.1', NOW);
      assert.equal(p.info.manufacturer, r.manufacturer, 'manufacturer');
      assert.equal(p.info.model, r.model, 'model');
      assert.equal(p.vendor, r.module, 'vendor module parsed');
      // The quick identify plans the full read with the same module: its private OIDs are the ones fetched.
      assert.equal(readPlan(v).vendor, r.module, 'vendor module planned');
    });
  }
});
