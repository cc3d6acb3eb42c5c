// More IPP replies recorded from real printers (test/fixtures/ipp/README.md: gmuth/ipp-client-kotlin,
// MIT): a Xerox B210 idle, out of toner and jammed, and a Brother QL-1110NWB label printer, each
// decoded by the agent's one IPP codec and mapped to an observation. Every expectation was written
// by hand from the reply's attributes (ipp-client-kotlin's .res.txt listings beside the files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeIppResponse, printerStateOf } from '../../../src/ipp/codec.js';
import { ippMetrics, ippObservation } from '../../../src/ipp/observation.js';
import { repoRoot } from '../../kit/snmpsim.js';

const reply = (name: string) => readFileSync(join(repoRoot(), 'test', 'fixtures', 'ipp', name));
const observe = (name: string, ip: string) => {
  const s = printerStateOf(decodeIppResponse(reply(name)));
  const o = ippObservation({ ip, port: 631, tls: false, state: s, now: Date.parse('2026-01-02T03:04:05Z') });
  assert.ok(o, `${name} gives an observation`);
  return { s, o };
};

test('Xerox B210, idle: identity from make-and-model and the Device ID, one black toner at 62 %, keyed by printer-uuid', () => {
  const { s, o } = observe('xerox-b210.ipp', '192.0.2.60');
  assert.equal(s.state, 'idle');
  assert.deepEqual(s.stateReasons, ['none']);
  assert.equal(s.stateMessage, 'Printer is ready to print.');
  // No SN in "MFG:Xerox;...;MDL:B210 Printer;CLS:PRINTER;CID:XR_PCL6_Basic_A4_Mono;...".
  assert.equal(o.serial, 'UUID-16a65700-007c-1000-bb49-9c934eac2f55');
  assert.equal(o.fields.manufacturer, 'Xerox');
  assert.equal(o.fields.model, 'B210 Printer');
  assert.equal(o.fields.firmware, '80.000.60.000');
  assert.equal(o.fields.location, 'Office');
  assert.equal(o.printerInfo.description, 'Xerox B210', 'printer-info');
  assert.equal(o.fields.web_ui_url, 'http://xero.local:631/airprintRedirect.dhtml');
  // marker-names "Black Toner_S/N_:CRUM-230512A4EFE", marker-colors #000000, marker-levels 62 of 100.
  assert.deepEqual(o.fields.consumables, ['black']);
  assert.deepEqual(o.printerInfo.toner_levels, { black: 62 });
  assert.deepEqual(o.fields.status_messages, []);
  assert.equal(o.printerInfo.printer_state, 'idle');
  assert.equal(o.printerInfo.is_mono, true, 'color-supported false');
  assert.equal(o.printerInfo.has_duplex, true, 'sides-supported lists two-sided-long-edge');
  // The reply carries no printer-impressions-completed: no counter is made up.
  assert.deepEqual(ippMetrics(s), { toner_levels: { black: 62 } });
  assert.equal(o.printerInfo.page_count, undefined);
  // The marker name holds the cartridge's CRUM serial, not its part number: none is made up.
  assert.equal(o.printerInfo.supply_part_numbers, undefined);
  assert.equal(o.printerInfo.supply_info_uri, 'http://xero.local:631/sws/index.html?link=/sws/app/Information/supplies/supplies.html');
});

test('Xerox B210, stopped with an empty toner: the state, its reason and the alert in the printer\'s words', () => {
  const { s, o } = observe('xerox-b210-toner-empty.ipp', '192.0.2.60');
  assert.equal(s.state, 'stopped');
  assert.deepEqual(s.stateReasons, ['toner-empty-error']);
  // printer-alert "code=markerTonerEmpty;index=1;severity=critical;..." with its description; the
  // reply writes both values behind an echo of the attribute's name ("printer-alert[0] = ..."),
  // which is no part of what a technician reads.
  const description =
    '09-200 The Toner Cartridge is empty. Immediate user intervention is required to replace the Toner Cartridge. Printing has stopped, all other machine services (if installed) are unaffected.';
  assert.deepEqual(s.alerts, [`markerTonerEmpty: ${description}`]);
  assert.deepEqual(o.printerInfo.toner_levels, { black: 0 }, 'marker-levels 0: empty, measured');
  assert.deepEqual(o.fields.status_messages, [
    'stopped: Printer is not able to print.',
    'toner-empty-error',
    `markerTonerEmpty: ${description}`.slice(0, 256),
  ]);
  assert.equal(o.printerInfo.printer_state, 'stopped');
  assert.equal(o.serial, 'UUID-16a65700-007c-1000-bb49-9c934eac2f55', 'the same printer as the idle reply');
});

test('Xerox B210, stopped on a paper jam: jam reason and alert, toner at 76 %', () => {
  const { s, o } = observe('xerox-b210-media-jam.ipp', '192.0.2.60');
  assert.equal(s.state, 'stopped');
  assert.deepEqual(s.stateReasons, ['media-jam-error']);
  assert.equal(s.alerts.length, 1);
  // printer-alert "code=jam;index=1;severity=critical;group=mediaPath;groupindex=2;location=8600;...".
  assert.match(s.alerts[0], /^jam: 08-600 A paper jam was detected within the Duplex area of the machine\. User intervention required to open the Rear Door/);
  assert.equal(o.fields.status_messages?.[0], 'stopped: Paper jam inside of printer. Please remove the paper.');
  assert.equal(o.fields.status_messages?.[1], 'media-jam-error');
  assert.deepEqual(o.printerInfo.toner_levels, { black: 76 });
  assert.equal(o.fields.web_ui_url, 'http://xero:631/airprintRedirect.dhtml');
});

test('Brother QL-1110NWB label printer: identity and state; no supplies listed, none made up', () => {
  // Recorded at 192.168.68.134 (its printer-more-info names that address); nothing is sent anywhere.
  const { s, o } = observe('brother-ql-1110nwb.ipp', '192.168.68.134');
  assert.equal(s.state, 'idle');
  assert.equal(s.makeAndModel, 'Brother QL-1110NWB');
  assert.equal(s.name, 'BRW30C9AB0B16CE');
  assert.equal(o.serial, 'UUID-e3248000-80ce-11db-8000-0080775d43fd', 'its Device ID has no SN');
  assert.equal(o.fields.manufacturer, 'Brother');
  assert.equal(o.fields.model, 'QL-1110NWB');
  assert.equal(o.fields.firmware, '1.13');
  assert.equal(o.fields.location, undefined, 'printer-location is empty');
  assert.equal(o.fields.web_ui_url, 'http://192.168.68.134/net/net/airprint.html');
  assert.equal(o.fields.consumables, undefined, 'no marker-* and no printer-supply');
  assert.equal(o.printerInfo.toner_levels, undefined);
  assert.deepEqual(o.fields.status_messages, []);
  assert.equal(o.printerInfo.is_mono, true);
  assert.equal(o.printerInfo.has_duplex, false, 'sides-supported: one-sided only');
  // media-type-supported carries a value of another syntax after its first (the "invalid" of the
  // source's file name): decoded past, nothing else lost.
  assert.equal(o.printerInfo.printer_uuid, 'e3248000-80ce-11db-8000-0080775d43fd');
});

test('HP LaserJet 100 colorMFP M175nw\'s malformed nameWithLanguage: refused with the place named, not read as garbage', () => {
  // A Get-Job-Attributes reply whose job-name is a nameWithLanguage without its inner lengths.
  assert.throws(() => decodeIppResponse(reply('hp-laserjet-m175nw-malformed.ipp')), /IPP reply truncated in a name \(offset \d+, 541 bytes\)/);
});
