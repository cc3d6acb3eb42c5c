// Announced printers: which addresses may be contacted, how observations find their
// printer's one record, goodbyes, and TXT records as they come off the LAN.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultSettings, mergeSettings } from '../../../src/settings/settings.js';
import { findSamePrinter, ippTargetOf, markGone, refusal, SAID_GOODBYE } from '../../../src/discovery/announced.js';
import { txtOf } from '../../../src/discovery/mdns.js';
import type { Device } from '../../../src/model/device.js';
import type { Observation } from '../../../src/model/observation.js';
import type { LocalSubnet } from '../../../src/shared/ranges.js';

const base = () => defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: [] });
const wide: LocalSubnet[] = [{ iface: 'eth0', address: '10.20.30.40', netmask: '255.255.0.0', cidr: '10.20.0.0/16', prefix: 16 }];

test("an announced printer is contacted only on the box's own /24 or in the configured ranges, inside allowed_ranges", () => {
  const s = base();
  assert.equal(refusal('10.20.30.99', s, wide), undefined);
  // The box's subnet is a /16: only its own /24 is followed (docs/decisions/0017-scan-scope.md).
  assert.match(refusal('10.20.31.5', s, wide)!, /not on the box's own subnets/);
  assert.match(refusal('192.0.2.7', s, wide)!, /not on the box's own subnets/);
  const ranged = mergeSettings(s, { discovery: { manual_ranges: true, ranges_text: '10.20.31.0/28' } });
  assert.equal(refusal('10.20.31.5', ranged, wide), undefined);
  const fenced = mergeSettings(s, { discovery: { allowed_ranges: ['10.20.30.128/25'] } });
  assert.match(refusal('10.20.30.99', fenced, wide)!, /outside discovery.allowed_ranges/);
  assert.equal(refusal('10.20.30.200', fenced, wide), undefined);
  assert.match(refusal('fe80::1', s, wide)!, /not an IPv4 address/);
  assert.match(refusal('10.20.30.99', s, [])!, /not on the box's own subnets/);
});

const device = (serial: string, over: Partial<Device> = {}): Device => ({
  serial, ip: '10.0.0.9', last_seen: 1, created_at: 1, first_seen: 1, device_type: 'network', source_type: 'snmp', is_usb: false,
  is_default: false, is_shared: false, usb_webui_available: false, is_saved: false, visible: true, ...over,
});
const store = (ds: Device[]) => ({
  get: (s: string) => ds.find((d) => d.serial === s),
  withPrinterUuid: (u: string) => ds.filter((d) => d.printer_info?.printer_uuid === u),
  withMac: (m: string) => ds.filter((d) => d.mac_address?.toLowerCase() === m.toLowerCase()),
});
const obs = (serial: string, info: Record<string, unknown> = {}, mac?: string): Observation => ({
  serial, ip: '10.0.0.9', now: 2, fields: { mac_address: mac }, printerInfo: { ip: '10.0.0.9', serial, ...info },
});

test('one record per printer: by serial, else printer-uuid, else MAC when one side has no serial', () => {
  const byUuid = device('UUID-aaaaaaaa-0000-1000-8000-000000000001', { source_type: 'ipp', printer_info: { printer_uuid: 'aaaaaaaa-0000-1000-8000-000000000001' } });
  const snmpOnly = device('SER-1', { mac_address: '00:11:22:33:44:55' });
  const macKeyed = device('MAC-001122334466', { mac_address: '00:11:22:33:44:66' });
  const usb = device('USB-SER', { is_usb: true, mac_address: '00:11:22:33:44:77' });
  const ds = store([byUuid, snmpOnly, macKeyed, usb]);
  assert.equal(findSamePrinter(ds, obs('SER-1'))?.serial, 'SER-1');
  // IPP gave a serial this time (or SNMP now answers): still the record its uuid keyed.
  assert.equal(findSamePrinter(ds, obs('NEW-SERIAL', { printer_uuid: 'aaaaaaaa-0000-1000-8000-000000000001' }))?.serial, byUuid.serial);
  // A MAC-keyed record meets the printer's real serial.
  assert.equal(findSamePrinter(ds, obs('SER-2', {}, '00:11:22:33:44:66'))?.serial, 'MAC-001122334466');
  // Two real serials with one MAC are two printers (a print server moved between them).
  assert.equal(findSamePrinter(ds, obs('SER-3', {}, '00:11:22:33:44:55')), undefined);
  assert.equal(findSamePrinter(ds, obs('MAC-001122334455', {}, '00:11:22:33:44:55'))?.serial, 'SER-1');
  // USB records are never a network printer's.
  assert.equal(findSamePrinter(ds, obs('MAC-001122334477', {}, '00:11:22:33:44:77')), undefined);
  assert.equal(findSamePrinter(ds, obs('OTHER')), undefined);
});

test('a goodbye marks the record (and what listings show), keeps last_seen, deletes nothing', () => {
  const d = device('S', { last_seen: 5, status_messages: ['toner-low'], printer_info: { ip: '10.0.0.9', status_messages: ['toner-low'] } });
  const g = markGone(d, 10);
  assert.deepEqual(g.status_messages, [SAID_GOODBYE, 'toner-low']);
  assert.deepEqual(g.printer_info?.status_messages, [SAID_GOODBYE, 'toner-low']);
  assert.equal(g.last_seen, 5);
  assert.deepEqual(markGone(g, 11).status_messages, [SAID_GOODBYE, 'toner-low'], 'said once');
});

test('where a saved IPP-only printer is polled: the port and resource its announcement gave', () => {
  assert.deepEqual(ippTargetOf(device('S', { ip: '10.0.0.5', raw_data: { ipp: { port: 8631, resource: '/ipp/print', tls: true } } })), { address: '10.0.0.5', port: 8631, resource: '/ipp/print', tls: true });
  assert.equal(ippTargetOf(device('S', { raw_data: { ipp: { port: 'x' } } })), undefined);
});

test('TXT from the LAN: keys lower-cased, values bounded, control characters and non-strings dropped', () => {
  const t = txtOf({ UUID: 'u-1', Color: 'T', rp: 'ipp/print', note: 'Room\x001', big: 'x'.repeat(1000), n: 5, uuid: 'second' });
  assert.deepEqual(Object.keys(t), ['uuid', 'color', 'rp', 'note', 'big']);
  assert.equal(t.uuid, 'u-1', 'the first of two keys differing in case wins');
  assert.equal(t.note, 'Room 1');
  assert.equal(t.big.length, 255);
  assert.deepEqual(txtOf(undefined), {});
  assert.equal(Object.keys(txtOf(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v'])))).length, 64);
});
