// Print queues: what a real CUPS 2.4.2 server answered (test/fixtures/ipp/cups-*.ipp, its DNS-SD
// announcements in cups-dnssd-txt.json) is a queue; what printers answered (the recorded replies of
// real printers, and ippeveprinter, CUPS's own printer simulator) is not. A queue is linked to a
// known printer only when its device-uri names that printer beyond doubt.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodeIppResponse, printerStateOf, type IppPrinterState } from '../../../src/ipp/codec.js';
import { printQueueOf, queueLinkOf, type KnownPrinter } from '../../../src/ipp/print-queue.js';
import { repoRoot } from '../../kit/snmpsim.js';

const dir = join(repoRoot(), 'test', 'fixtures', 'ipp');
const state = (f: string): IppPrinterState => printerStateOf(decodeIppResponse(readFileSync(join(dir, f))));
const announced = JSON.parse(readFileSync(join(dir, 'cups-dnssd-txt.json'), 'utf8')) as Record<string, { port: number; txt: Record<string, string> }>;
const txt = (name: string) => announced[name].txt;

describe('a CUPS server\'s queues', () => {
  it('the IPP attributes of a shared queue (q1, IPP Everywhere driver, prints to a printer on the server)', () => {
    const q = printQueueOf({ attributes: state('cups-queue.ipp'), resource: '/printers/q1' });
    assert.ok(q);
    assert.equal(q.server_kind, 'cups');
    assert.equal(q.queue, 'q1');
    assert.equal(q.is_class, undefined);
    assert.equal(q.make_and_model, 'Printer - IPP Everywhere');
    assert.equal(q.uri, 'ipp://192.0.2.10:631/printers/q1');
    assert.equal(q.device_uri, 'ipp://127.0.0.1:8631/ipp/print');
    assert.match(q.why, /^CUPS queue printers\/q1: IPP printer-type 4100 \(0x1004\); read at \/printers\/q1; device-uri ipp:\/\/127\.0\.0\.1:8631\/ipp\/print$/);
  });

  it('the IPP attributes alone suffice (no resource, no TXT): printer-uri-supported names the queue', () => {
    const q = printQueueOf({ attributes: state('cups-raw-queue.ipp') });
    assert.ok(q);
    assert.deepEqual([q.server_kind, q.queue, q.make_and_model, q.device_uri], ['cups', 'q2', 'Local Raw Printer', 'ipp://192.0.2.50:631/ipp/print']);
  });

  it('a class is a queue too, marked as a class', () => {
    const q = printQueueOf({ attributes: state('cups-class.ipp'), resource: '/classes/office' });
    assert.ok(q);
    assert.deepEqual([q.server_kind, q.queue, q.is_class, q.device_uri], ['cups', 'office', true, 'file:///dev/null']);
  });

  it('the DNS-SD announcement alone (before any IPP read)', () => {
    const q1 = printQueueOf({ txt: txt('Front desk queue @ cupsbox') });
    assert.ok(q1);
    assert.deepEqual([q1.server_kind, q1.queue, q1.make_and_model, q1.is_class], ['cups', 'q1', 'Printer - IPP Everywhere', undefined]);
    assert.match(q1.why, /DNS-SD printer-type=0x1006; rp=printers\/q1/);
    const office = printQueueOf({ txt: txt('office @ cupsbox') });
    assert.equal(office?.is_class, true);
    assert.equal(printQueueOf({ txt: txt('q2 @ cupsbox') })?.queue, 'q2');
  });

  it('a queue CUPS made for a printer it discovered says so', () => {
    const q = printQueueOf({ txt: { 'printer-type': '0x1000006', rp: 'printers/Acme_Laser' } });
    assert.match(q?.why ?? '', /made by CUPS for a printer it discovered/);
  });

  it('device-uri loses any user and password', () => {
    const q = printQueueOf({ attributes: { cupsPrinterType: 4, uriSupported: ['ipp://srv:631/printers/acct'], deviceUri: 'smb://DOMAIN%5Cbob:secret@fileserver/Laser' } });
    assert.equal(q?.device_uri, 'smb://fileserver/Laser');
  });
});

describe('printers are not queues', () => {
  for (const f of ['ippeveprinter.ipp', 'hp-officejet-pro-8730.ipp', 'pantum-m7300fdw.ipp', 'xerox-b210.ipp', 'brother-ql-1110nwb.ipp']) {
    it(f, () => assert.equal(printQueueOf({ attributes: state(f), resource: '/ipp/print' }), undefined));
  }
  it('ippeveprinter\'s DNS-SD announcement (rp=ipp/print, no printer-type)', () => {
    assert.equal(printQueueOf({ txt: txt('Acme Laser') }), undefined);
  });
  it('a /printers/ path without CUPS\'s printer-type or a device-uri, and printer-type without a queue path', () => {
    assert.equal(printQueueOf({ txt: { rp: 'printers/lp1' }, resource: '/printers/lp1' }), undefined);
    assert.equal(printQueueOf({ txt: { 'printer-type': '0x1006', rp: 'ipp/print' } }), undefined);
    assert.equal(printQueueOf({ txt: { 'printer-type': 'nonsense', rp: 'printers/x' } }), undefined);
  });
  it('bad input never throws', () => {
    assert.equal(printQueueOf({}), undefined);
    assert.equal(printQueueOf({ txt: { rp: '%%%', adminurl: 'http://[bad' }, resource: '\u0000', attributes: { uriSupported: ['not a uri'], cupsPrinterType: -1 } }), undefined);
    assert.equal(printQueueOf({ attributes: { deviceUri: 'socket://10.0.0.9' } }), undefined, 'a device-uri with no queue name at all');
  });
});

describe('Windows and other servers', () => {
  it('Windows Internet Printing shares at /printers/<name>/.printer', () => {
    const q = printQueueOf({ resource: '/printers/Lab%20Laser/.printer' });
    assert.deepEqual([q?.server_kind, q?.queue], ['windows', 'Lab Laser']);
  });
  it('a device-uri without printer-type: a queue of an unknown server', () => {
    const q = printQueueOf({ attributes: { name: 'lab', deviceUri: 'socket://10.0.0.9:9100' }, resource: '/ipp/print/lab' });
    assert.deepEqual([q?.server_kind, q?.queue], ['other', 'lab']);
  });
});

describe('queueLinkOf: the printer behind a queue, only when sure', () => {
  const known: KnownPrinter[] = [
    { serial: 'VD21457943', ip: '192.0.2.50', hostname: 'kyocera-2f', printer_uuid: '4509a320-00a0-008f-00b6-002507510eca' },
    { serial: 'X8G9000415', ip: '192.0.2.51', hostname: 'epson-plotter.local' },
    { serial: 'CNB1234567', ip: '192.0.2.52' },
    { serial: 'CNB1234567', ip: '192.0.2.53' },
  ];
  it('the recorded raw queue prints to ipp://192.0.2.50: the printer at that address', () => {
    const q = printQueueOf({ attributes: state('cups-raw-queue.ipp') })!;
    assert.deepEqual(queueLinkOf(q, known), { serial: 'VD21457943', why: "device-uri host 192.0.2.50 is the printer's address" });
  });
  it('the recorded IPP Everywhere queue prints to a printer on the server itself (127.0.0.1): none', () => {
    assert.equal(queueLinkOf(printQueueOf({ attributes: state('cups-queue.ipp') })!, [...known, { serial: 'LOCAL', ip: '127.0.0.1' }]), undefined);
  });
  it('a class: none', () => {
    assert.equal(queueLinkOf({ device_uri: 'ipp://192.0.2.50/ipp/print', is_class: true }, known), undefined);
  });
  it('by host name, by dnssd uuid, by usb serial', () => {
    assert.equal(queueLinkOf({ device_uri: 'socket://EPSON-plotter.local:9100' }, known)?.serial, 'X8G9000415');
    assert.equal(queueLinkOf({ device_uri: 'dnssd://Kyocera%20P2040._ipp._tcp.local/?uuid=4509A320-00A0-008F-00B6-002507510ECA' }, known)?.serial, 'VD21457943');
    assert.equal(queueLinkOf({ device_uri: 'dnssd://Kyocera%20P2040._ipp._tcp.local/?uuid=00000000-0000-0000-0000-000000000000' }, known), undefined);
    assert.equal(queueLinkOf({ device_uri: 'usb://Epson/SC-T3405?serial=X8G9000415' }, known)?.serial, 'X8G9000415');
    assert.equal(queueLinkOf({ device_uri: 'usb://Epson/SC-T3405' }, known), undefined);
  });
  it('unknown hosts, odd URIs, or no device-uri: none', () => {
    assert.equal(queueLinkOf({ device_uri: 'ipp://192.0.2.99/ipp/print' }, known), undefined);
    assert.equal(queueLinkOf({ device_uri: 'lpd://localhost/queue' }, known), undefined);
    assert.equal(queueLinkOf({ device_uri: 'not a uri' }, known), undefined);
    assert.equal(queueLinkOf({}, known), undefined);
  });
});
