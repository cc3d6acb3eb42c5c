// IPP replies recorded from real printers (test/fixtures/ipp/README.md: OpenPrinting/goipp's test
// data, BSD 2-Clause), decoded by the agent's one IPP codec and mapped to PrinterInfo. Every
// expectation below was written by hand from the reply's attributes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeIppResponse, printerStateOf } from '../../../src/ipp/codec.js';
import { ippObservation } from '../../../src/ipp/observation.js';
import { repoRoot } from '../../kit/snmpsim.js';

const reply = (name: string) => readFileSync(join(repoRoot(), 'test', 'fixtures', 'ipp', name));

test('HP OfficeJet Pro 8730: identity, four ink cartridges, state, web page', () => {
  const res = decodeIppResponse(reply('hp-officejet-pro-8730.ipp'));
  assert.equal(res.status, 0);
  const s = printerStateOf(res);
  assert.equal(s.state, 'idle');
  assert.deepEqual(s.stateReasons, ['wifi-not-configured-report']);
  assert.deepEqual(s.alerts, [], '"code=unknown;severity=other" (genuineHP) is no status line');
  assert.equal(s.colorSupported, true);
  assert.equal(s.duplexSupported, true);
  const o = ippObservation({ ip: '192.0.2.40', port: 631, tls: false, state: s, now: 0 });
  assert.ok(o);
  assert.equal(o.serial, 'CN783F60W1', 'SN of printer-device-id');
  assert.equal(o.fields.manufacturer, 'HP');
  assert.equal(o.fields.model, 'OfficeJet Pro 8730');
  assert.equal(o.fields.firmware, 'WEBPDLPP1N001.1919A.00');
  assert.equal(o.fields.location, undefined, 'printer-location is empty');
  assert.equal(o.printerInfo.description, 'HP OfficeJet Pro 8730 [08C229]');
  // printer-more-info names "localhost" (the Host it was asked by): the address it was read at.
  assert.equal(o.fields.web_ui_url, 'http://192.0.2.40/#hId-pgAirPrint');
  assert.deepEqual(o.fields.consumables, ['cyan', 'magenta', 'yellow', 'black']);
  assert.deepEqual(o.printerInfo.toner_levels, { cyan: 60, magenta: 70, yellow: 60, black: 70 });
  assert.deepEqual(o.fields.status_messages, [], 'a "-report" reason is informational');
  assert.equal(o.printerInfo.printer_uuid, 'dbcc4b58-fc4c-f6fd-b4d6-2b00d554ad47');
  assert.equal(o.printerInfo.is_color, true);
  assert.equal(o.printerInfo.page_count, undefined, 'this reply carries no counters');
});

test('Pantum M7300FDW: collection members named like attributes are read; a careless MDL loses to make-and-model', () => {
  const s = printerStateOf(decodeIppResponse(reply('pantum-m7300fdw.ipp')));
  assert.equal(s.makeAndModel, 'Pantum M7300FDW Series');
  assert.equal(s.colorSupported, false);
  const o = ippObservation({ ip: '192.0.2.41', port: 631, tls: false, state: s, now: 0 });
  assert.ok(o);
  // No SN in its Device ID: keyed by printer-uuid.
  assert.equal(o.serial, 'UUID-07bc5a47-edf2-4661-8748-8620f79d4ac4');
  assert.equal(o.fields.manufacturer, 'Pantum');
  assert.equal(o.fields.model, 'M7300FDW Series', 'not the Device ID\'s "MDL:-Printer"');
  assert.equal(o.fields.location, 'pantum printer');
  assert.equal(o.fields.web_ui_url, 'http://192.0.2.41:60000/index-jump.html');
  assert.equal(o.fields.consumables, undefined, 'it lists no supplies');
  assert.equal(o.printerInfo.is_mono, true);
});
