// The print queues discovery lists (src/discovery/print-queues.ts): a queue is remembered per
// server and name, what a fuller sighting learned (its device-uri from IPP) survives a TXT-only
// one, it is linked to its printer when listed (the printer may be found after its queue), and
// the list is bounded, the least recently seen forgotten first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PrintQueues } from '../../../src/discovery/print-queues.js';
import type { PrintQueue } from '../../../src/ipp/print-queue.js';

const T0 = Date.parse('2026-11-28T10:00:00Z');
const fromTxt: PrintQueue = { server_kind: 'cups', queue: 'Office', why: 'TXT printer-type 0x1006 and rp=printers/Office' };
const fromIpp: PrintQueue = { ...fromTxt, device_uri: 'ipp://10.77.0.10:631/ipp/print', make_and_model: 'Printer - IPP Everywhere', why: 'IPP printer-type 4100 and /printers/Office' };

test('a queue seen by IPP keeps its device-uri when a TXT-only sighting follows; linked when listed, once its printer is known', () => {
  const q = new PrintQueues();
  q.seen('10.77.0.30', fromIpp, 'mdns', T0);
  q.seen('10.77.0.30', fromTxt, 'port_probe', T0 + 60_000);
  const [e] = q.list([]);
  assert.equal(e.device_uri, 'ipp://10.77.0.10:631/ipp/print');
  assert.equal(e.found_by, 'mdns, port_probe');
  assert.equal(e.first_seen_at, '2026-11-28T10:00:00Z');
  assert.equal(e.seen_at, '2026-11-28T10:01:00Z');
  assert.equal(e.printer_serial, undefined, 'no printer known yet');
  const [linked] = q.list([{ serial: 'UUID-1', ip: '10.77.0.10' }, { serial: 'UUID-2', ip: '10.77.0.11' }]);
  assert.equal(linked.printer_serial, 'UUID-1');
  assert.match(linked.link!, /10\.77\.0\.10/);
  assert.equal(q.list([{ serial: 'A', ip: '10.77.0.10' }, { serial: 'B', ip: '10.77.0.10' }])[0].printer_serial, undefined, 'two printers at that address: no link');
});

test('at most 256 queues, the least recently seen forgotten first; the last seen listed first', () => {
  const q = new PrintQueues();
  for (let i = 0; i < 300; i++) q.seen(`10.0.${i >> 8}.${i & 255}`, { ...fromTxt, queue: `q${i}` }, 'mdns', T0 + i);
  q.seen('10.0.0.100', { ...fromTxt, queue: 'q100' }, 'mdns', T0 + 1000); // seen again: the most recent
  const list = q.list([]);
  assert.equal(list.length, 256);
  assert.equal(list[0].queue, 'q100');
  assert.equal(list[1].queue, 'q299');
  assert.ok(!list.some((e) => e.queue === 'q43') && list.some((e) => e.queue === 'q44'), 'the oldest went first');
  assert.equal(q.has('10.0.1.43', 'q299'), true);
});
