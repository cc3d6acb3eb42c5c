// A printer read only over IPP is listed with device_type "printer", as one read by SNMP is
// (printer_info.device_type; SNMP's parse sets it from Printer-MIB/hrDevicePrinter evidence).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { decodeIppResponse, printerStateOf } from '../../../src/ipp/codec.js';
import { ippObservation } from '../../../src/ipp/observation.js';
import { repoRoot } from '../../kit/snmpsim.js';

it('an IPP-only printer has printer_info.device_type "printer"', () => {
  const state = printerStateOf(decodeIppResponse(readFileSync(join(repoRoot(), 'test', 'fixtures', 'ipp', 'xerox-b210.ipp'))));
  const o = ippObservation({ ip: '192.0.2.7', port: 631, tls: false, state, now: Date.UTC(2026, 0, 2) });
  assert.ok(o);
  assert.equal(o.printerInfo.device_type, 'printer');
});
