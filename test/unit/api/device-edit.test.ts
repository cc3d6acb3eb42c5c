// What POST /devices/update applies (api/device-edit.ts): the reference UI's edits and its "Apply
// All" bodies, the technician's overrides and their locks, and a later poll that keeps them
// (discovery/merge.ts, the code every SNMP and IPP reading goes through).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDeviceEdit, parseDeviceEdit, type DeviceEdit } from '../../../src/api/device-edit.js';
import { mergeObservation } from '../../../src/discovery/merge.js';
import type { Device } from '../../../src/model/device.js';

const AT = '2026-11-29T10:00:00Z';
const device = (): Device => ({
  serial: 'SN1', ip: '127.0.0.9', manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', hostname: 'KM-1', firmware: '2S0_2000',
  subnet_mask: '255.255.255.0', last_seen: 0, created_at: 0, first_seen: 0, device_type: 'network', source_type: 'snmp',
  is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
});
const edit = (body: Record<string, unknown>, lenient = false): DeviceEdit => {
  const e = parseDeviceEdit({ serial: 'SN1', ...body }, lenient);
  assert.equal(typeof e, 'object', String(e));
  return e as DeviceEdit;
};

test('"Apply All" as the reference UI sends it: the box\'s fields applied, the printer\'s ignored and named', () => {
  // cards.js: every field of /devices/preview that differs, dns_servers joined into a string.
  const body = {
    manufacturer: 'KYOCERA', model: 'P2040dw', hostname: 'printer-7', firmware: '2S0_2100', ip: '127.0.0.10', subnet_mask: '255.255.0.0',
    gateway: '127.0.0.1', dns_servers: '127.0.0.53, 127.0.0.54', dhcp_server: '127.0.0.1', asset_number: 'A-7', location: 'Room 7',
    description: 'by the stairs', web_ui_url: 'https://127.0.0.9/',
  };
  const e = edit(body);
  assert.deepEqual(e.ignored, ['firmware', 'ip', 'subnet_mask', 'gateway', 'dns_servers', 'dhcp_server']);
  const d = applyDeviceEdit(device(), e, AT, 'central server');
  assert.equal(d.manufacturer, 'KYOCERA');
  assert.equal(d.model, 'P2040dw');
  assert.equal(d.hostname, 'printer-7');
  assert.equal(d.web_ui_url, 'https://127.0.0.9/');
  assert.equal(d.location, 'Room 7');
  assert.equal(d.firmware, '2S0_2000', 'read from the printer: unchanged');
  assert.equal(d.ip, '127.0.0.9', 'the address the box polls: unchanged');
  assert.deepEqual(d.locked_fields!.map((l) => l.field).sort(), ['asset_number', 'description', 'hostname', 'location', 'manufacturer', 'model', 'web_ui_url']);
  assert.ok(d.locked_fields!.every((l) => l.locked_at === AT && l.locked_by === 'central server'));
});

test('a later poll keeps the technician\'s overrides and still updates the rest', () => {
  const d = applyDeviceEdit(device(), edit({ manufacturer: 'Kyocera Document Solutions', model: 'Front desk P2040', hostname: 'desk' }), AT, 'api');
  const polled = mergeObservation(d, {
    serial: 'SN1', ip: '127.0.0.9', now: 1000,
    fields: { manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', hostname: 'KM-1', firmware: '2S0_2100', web_ui_url: 'http://127.0.0.9/' },
    printerInfo: {},
  });
  assert.equal(polled.manufacturer, 'Kyocera Document Solutions');
  assert.equal(polled.model, 'Front desk P2040');
  assert.equal(polled.hostname, 'desk');
  assert.equal(polled.firmware, '2S0_2100', 'not overridden: the poll\'s value');
  assert.equal(polled.web_ui_url, 'http://127.0.0.9/', 'not overridden: the poll\'s value');
});

test('an emptied override ends it: cleared and unlocked, so polling fills it again', () => {
  const locked = applyDeviceEdit(device(), edit({ model: 'Mine' }), AT, 'api');
  const ended = applyDeviceEdit(locked, edit({ model: '' }), AT, 'api');
  assert.equal(ended.model, undefined);
  assert.ok(!ended.locked_fields!.some((l) => l.field === 'model'));
  const polled = mergeObservation(ended, { serial: 'SN1', ip: '127.0.0.9', now: 1000, fields: { model: 'ECOSYS P2040dw' }, printerInfo: {} });
  assert.equal(polled.model, 'ECOSYS P2040dw');
  // A person's field emptied stays a person's choice (docs/decisions/0008-person-fields.md): set to
  // "" and locked.
  const emptied = applyDeviceEdit(device(), edit({ location: '' }), AT, 'api');
  assert.equal(emptied.location, '');
  assert.ok(emptied.locked_fields!.some((l) => l.field === 'location'));
});

test('unknown fields: a 400 from a local caller, ignored over the server\'s channel; bad values a 400 from both', () => {
  assert.equal(parseDeviceEdit({ serial: 'SN1', colour: 'red' }, false), 'unknown field colour');
  assert.deepEqual((parseDeviceEdit({ serial: 'SN1', colour: 'red', location: 'x' }, true) as DeviceEdit).ignored, ['colour']);
  for (const lenient of [false, true]) {
    assert.equal(parseDeviceEdit({ serial: 'SN1', model: 5 }, lenient), 'field model must be a string');
    assert.equal(parseDeviceEdit({ serial: 'SN1', hostname: 'h'.repeat(1025) }, lenient), 'field hostname is longer than 1024 characters');
    assert.equal(parseDeviceEdit({ serial: 'SN1', web_ui_url: 'javascript:alert(1)' }, lenient), 'field web_ui_url must be an http:// or https:// URL');
    assert.equal(parseDeviceEdit({ serial: 'SN1', web_ui_url: 'printer.local' }, lenient), 'field web_ui_url must be an http:// or https:// URL');
    assert.equal(parseDeviceEdit({ serial: 'SN1', visible: 'no' }, lenient), 'field visible must be true or false');
  }
  // Ignored fields are ignored whatever their value (the reference UI sends dns_servers as a string).
  assert.deepEqual((parseDeviceEdit({ serial: 'SN1', dns_servers: ['a'], ip: 7 }, false) as DeviceEdit).ignored, ['dns_servers', 'ip']);
});
