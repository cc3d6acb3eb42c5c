// A record that follows its printer to a new address (a move made by itself or confirmed by a
// person, src/discovery/move-check.ts atNewAddress) loses what was said of the old address: the
// printer not answering there, its goodbye, the pending move; it keeps its other lines and what a
// person set, and remembers what the move's proof showed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atNewAddress } from '../../../src/discovery/move-check.js';
import { markUnreachable } from '../../../src/discovery/merge.js';
import { markGone } from '../../../src/discovery/announced.js';
import type { Device } from '../../../src/model/device.js';
import type { PendingMove } from '../../../src/model/trust.js';

test('the old address\'s silence, goodbye and pending move go; the rest (a flagged counter too) stays; the proof is remembered', () => {
  const t0 = Date.parse('2026-11-28T10:00:00Z');
  const base: Device = {
    serial: 'UUID-1', ip: '10.77.0.10', last_seen: t0, created_at: t0, first_seen: t0, device_type: 'network', source_type: 'ipp', is_usb: false,
    is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true, location: 'Office',
    status_messages: ['toner low'], printer_info: { ip: '10.77.0.10', status_messages: ['toner low'] },
    trust: {
      pending_move: { ip: '10.77.0.20', seen_at: '2026-11-28T10:05:00Z', reason: 'x' } as PendingMove,
      counter_flag: { ip: '10.77.0.10', seen_at: '2026-11-28T09:00:00Z', page_count: 5, stored_page_count: 9, reading: { page_count: 5 } },
    },
    raw_data: { ipp: { port: 631, resource: '/ipp/print', tls: false } },
  };
  const silent = markGone(markUnreachable(base, t0 + 60_000, 'no IPP answer'), t0 + 61_000, 'mdns', 'expired');
  assert.equal(silent.status_messages!.length, 5, JSON.stringify(silent.status_messages));
  const moved = atNewAddress(silent, '10.77.0.20', { neighbour_mac: 'aa:bb:cc:00:11:22' });
  assert.equal(moved.ip, '10.77.0.20');
  assert.deepEqual(moved.status_messages, ['page counter went down: 5 read at 10.77.0.10, 9 stored; not stored until a person accepts it', 'toner low'], 'the flagged counter is the meter\'s, not the address\'s: it stays');
  assert.equal(moved.trust?.counter_flag?.page_count, 5);
  assert.equal(moved.trust?.pending_move, undefined);
  assert.equal(moved.raw_data?.not_answering_since, undefined);
  assert.equal(moved.raw_data?.mdns_goodbye_at, undefined);
  assert.equal(moved.trust?.neighbour_mac, 'aa:bb:cc:00:11:22');
  assert.deepEqual(moved.raw_data?.ipp, { port: 631, resource: '/ipp/print', tls: false });
  assert.equal(moved.location, 'Office');
});
