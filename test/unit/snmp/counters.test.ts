// Per-category counters and supply part numbers from real printers' recordings. Every
// expected number was read by hand from the recording (grep for the OID, the value written down;
// Brother's counters blob decoded record by record), never taken from the parser's output. A
// printer that reports no category counter has none: absent, never zero.
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { readHost } from '../../../src/snmp/scan.js';
import { parsePrinter, readPlan } from '../../../src/snmp/parse/printer.js';
import { partNumberOf } from '../../../src/snmp/parse/part-number.js';
import { readSnmprec } from '../../kit/snmprec.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';

const NOW = new Date(Date.UTC(2026, 10, 1));
const parse = (file: string) => parsePrinter(readSnmprec(fixturePath(file)), '192.0.2.10', NOW);

interface Expected {
  page_count?: number;
  mono_pages?: number;
  color_pages?: number;
  scan_count?: number;
  /** The category counters; undefined = the snapshot has none at all. */
  extra?: Record<string, number>;
}

// printmaster/kyocera_cs4053.snmprec (Kyocera, enterprise 1347):
//   prtMarkerLifeCount.1.1 = 76498
//   42.3.1.1.1.1.<f>: 1 print 40600, 2 copy 32971, 3 (other) 0, 4 fax 2493
//   42.3.1.2.1.1.<f>.<c> (c 1 b&w, 2 single colour, 3 full colour):
//     print 14730 / 0 / 25870, copy 19124 / 0 / 13847, f3 0 / 0 / 0, fax 2493
//     mono 14730+19124+0+2493 = 36347; full colour 25870+13847+0 = 39717; single colour 0
//   42.3.1.3.1.1.<f>: copy scans 10500 (f2), fax scans 948 (f4), f1 and f3 0; 42.3.1.4.1.1.1 = 219030
//     scan_count 0+10500+0+948+219030 = 230478
//   42.2.1.1.1.2.1.<s>: 1 "A3", 7 "Ledger" (the large sizes); 42.3.1.6.1.1.<f>.<s> at those sizes:
//     f1 s1 0, s7 3248; f2 s1 0, s7 250; f3 0, 0; f4 0, 0 -> 3498
const EXPECTED: Record<string, Expected> = {
  'printmaster/kyocera_cs4053.snmprec': {
    page_count: 76498, mono_pages: 36347, color_pages: 39717, scan_count: 230478,
    extra: {
      print_pages: 40600, copy_pages: 32971, fax_pages: 2493,
      print_mono_pages: 14730, print_color_pages: 25870, copy_mono_pages: 19124, copy_color_pages: 13847,
      full_color_pages: 39717, single_color_pages: 0, copy_scans: 10500, fax_scans: 948, large_format_pages: 3498,
    },
  },
  // Brother counters blob (2435.2.3.9.4.2.1.5.5.10.0), records code 01 len 04 value:
  //   00 0000064b = 1611 total, 02 00000386 = 902 colour, 01 000002c5 = 709 b&w, 06 0000021a = 538 duplex;
  //   prtMarkerLifeCount.1.1 = 1611.
  'brother/dcp-l3550cdw.snmprec': { page_count: 1611, mono_pages: 709, color_pages: 902, extra: { duplex_pages: 538 } },
  //   00 00000d38 = 3384, 02 00000c7f = 3199, 01 000000b9 = 185, 06 000005a5 = 1445.
  'brother/mfc-t910dw.snmprec': { page_count: 3384, mono_pages: 185, color_pages: 3199, extra: { duplex_pages: 1445 } },
  // No category counters: a total (prtMarkerLifeCount.1.1) and, where the only colorant is black, mono = total.
  'printmaster/kyocera_p2040.snmprec': { page_count: 7432, mono_pages: 7432 },
  'printmaster/epson_cw.snmprec': { page_count: 7389 },
  'printmaster/epson_sc.snmprec': { page_count: 145 },
  'brother/hl-l2340dw.snmprec': { page_count: 1279 },
  'librenms/ricoh_mpc3002.snmprec': { page_count: 271871 },
  'librenms/utax.snmprec': { page_count: 427, mono_pages: 427 },
  'librenms/xerox_altalink.snmprec': {},
  'linux-netsnmp.snmprec': {},
};

describe('category counters from recordings', () => {
  for (const [file, exp] of Object.entries(EXPECTED)) {
    it(file, () => {
      const { toner_levels: _levels, ...metrics } = parse(file).metrics;
      assert.deepEqual(metrics, exp);
    });
  }

  it('a counter the printer reports as 0 is kept (0), one it does not report is absent', () => {
    const { extra } = parse('printmaster/kyocera_cs4053.snmprec').metrics;
    assert.equal(extra?.single_color_pages, 0);
    assert.equal(Object.hasOwn(extra!, 'duplex_pages'), false);
    assert.equal(Object.hasOwn(extra!, 'two_color_pages'), false);
  });
});

// Part numbers as the recordings write them in prtMarkerSuppliesDescription (43.11.1.1.6.1.<n>).
const PART_NUMBERS: Record<string, Record<string, string> | undefined> = {
  // "TK-8527C", "TK-8527M", "TK-8527Y", "TK-8527K", "Waste Toner Box"
  'printmaster/kyocera_cs4053.snmprec': { cyan: 'TK-8527C', magenta: 'TK-8527M', yellow: 'TK-8527Y', black: 'TK-8527K' },
  // "TK-1162", "Waste Toner Box"
  'printmaster/kyocera_p2040.snmprec': { black: 'TK-1162' },
  // "PK-3010S" (a UTAX toner kit), "Waste Toner Box"
  'librenms/utax.snmprec': { black: 'PK-3010S' },
  // "Black Ink Cartridge SJIC35P-BK" ... "Maintenance Box SJMB6000/6500"
  'printmaster/epson_cw.snmprec': { black: 'SJIC35P-BK', cyan: 'SJIC35P-C', magenta: 'SJIC35P-M', yellow: 'SJIC35P-Y', waste_ink: 'SJMB6000/6500' },
  // "Black Toner, PN 006R01509;SN48178080E0000481" ... "Fuser, PN unknown;SNunknown" (no fuser entry)
  'librenms/xerox_altalink.snmprec': {
    black: '006R01509', cyan: '006R01512', magenta: '006R01511', yellow: '006R01510',
    drum: '013R00662', drum_2: '013R00662', drum_3: '013R00662', drum_4: '013R00662',
    waste_toner: '008R13061', belt: '001R00613', transfer_unit: '008R13064',
  },
  // Descriptions without a code: "Black Toner Cartridge", "Yellow Ink Cartridge", "Black Toner",
  // "Imaging Unit", "Black Drum Cartridge" ...; Brother's own supplies have no description text.
  'printmaster/brother.snmprec': undefined,
  'printmaster/epson_sc.snmprec': undefined,
  'librenms/ricoh_mpc3002.snmprec': undefined,
  'librenms/dell-laser_s5830dn.snmprec': undefined,
  'librenms/fujifilmprinter_c7580.snmprec': undefined,
  'brother/dcp-l3550cdw.snmprec': undefined,
};

describe('supply part numbers from recordings', () => {
  for (const [file, exp] of Object.entries(PART_NUMBERS)) {
    it(file, () => {
      const p = parse(file);
      assert.deepEqual(p.info.supply_part_numbers, exp);
      // Each part number sits on a supply the printer lists, under the key its level has.
      for (const key of Object.keys(exp ?? {})) assert.ok(p.info.consumables?.includes(key), key);
    });
  }
});

test('part numbers in descriptions: the order code, never a marketing name or a serial', () => {
  assert.equal(partNumberOf('HP 58A CF258A'), 'CF258A');
  assert.equal(partNumberOf('TK-895C'), 'TK-895C');
  assert.equal(partNumberOf('Cyan Toner, PN 006R01512;SN461E7A80E0000489'), '006R01512');
  assert.equal(partNumberOf('Fuser, PN unknown;SNunknown'), undefined);
  // Xerox B210's IPP marker name: a CRUM serial, not a part number (test/fixtures/ipp/xerox-b210.ipp).
  assert.equal(partNumberOf('Black Toner_S/N_:CRUM-230512A4EFED'), undefined);
  for (const none of ['Black Toner', 'Toner Cartridge 1', 'Drum Cartridge (R1)', 'Waste Toner Box', 'black ink', '', undefined]) {
    assert.equal(partNumberOf(none), undefined, String(none));
  }
});

const skipReason = ensureSnmpsim();
if (skipReason) console.log(`# snmpsim counters test skipped: ${skipReason}`);

describe('category counters through a real read (snmpsim)', { skip: skipReason ?? false }, () => {
  const ADDRESS = '127.77.59.1';
  let sim: SnmpSim;
  before(async () => {
    sim = await startSnmpSim({ endpoints: [{ address: ADDRESS, recording: fixturePath('printmaster/kyocera_cs4053.snmprec') }] });
  });
  after(async () => sim?.stop());

  it('the read plan fetches every table the Kyocera counters come from', async () => {
    const host = await readHost(ADDRESS, {
      credentials: [{ version: 'v2c', community: 'public' }], port: sim.port, timeoutMs: 3000,
      allowedRanges: ['127.0.0.0/8'], planRead: readPlan,
    });
    assert.ok(host && !host.partial, host?.errors.join('; '));
    const read = parsePrinter(host.values, ADDRESS, NOW);
    assert.deepEqual(read.metrics.extra, EXPECTED['printmaster/kyocera_cs4053.snmprec'].extra);
    assert.equal(read.metrics.scan_count, 230478);
  });
});
