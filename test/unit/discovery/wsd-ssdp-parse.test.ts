// WS-Discovery SOAP and SSDP answers as they come off the LAN: what a printer's Hello,
// ProbeMatches and Bye say, and that junk, other protocols, entity tricks and oversize datagrams
// give nothing. The messages are written as printers send them (WS-Discovery 2005/04 with the
// prefixes HP and Windows use, and 1.1's namespace with other prefixes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WSD_DATAGRAM, parseWsdMessage, PRINT_NS, probeMessage } from '../../../src/discovery/wsd.js';
import { M_SEARCH, parseSsdpAnswer, SSDP_PRINTER } from '../../../src/discovery/ssdp.js';
import { announcedBy, ippObservation } from '../../../src/ipp/observation.js';
import { markGone, SAID_GOODBYE, saidGoodbye } from '../../../src/discovery/announced.js';
import type { Device } from '../../../src/model/device.js';

const UUID = '3fa6a1c2-8d1e-4b6f-9a0e-0017a4c2b7d1';
const env = (header: string, body: string, extraNs = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing" xmlns:wsd="http://schemas.xmlsoap.org/ws/2005/04/discovery" xmlns:wsdp="http://schemas.xmlsoap.org/ws/2006/02/devprof" ${extraNs}><soap:Header>${header}</soap:Header><soap:Body>${body}</soap:Body></soap:Envelope>`;
const hdr = (action: string, id = 'urn:uuid:0b1d1c8e-0000-4000-8000-000000000001') => `<wsa:To>urn:schemas-xmlsoap-org:ws:2005:04:discovery</wsa:To><wsa:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/${action}</wsa:Action><wsa:MessageID>${id}</wsa:MessageID>`;
const PRINT = `xmlns:wprt="${PRINT_NS}"`;

test('a Hello of a printer: endpoint uuid, types resolved by namespace, the IPv4 XAddr', () => {
  const xml = env(
    hdr('Hello'),
    `<wsd:Hello><wsa:EndpointReference><wsa:Address>urn:uuid:${UUID.toUpperCase()}</wsa:Address></wsa:EndpointReference><wsd:Types>wsdp:Device wprt:PrintDeviceType</wsd:Types><wsd:XAddrs>http://[fe80::1%25eth0]:3911/ http://192.168.1.40:3911/${UUID}</wsd:XAddrs><wsd:MetadataVersion>3</wsd:MetadataVersion></wsd:Hello>`,
    PRINT,
  );
  const [m, ...rest] = parseWsdMessage(Buffer.from(xml));
  assert.equal(rest.length, 0);
  assert.equal(m.kind, 'hello');
  assert.equal(m.endpoint, `urn:uuid:${UUID.toUpperCase()}`);
  assert.equal(m.uuid, UUID, 'lower case');
  assert.deepEqual(m.types, ['{http://schemas.xmlsoap.org/ws/2006/02/devprof}Device', `{${PRINT_NS}}PrintDeviceType`]);
  assert.equal(m.printer, true);
  assert.equal(m.address, '192.168.1.40', 'the IPv6 XAddr is skipped');
  assert.equal(m.messageId, 'urn:uuid:0b1d1c8e-0000-4000-8000-000000000001');
});

test('ProbeMatches (WS-Discovery 1.1, other prefixes, namespace declared on Types) give each match', () => {
  const xml =
    '<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:a="http://www.w3.org/2005/08/addressing" xmlns:d="http://docs.oasis-open.org/ws-dd/ns/discovery/2009/01">' +
    '<s:Header><a:Action>http://docs.oasis-open.org/ws-dd/ns/discovery/2009/01/ProbeMatches</a:Action><a:MessageID>urn:uuid:1</a:MessageID></s:Header><s:Body><d:ProbeMatches>' +
    `<d:ProbeMatch><a:EndpointReference><a:Address>urn:uuid:${UUID}</a:Address></a:EndpointReference><d:Types xmlns:p="${PRINT_NS}">p:PrintDeviceType</d:Types><d:XAddrs>http://10.1.2.3:80/wsd</d:XAddrs></d:ProbeMatch>` +
    '<d:ProbeMatch><a:EndpointReference><a:Address>urn:uuid:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee</a:Address></a:EndpointReference><d:Types xmlns:pub="http://schemas.microsoft.com/windows/pub/2005/07">pub:Computer</d:Types><d:XAddrs>http://10.1.2.4:5357/x</d:XAddrs></d:ProbeMatch>' +
    '</d:ProbeMatches></s:Body></s:Envelope>';
  const ms = parseWsdMessage(xml);
  assert.equal(ms.length, 2);
  assert.deepEqual(ms.map((m) => [m.kind, m.address, m.printer]), [['probe-match', '10.1.2.3', true], ['probe-match', '10.1.2.4', false]]);
});

test('a type named PrintDeviceType in another namespace (or an undeclared prefix) is not a printer', () => {
  const other = env(hdr('Hello'), `<wsd:Hello><wsa:EndpointReference><wsa:Address>urn:uuid:${UUID}</wsa:Address></wsa:EndpointReference><wsd:Types>x:PrintDeviceType</wsd:Types><wsd:XAddrs>http://10.0.0.5/</wsd:XAddrs></wsd:Hello>`, 'xmlns:x="http://example.com/not-print"');
  assert.equal(parseWsdMessage(other)[0].printer, false);
  const undeclared = env(hdr('Hello'), `<wsd:Hello><wsa:EndpointReference><wsa:Address>urn:uuid:${UUID}</wsa:Address></wsa:EndpointReference><wsd:Types>wprt:PrintDeviceType</wsd:Types><wsd:XAddrs>http://10.0.0.5/</wsd:XAddrs></wsd:Hello>`);
  assert.deepEqual(parseWsdMessage(undeclared)[0].types, ['wprt:PrintDeviceType']);
  assert.equal(parseWsdMessage(undeclared)[0].printer, false);
  // A Hello outside the discovery namespace is not one.
  const fake = env(hdr('Hello'), `<x:Hello xmlns:x="http://example.com/"><wsa:EndpointReference><wsa:Address>urn:uuid:${UUID}</wsa:Address></wsa:EndpointReference></x:Hello>`);
  assert.deepEqual(parseWsdMessage(fake), []);
});

test('a Bye carries the endpoint only; a host name XAddr gives no address (names are never resolved)', () => {
  const bye = parseWsdMessage(env(hdr('Bye'), `<wsd:Bye><wsa:EndpointReference><wsa:Address>urn:uuid:${UUID}</wsa:Address></wsa:EndpointReference></wsd:Bye>`));
  assert.deepEqual(bye.map((m) => [m.kind, m.uuid, m.address]), [['bye', UUID, undefined]]);
  const named = parseWsdMessage(env(hdr('Hello'), `<wsd:Hello><wsa:EndpointReference><wsa:Address>urn:uuid:${UUID}</wsa:Address></wsa:EndpointReference><wsd:Types>wprt:PrintDeviceType</wsd:Types><wsd:XAddrs>http://printer.lan:80/ ftp://10.0.0.9/ javascript:alert(1)</wsd:XAddrs></wsd:Hello>`, PRINT));
  assert.equal(named[0].address, undefined);
  assert.deepEqual(named[0].xaddrs, ['http://printer.lan:80/']);
});

test('junk, another protocol, a Probe, an entity bomb, deep nesting and an oversize datagram give nothing', () => {
  assert.deepEqual(parseWsdMessage(''), []);
  assert.deepEqual(parseWsdMessage(Buffer.from([0xff, 0x00, 0x13, 0x37])), []);
  assert.deepEqual(parseWsdMessage('<soap:Envelope><soap:Body><wsd:Hello>'), [], 'unclosed');
  assert.deepEqual(parseWsdMessage(M_SEARCH), []);
  assert.deepEqual(parseWsdMessage(probeMessage()), [], 'our own Probe is not an announcement');
  const bomb = `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` +
    env(hdr('Hello'), `<wsd:Hello><wsa:EndpointReference><wsa:Address>&c;</wsa:Address></wsa:EndpointReference><wsd:Types>wprt:PrintDeviceType</wsd:Types><wsd:XAddrs>http://10.0.0.5/</wsd:XAddrs></wsd:Hello>`, PRINT).replace(/^<\?xml[^>]*>/, '');
  for (const m of parseWsdMessage(bomb)) assert.ok(m.endpoint.length < 100, 'entities are not expanded');
  const deep = env(hdr('Hello'), `${'<a>'.repeat(200)}x${'</a>'.repeat(200)}`);
  assert.deepEqual(parseWsdMessage(deep), []);
  const hello = env(hdr('Hello'), `<wsd:Hello><wsa:EndpointReference><wsa:Address>urn:uuid:${UUID}</wsa:Address></wsa:EndpointReference><wsd:Types>wprt:PrintDeviceType</wsd:Types><wsd:XAddrs>http://10.0.0.5/</wsd:XAddrs></wsd:Hello>`, PRINT);
  assert.equal(parseWsdMessage(hello).length, 1);
  const padded = hello.replace('</soap:Header>', `<wsa:Pad>${'x'.repeat(MAX_WSD_DATAGRAM)}</wsa:Pad></soap:Header>`);
  assert.deepEqual(parseWsdMessage(padded), [], 'over the size cap: not parsed');
  const long = hello.replace(`urn:uuid:${UUID}`, `urn:x:${'y'.repeat(5000)}`);
  assert.ok(parseWsdMessage(long)[0].endpoint.length <= 2048, 'strings bounded');
});

test('our Probe asks for wprt:PrintDeviceType with the print namespace declared', () => {
  const p = probeMessage('urn:uuid:00000000-0000-4000-8000-000000000000');
  assert.ok(p.includes(`xmlns:wprt="${PRINT_NS}"`));
  assert.ok(p.includes('<wsd:Types>wprt:PrintDeviceType</wsd:Types>'));
  assert.ok(p.includes('http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe'));
});

test('an SSDP answer for Printer:1 gives its LOCATION address and USN uuid; anything else nothing', () => {
  const ok = `HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=1800\r\nEXT:\r\nLOCATION: http://10.9.8.7:8080/description.xml\r\nSERVER: Linux/3.x UPnP/1.0 Printer/1\r\nST: ${SSDP_PRINTER}\r\nUSN: uuid:${UUID}::${SSDP_PRINTER}\r\n\r\n`;
  assert.deepEqual(parseSsdpAnswer(Buffer.from(ok)), { location: 'http://10.9.8.7:8080/description.xml', address: '10.9.8.7', st: SSDP_PRINTER, usn: `uuid:${UUID}::${SSDP_PRINTER}`, uuid: UUID });
  assert.equal(parseSsdpAnswer(ok.replace(SSDP_PRINTER, 'upnp:rootdevice')), undefined, 'not a printer');
  assert.equal(parseSsdpAnswer(ok.replace('http://10.9.8.7:8080', 'http://printer.lan')), undefined, 'a name');
  assert.equal(parseSsdpAnswer(ok.replace('HTTP/1.1 200 OK', 'NOTIFY * HTTP/1.1')), undefined);
  assert.equal(parseSsdpAnswer(M_SEARCH), undefined, 'a search is not an answer');
  assert.equal(parseSsdpAnswer(ok + 'X'.repeat(5000)), undefined, 'oversize');
});

test('an observation from a WS-Discovery announcement says wsd and what was seen; a Bye marks the record', () => {
  const a = { services: [], txt: { uuid: UUID }, method: 'wsd' as const, seen: [`wsd: Hello of urn:uuid:${UUID}, wprt:PrintDeviceType at http://10.0.0.5:3911/`] };
  assert.deepEqual(announcedBy(a), ['wsd']);
  assert.deepEqual(announcedBy({ services: ['_ipp._tcp'], txt: {} }), ['mdns']);
  assert.deepEqual(announcedBy(undefined), []);
  const o = ippObservation({ ip: '10.0.0.5', port: 631, tls: false, now: 1, announcement: a, state: { stateReasons: [], alerts: [], markers: [], supplies: [] } })!;
  assert.equal(o.serial, `UUID-${UUID}`, 'no serial nor printer-uuid from IPP: the endpoint uuid keys it');
  assert.deepEqual(o.discoveryMethods, ['wsd', 'ipp']);
  assert.deepEqual(o.printerInfo.detection_reasons, [a.seen[0], 'ipp: ipp port 631 answered Get-Printer-Attributes']);
  assert.equal(o.printerInfo.advertised_services, undefined);
  const d = { serial: 'S', ip: '10.0.0.5', last_seen: 5, status_messages: [SAID_GOODBYE, 'toner-low'] } as Device;
  const g = markGone(d, 10, 'wsd');
  assert.deepEqual(g.status_messages, [saidGoodbye('wsd'), 'toner-low'], 'one goodbye line, the latest');
  assert.equal(saidGoodbye('wsd'), 'offline: said goodbye on WS-Discovery');
  assert.equal((g.raw_data as Record<string, unknown>).wsd_goodbye_at, new Date(10).toISOString());
});
