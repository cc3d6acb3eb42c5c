// WS-Discovery and SSDP bounded like mDNS (src/discovery/source-guard.ts, through the listeners'
// own entry for a datagram, on a simulated clock): a source over its packet rate is dropped before
// its datagrams are parsed while another source is still heard, the endpoints remembered are capped
// per source and in total (an endpoint not heard of for an hour makes room), and what was dropped
// is counted in status() and logged at most once a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PRINT_NS, WsdListener, WSD_LIMITS } from '../../../src/discovery/wsd.js';
import { SsdpSearcher, SSDP_PRINTER } from '../../../src/discovery/ssdp.js';
import type { AnnouncedPrinter } from '../../../src/discovery/announced-printer.js';
import type { Logger } from '../../../src/log/logger.js';

const hello = (uuid: string, address: string) =>
  Buffer.from(
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" ' +
      `xmlns:wsd="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:wprt="${PRINT_NS}"><soap:Header>` +
      `<wsa:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Hello</wsa:Action><wsa:MessageID>urn:uuid:${randomUUID()}</wsa:MessageID></soap:Header>` +
      `<soap:Body><wsd:Hello><wsa:EndpointReference><wsa:Address>urn:uuid:${uuid}</wsa:Address></wsa:EndpointReference>` +
      `<wsd:Types>wprt:PrintDeviceType</wsd:Types><wsd:XAddrs>http://${address}:3911/</wsd:XAddrs></wsd:Hello></soap:Body></soap:Envelope>`,
  );
const bye = (uuid: string) =>
  Buffer.from(
    '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:wsd="http://schemas.xmlsoap.org/ws/2005/04/discovery"><soap:Header>' +
      `<wsa:MessageID>urn:uuid:${randomUUID()}</wsa:MessageID></soap:Header><soap:Body><wsd:Bye><wsa:EndpointReference><wsa:Address>urn:uuid:${uuid}</wsa:Address></wsa:EndpointReference></wsd:Bye></soap:Body></soap:Envelope>`,
  );
const ssdpAnswer = (location: string, uuid = randomUUID()) => Buffer.from(`HTTP/1.1 200 OK\r\nST: ${SSDP_PRINTER}\r\nUSN: uuid:${uuid}::${SSDP_PRINTER}\r\nLOCATION: ${location}\r\n\r\n`);
const uuidN = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function harness() {
  let t = Date.parse('2026-11-28T10:00:00Z');
  const clock = { now: () => t, advance: (ms: number) => (t += ms) };
  const warns: { msg: string; [k: string]: unknown }[] = [];
  const log = { warn: (o: object, msg: string) => warns.push({ ...o, msg }), info() {}, debug() {}, error() {} } as unknown as Logger;
  const announced: AnnouncedPrinter[] = [];
  const gone: string[] = [];
  return { clock, warns, log, announced, gone };
}

test('WS-Discovery: a source over 20 datagrams a second is dropped unparsed; another source is still heard; counted, logged once a minute', () => {
  const h = harness();
  const wsd = new WsdListener({ log: h.log, now: h.clock.now, onAnnounce: (p) => h.announced.push(p), onGoodbye: (g) => h.gone.push(g.name) });
  assert.equal(WSD_LIMITS.packetsPerSecond, 20);
  // One second of a flood: 200 Hellos of new endpoints from one host, all at the same instant.
  for (let i = 0; i < 200; i++) wsd.received(hello(uuidN(i), '10.0.0.66'), { address: '10.0.0.66' });
  assert.equal(h.announced.length, 20, 'the burst is 20 datagrams');
  assert.equal(wsd.status().dropped.rate_limited, 180);
  // Another host's Hello at the same moment is read.
  wsd.received(hello(uuidN(9999), '10.0.0.7'), { address: '10.0.0.7' });
  assert.equal(h.announced.at(-1)?.address, '10.0.0.7');
  assert.equal(h.warns.filter((w) => /WS-Discovery: flood/.test(w.msg)).length, 1, 'one line for the burst');
  // The rate refills: a second later 20 more pass (the per-source cap of 32 endpoints then stops the 33rd).
  h.clock.advance(1000);
  for (let i = 200; i < 220; i++) wsd.received(hello(uuidN(i), '10.0.0.66'), { address: '10.0.0.66' });
  assert.equal(h.announced.filter((p) => p.address === '10.0.0.66').length, 32);
  assert.equal(wsd.status().dropped.over_caps, 8);
  assert.equal(wsd.status().endpoints, 33);
  assert.equal(h.warns.filter((w) => /WS-Discovery: flood/.test(w.msg)).length, 1, 'not logged again within the minute');
  h.clock.advance(60_000);
  wsd.received(hello(uuidN(300), '10.0.0.66'), { address: '10.0.0.66' });
  assert.equal(h.warns.filter((w) => /WS-Discovery: flood/.test(w.msg)).length, 2, 'logged again after a minute');
  // A known endpoint's Bye still frees its place.
  wsd.received(bye(uuidN(0)), { address: '10.0.0.66' });
  assert.deepEqual(h.gone, [`urn:uuid:${uuidN(0)}`]);
  wsd.received(hello(uuidN(301), '10.0.0.66'), { address: '10.0.0.66' });
  assert.equal(h.announced.at(-1)?.name, `urn:uuid:${uuidN(301)}`);
});

test('WS-Discovery: the total cap of endpoints (1,024; 64 here) refuses new ones; one not heard of for an hour makes room', () => {
  const h = harness();
  const wsd = new WsdListener({ log: h.log, now: h.clock.now, onAnnounce: (p) => h.announced.push(p), onGoodbye: () => {}, limits: { maxEndpoints: 64, maxEndpointsPerSource: 32 } });
  let n = 0;
  for (const source of ['10.0.1.1', '10.0.1.2', '10.0.1.3']) {
    for (let i = 0; i < 20; i++, n++) wsd.received(hello(uuidN(n), source), { address: source });
    h.clock.advance(1000);
  }
  assert.equal(wsd.status().endpoints, 60);
  for (let i = 0; i < 10; i++, n++) wsd.received(hello(uuidN(n), '10.0.1.4'), { address: '10.0.1.4' });
  assert.equal(wsd.status().endpoints, 64);
  assert.equal(wsd.status().dropped.over_caps, 6, 'the total cap refuses new endpoints');
  h.clock.advance(30 * 60_000);
  // The first source's printers answer again (a Probe round): they stay fresh.
  for (let i = 0; i < 20; i++) wsd.received(hello(uuidN(i), '10.0.1.1'), { address: '10.0.1.1' });
  h.clock.advance(31 * 60_000);
  wsd.received(hello(uuidN(1000), '10.0.1.5'), { address: '10.0.1.5' });
  assert.equal(h.announced.at(-1)?.name, `urn:uuid:${uuidN(1000)}`, 'room was made');
  assert.equal(wsd.status().endpoints, 21, 'the endpoints not heard of for an hour were forgotten');
});

test('SSDP: an answering host over its rate is dropped; it announces at most 32 addresses a round; another host is still heard', () => {
  const h = harness();
  const ssdp = new SsdpSearcher({ log: h.log, now: h.clock.now, onAnnounce: (p) => h.announced.push(p) });
  for (let i = 0; i < 100; i++) ssdp.received(ssdpAnswer(`http://10.0.2.${i + 1}:80/desc.xml`), { address: '10.0.0.66' });
  assert.equal(h.announced.length, 20);
  assert.equal(ssdp.status().dropped.rate_limited, 80);
  ssdp.received(ssdpAnswer('http://10.0.0.7:80/desc.xml'), { address: '10.0.0.7' });
  assert.equal(h.announced.at(-1)?.address, '10.0.0.7');
  h.clock.advance(1000);
  for (let i = 100; i < 120; i++) ssdp.received(ssdpAnswer(`http://10.0.2.${i + 1}:80/desc.xml`), { address: '10.0.0.66' });
  assert.equal(h.announced.filter((p) => p.address.startsWith('10.0.2.')).length, 32);
  assert.equal(ssdp.status().dropped.over_caps, 8);
  // The same printer answering twice in a round (two interfaces) is announced once.
  ssdp.received(ssdpAnswer('http://10.0.0.7:80/desc.xml'), { address: '10.0.0.7' });
  assert.equal(h.announced.filter((p) => p.address === '10.0.0.7').length, 1);
  assert.equal(h.warns.filter((w) => /SSDP: flood/.test(w.msg)).length, 1);
});
