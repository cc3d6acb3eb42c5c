// Printer evidence: a host that answers SNMP is listed as a printer only when it shows itself as
// one (Printer-MIB, hrDevicePrinter, hrPrinterStatus, a 1284 Device ID, printer data in a maker's
// MIB). Every real printer's recording must pass; a Linux server running Net-SNMP
// (test/fixtures/snmp/linux-netsnmp.snmprec, recorded from Debian's snmpd) must not. Then the same
// through the real read path: snmpsim serves the recordings on loopback, readHost reads them with
// the read plan, and the evidence is taken from what came back.
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { printerEvidence, readPlan } from '../../../src/snmp/parse/printer.js';
import { IDENTITY_GET_OIDS, HR_DEVICE_TYPE, HR_PRINTER_STATUS, VENDOR_DEVICE_ID_OIDS, PPM_PRINTER_IEEE1284_DEVICE_ID } from '../../../src/snmp/oids.js';
import { readHost } from '../../../src/snmp/scan.js';
import type { OidValues, SnmpValue } from '../../../src/snmp/types.js';
import { deriveSnmprec, parseSnmprec, readSnmprec } from '../../kit/snmprec.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { readFileSync } from 'node:fs';

/** Recordings of devices that are not printers. */
const NOT_PRINTERS = new Set(['linux-netsnmp.snmprec']);

function recordings(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...recordings(p));
    else if (name.endsWith('.snmprec')) out.push(p);
  }
  return out.sort();
}

const ROOT = fixturePath('');
const ALL = recordings(ROOT).map((p) => relative(ROOT, p));
const PRINTERS = ALL.filter((r) => !NOT_PRINTERS.has(r));

describe('printer evidence from recordings', () => {
  it('the fixtures hold printer recordings and the Net-SNMP host', () => {
    assert.ok(PRINTERS.length >= 20, `found ${PRINTERS.length} printer recordings`);
    assert.ok(ALL.includes('linux-netsnmp.snmprec'));
  });

  for (const rec of PRINTERS) {
    it(`${rec} is a printer`, () => {
      const e = printerEvidence(readSnmprec(fixturePath(rec)));
      assert.equal(e.printer, true, e.printer ? '' : e.why);
      if (e.printer) assert.ok(e.reasons.length > 0);
    });
  }

  it('a Linux server running Net-SNMP is not a printer, and the reason names what it is', () => {
    const e = printerEvidence(readSnmprec(fixturePath('linux-netsnmp.snmprec')));
    assert.equal(e.printer, false);
    if (e.printer) return;
    assert.match(e.why, /^answers SNMP \(sysDescr "Linux vm /);
    assert.match(e.why, /sysObjectID 1\.3\.6\.1\.4\.1\.8072\.3\.2\.10/);
    assert.match(e.why, /no Printer-MIB, no hrDevicePrinter, no hrPrinterStatus, no 1284 Device ID/);
    assert.match(e.why, /hrDeviceTable lists 2 processor, 3 network, 1 coprocessor/);
  });

  it('each kind of evidence alone makes the Linux host a printer', () => {
    const linux = readFileSync(fixturePath('linux-netsnmp.snmprec'), 'utf8');
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['a Printer-MIB value', { '1.3.6.1.2.1.43.10.2.1.4.1.1': '65|1234' }, /Printer-MIB answered \(prtMarker\)/],
      ['an hrDevicePrinter row', { '1.3.6.1.2.1.25.3.2.1.2.1': '6|1.3.6.1.2.1.25.3.1.5', '1.3.6.1.2.1.25.3.2.1.3.1': '4|Acme Laser' }, /hrDeviceType\.1 = hrDevicePrinter \("Acme Laser"\)/],
      ['an hrPrinterStatus row', { '1.3.6.1.2.1.25.3.5.1.1.1': '2|3' }, /hrPrinterStatus answered \(row 1\)/],
      ['a 1284 Device ID in the PWG MIB', { [`${PPM_PRINTER_IEEE1284_DEVICE_ID}.1`]: '4|MFG:Acme;MDL:Laser 9;CLS:PRINTER;' }, /IEEE 1284 Device ID .*"Acme Laser 9"/],
      ['a 1284 Device ID at HP\'s OID', { '1.3.6.1.4.1.11.2.3.9.1.1.7.0': '4|MFG:HP;MDL:LaserJet 4000;' }, /IEEE 1284 Device ID at 1\.3\.6\.1\.4\.1\.11\.2\.3\.9\.1\.1\.7\.0/],
      ['an HP engine page count under an HP identity', { '1.3.6.1.2.1.1.2.0': '6|1.3.6.1.4.1.11.2.3.9.1', '1.3.6.1.4.1.11.2.3.9.4.2.1.4.1.2.5.0': '2|4321' }, /HP printer MIB: page counters/],
    ];
    for (const [what, change, reason] of cases) {
      const e = printerEvidence(parseSnmprec(deriveSnmprec(linux, change)));
      assert.equal(e.printer, true, what);
      if (e.printer) assert.ok(e.reasons.some((r) => reason.test(r)), `${what}: ${e.reasons.join(' | ')}`);
    }
  });

  it('what is not evidence: a maker\'s enterprise number, a vendor model string, NULL answers, a non-printer hrDevice row', () => {
    const linux = readFileSync(fixturePath('linux-netsnmp.snmprec'), 'utf8');
    const notEvidence: Array<[string, Record<string, string>]> = [
      // An HP switch answers HP's enterprise number; a model OID alone is no printer data.
      ['HP enterprise and an HP model string', { '1.3.6.1.2.1.1.2.0': '6|1.3.6.1.4.1.11.2.3.7.11.160', '1.3.6.1.4.1.11.2.3.9.4.2.1.1.3.2.0': '4|Switch 2530' }],
      ['a NULL under the Printer-MIB', { '1.3.6.1.2.1.43.5.1.1.17.1': '5|' }],
      ['a 1284 Device ID that names nobody', { [`${PPM_PRINTER_IEEE1284_DEVICE_ID}.1`]: '4|CMD:PJL;' }],
      ['an hrDevice row of another type', { '1.3.6.1.2.1.25.3.2.1.2.9': '6|1.3.6.1.2.1.25.3.1.6' }],
    ];
    for (const [what, change] of notEvidence) {
      const e = printerEvidence(parseSnmprec(deriveSnmprec(linux, change)));
      assert.equal(e.printer, false, what);
    }
  });

  it('bad input never throws: empty, binary and wrongly typed values', () => {
    const str = (s: string): SnmpValue => ({ type: 'str', value: s });
    const odd: OidValues = new Map<string, SnmpValue>([
      ['1.3.6.1.2.1.1.2.0', { type: 'int', value: 5 }],
      ['1.3.6.1.2.1.1.1.0', { type: 'hex', value: Buffer.from([0xff, 0x00, 0x01]) }],
      ['1.3.6.1.2.1.25.3.2.1.2.1', { type: 'int', value: 5 }],
      ['1.3.6.1.4.1.11.2.3.9.1.1.7.0', { type: 'hex', value: Buffer.from([0xc3, 0x28]) }],
      ['1.3.6.1.4.1.2435.2.3.9.4.2.1.5.5.10.0', str('garbage')],
    ]);
    assert.equal(printerEvidence(new Map()).printer, false);
    assert.equal(printerEvidence(odd).printer, false);
    const none = printerEvidence(new Map());
    assert.ok(!none.printer && /no sysDescr/.test(none.why));
  });
});

describe('the read plan reads what the evidence needs', () => {
  const identity = readSnmprec(fixturePath('linux-netsnmp.snmprec'));
  const plan = readPlan(identity);
  const covered = (oid: string) => IDENTITY_GET_OIDS.includes(oid) || plan.gets.includes(oid) || plan.walks.some((w) => oid.startsWith(`${w}.`));
  it('Printer-MIB, hrDeviceType, hrPrinterStatus and every 1284 Device ID OID', () => {
    for (const oid of [`${HR_DEVICE_TYPE}.196608`, `${HR_PRINTER_STATUS}.1`, '1.3.6.1.2.1.43.5.1.1.17.1', '1.3.6.1.2.1.43.10.2.1.4.1.1', '1.3.6.1.2.1.43.11.1.1.9.1.1', `${PPM_PRINTER_IEEE1284_DEVICE_ID}.1`, ...VENDOR_DEVICE_ID_OIDS]) {
      assert.ok(covered(oid), `${oid} is read`);
    }
  });
});

const skip = ensureSnmpsim();
describe('printer evidence through the real read path (snmpsim on loopback, readHost, readPlan)', { skip: skip ?? false }, () => {
  const HOSTS = [
    { address: '127.0.41.1', file: 'linux-netsnmp.snmprec', printer: false },
    { address: '127.0.41.2', file: 'printmaster/kyocera_p2040.snmprec', printer: true },
    { address: '127.0.41.3', file: 'printmaster/epson_sc.snmprec', printer: true },
    { address: '127.0.41.4', file: 'brother/hl-l2340dw.snmprec', printer: true },
  ];
  let sim: SnmpSim;
  before(async () => {
    sim = await startSnmpSim({ endpoints: HOSTS.map((h) => ({ address: h.address, recording: fixturePath(h.file) })) });
  });
  after(async () => {
    await sim?.stop();
  });
  for (const h of HOSTS) {
    it(`${h.file} read over UDP: ${h.printer ? 'a printer' : 'not a printer'}`, async () => {
      const host = await readHost(h.address, {
        credentials: [{ version: 'v2c', community: sim.community }],
        port: sim.port,
        // Generous: snmpsim indexes a recording on its first request, on a shared machine.
        timeoutMs: 5000,
        allowedRanges: ['127.0.0.0/8'],
        planRead: (identity, address) => readPlan(identity, address),
      });
      assert.ok(host, 'the host answered');
      assert.equal(host.partial, false, host.errors.join('; '));
      const e = printerEvidence(host.values);
      assert.equal(e.printer, h.printer, e.printer ? e.reasons.join(' | ') : e.why);
      if (!e.printer) assert.match(e.why, /Linux vm .*hrDeviceTable lists/);
    });
  }
});
