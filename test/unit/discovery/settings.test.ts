import { test } from 'node:test';
import assert from 'node:assert/strict';
import { credentialsOf, scanTargetMethods } from '../../../src/discovery/snmp-observation.js';

const scanTargets = (s: Parameters<typeof scanTargetMethods>[0]) => [...scanTargetMethods(s).keys()];
import { defaultSettings, mergeSettings } from '../../../src/settings/settings.js';
import { mergeObservation, markUnreachable } from '../../../src/discovery/merge.js';

const base = () => defaultSettings({ subnet_scan: false, auto_discover: false, allowed_ranges: [] });

test('credentials: v3 users first, then communities in order with the configured version', () => {
  const s = mergeSettings(base(), {
    snmp: {
      version: 'v1',
      communities: ['site', 'public'],
      v3: [
        { user: 'full', auth_protocol: 'SHA', auth_key: 'authkey12', priv_protocol: 'AES', priv_key: 'privkey12' },
        { user: 'authonly', auth_protocol: 'MD5', auth_key: 'authkey34' },
        { user: 'plain' },
      ],
    },
  });
  assert.deepEqual(credentialsOf(s), [
    { version: 'v3', user: 'full', authProtocol: 'SHA', authKey: 'authkey12', privProtocol: 'AES', privKey: 'privkey12' },
    { version: 'v3', user: 'authonly', authProtocol: 'MD5', authKey: 'authkey34' },
    { version: 'v3', user: 'plain' },
    { version: 'v1', community: 'site' },
    { version: 'v1', community: 'public' },
  ]);
});

test('targets: nothing unless a source is switched on; manual ranges expand and deduplicate', () => {
  assert.deepEqual(scanTargets(base()), []);
  const off = mergeSettings(base(), { discovery: { ranges_text: '127.0.3.1-3' } });
  assert.deepEqual(scanTargets(off), [], 'ranges are ignored while manual_ranges is off');
  const on = mergeSettings(base(), { discovery: { manual_ranges: true, ranges_text: '127.0.3.1-3\n127.0.3.2\n127.0.3.0/30' } });
  assert.deepEqual(scanTargets(on).sort(), ['127.0.3.1', '127.0.3.2', '127.0.3.3']);
});

test('re-discovery never overwrites what a person set, and keeps saved/visible flags', () => {
  const first = mergeObservation(undefined, {
    serial: 'S1', ip: '127.0.0.10', now: 1000, scanId: 1,
    fields: { model: 'M1', location: 'from sysLocation' }, printerInfo: { ip: '127.0.0.10' },
  });
  assert.equal(first.location, 'from sysLocation');
  assert.equal(first.source_type, 'snmp');
  assert.equal(first.device_type, 'network');
  const personSet = {
    ...first, location: 'Reception', asset_number: 'A-1', is_saved: true, visible: false,
    locked_fields: [{ field: 'location', locked_at: 'x' }, { field: 'model', locked_at: 'x' }],
  };
  const again = mergeObservation(personSet, {
    serial: 'S1', ip: '127.0.0.11', now: 2000, scanId: 2,
    fields: { model: 'M2', location: 'new sysLocation', firmware: 'F2' }, printerInfo: { ip: '127.0.0.11' },
  });
  assert.equal(again.location, 'Reception');
  assert.equal(again.asset_number, 'A-1');
  assert.equal(again.model, 'M1', 'a locked field stays');
  assert.equal(again.firmware, 'F2');
  assert.equal(again.ip, '127.0.0.11');
  assert.equal(again.is_saved, true);
  assert.equal(again.visible, false);
  assert.equal(again.first_seen, 1000);
  assert.equal(again.last_seen, 2000);
  assert.equal(again.last_scan_id, 2);
  const down = markUnreachable(again, 3000, 'no SNMP answer');
  assert.equal(down.status_messages![0], 'not answering since 1970-01-01T00:00:03Z: no SNMP answer');
  const still = markUnreachable(down, 4000, 'no SNMP answer');
  assert.deepEqual(still.status_messages!.filter((m) => m.startsWith('not answering')), ['not answering since 1970-01-01T00:00:03Z: no SNMP answer'], 'said once, since the first failed poll');
  const back = mergeObservation(still, { serial: again.serial, ip: again.ip, now: 5000, fields: { status_messages: ['idle'] }, printerInfo: {} });
  assert.deepEqual(back.status_messages, ['idle'], 'it answered: no longer said');
  assert.equal(back.raw_data?.not_answering_since, undefined);
  assert.equal(markUnreachable(back, 6000, 'no SNMP answer').status_messages![0], 'not answering since 1970-01-01T00:00:06Z: no SNMP answer', 'a new silence starts a new since');
});

test('why a printer is listed: each target carries its scan kinds, and they accumulate over scans and polls', () => {
  const both = mergeSettings(base(), { discovery: { manual_ranges: true, ranges_text: '127.0.3.1-2' } });
  assert.deepEqual([...scanTargetMethods(both)], [['127.0.3.1', ['manual_range']], ['127.0.3.2', ['manual_range']]]);
  const seen = (existing: ReturnType<typeof mergeObservation> | undefined, discoveryMethods?: string[]) =>
    mergeObservation(existing, { serial: 'W1', ip: '127.0.3.1', now: 1, fields: {}, printerInfo: { ip: '127.0.3.1' }, discoveryMethods });
  const byRange = seen(undefined, ['manual_range']);
  assert.deepEqual(byRange.printer_info?.discovery_methods, ['manual_range']);
  const polled = seen(byRange); // a poll knows no scan kind: the earlier ones stay
  assert.deepEqual(polled.printer_info?.discovery_methods, ['manual_range']);
  assert.deepEqual(seen(polled, ['subnet_scan']).printer_info?.discovery_methods, ['manual_range', 'subnet_scan']);
  assert.equal(seen(undefined).printer_info?.discovery_methods, undefined, 'nothing claimed when nothing is known');
});
