// The USB printer readers on replies as printers send them: the GET_DEVICE_ID reply, the port
// status byte, PJL and IPP-over-USB replies (over a scripted pipe: a test double of the bulk endpoints, the real
// ones are exercised by the boot test's USB printer gadgets), and how a report becomes a record.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeDeviceIdReply } from '../../../src/usb/device-id.js';
import { decodePortStatus, portStatusMessages } from '../../../src/usb/port-status.js';
import { PJL_QUERY, parsePjlReply, pjlStatusMessages, readPjl } from '../../../src/usb/pjl.js';
import type { BulkPipe } from '../../../src/usb/pipe.js';
import { decodeIppResponse, getPrinterAttributesRequest, printerStateOf } from '../../../src/ipp/codec.js';
import { MAX_REPLY, readIppPrinter } from '../../../src/usb/ipp-over-usb.js';
import { UNPLUGGED, markUnplugged, usbDevice, usbSerial, usbSnapshot } from '../../../src/usb/reading.js';
import type { UsbPrinterReport } from '../../../src/usb/probe.js';

const withLength = (text: string, order: 'be' | 'le' = 'be', extra = 0) => {
  const body = Buffer.from(text, 'latin1');
  const n = body.length + 2 + extra;
  return Buffer.concat([Buffer.from(order === 'be' ? [n >> 8, n & 0xff] : [n & 0xff, n >> 8]), body]);
};

test('Device ID reply: the length counts itself, big-endian; the text is parsed', () => {
  const r = decodeDeviceIdReply(withLength('MFG:Brother;CMD:PJL,PCL,PCLXL;MDL:HL-L2350DW series;CLS:PRINTER;SN:E78123K9N123456;'));
  assert.ok('id' in r);
  assert.equal(r.id.manufacturer, 'Brother');
  assert.equal(r.id.model, 'HL-L2350DW series');
  assert.equal(r.id.serial, 'E78123K9N123456');
  assert.deepEqual(r.id.commandSet, ['PJL', 'PCL', 'PCLXL']);
});

test('Device ID reply: little-endian length, trailing NULs and padding past the length are cut', () => {
  const text = 'MANUFACTURER:HP;MODEL:LaserJet M404;COMMAND SET:PJL,PCL;';
  const r = decodeDeviceIdReply(Buffer.concat([withLength(text, 'le'), Buffer.from('\0\0GARBAGE:1;')]));
  assert.ok('id' in r);
  assert.equal(r.id.model, 'LaserJet M404');
  assert.equal(r.id.fields.GARBAGE, undefined);
});

test('Device ID reply: a length past the reply uses what came; missing fields stay missing', () => {
  const r = decodeDeviceIdReply(withLength('MFG:Acme;CLS:PRINTER;', 'be', 500));
  assert.ok('id' in r);
  assert.equal(r.id.manufacturer, 'Acme');
  assert.equal(r.id.model, undefined);
  assert.equal(r.id.serial, undefined);
});

test('Device ID reply: too short, no KEY:value, binary junk: an error naming it', () => {
  for (const [reply, why] of [
    [Buffer.from([0x00]), /shorter than its length field/],
    [withLength(''), /no KEY:value/],
    [withLength('just some text'), /no KEY:value/],
    [Buffer.from([0x00, 0x06, 0xff, 0xfe, 0x01, 0x02]), /no KEY:value/],
  ] as const) {
    const r = decodeDeviceIdReply(reply);
    assert.ok('error' in r, `expected an error for ${reply.toString('hex')}`);
    assert.match(r.error, why);
  }
});

test('port status: paper empty, not selected and error bits, as status lines', () => {
  assert.deepEqual(portStatusMessages(decodePortStatus(0x18)), []); // selected, no error
  assert.deepEqual(portStatusMessages(decodePortStatus(0x38)), ['paper empty']);
  assert.deepEqual(portStatusMessages(decodePortStatus(0x08)), ['offline (not selected)']);
  assert.deepEqual(portStatusMessages(decodePortStatus(0x10)), ['printer error']);
});

test('PJL replies: page count in both forms, status fields, sections in any order', () => {
  assert.deepEqual(parsePjlReply('@PJL INFO PAGECOUNT\r\n12345\r\n\f@PJL INFO STATUS\r\nCODE=10001\r\nDISPLAY="Ready"\r\nONLINE=TRUE\r\n\f'), {
    pageCount: 12345, code: 10001, display: 'Ready', online: true,
  });
  assert.deepEqual(parsePjlReply('@PJL INFO STATUS\r\nCODE=40021\r\nDISPLAY="Close door"\r\nONLINE=FALSE\r\n\f@PJL INFO PAGECOUNT\r\nPAGECOUNT=77\r\n\f'), {
    code: 40021, display: 'Close door', online: false, pageCount: 77,
  });
  assert.deepEqual(parsePjlReply('@PJL USTATUS DEVICE\r\nCODE=10023\r\nDISPLAY="Printing"\r\nONLINE=TRUE\r\n\f'), { code: 10023, display: 'Printing', online: true });
  assert.deepEqual(parsePjlReply('@PJL INFO PAGECOUNT\r\n?\r\n\f'), {});
  assert.deepEqual(parsePjlReply('\x00\x01 not pjl at all'), {});
  assert.deepEqual(pjlStatusMessages({ code: 10001, display: 'Ready', online: true }), []);
  assert.deepEqual(pjlStatusMessages({ code: 40021, display: 'Close door', online: false }), ['Close door', 'offline']);
});

/** A test double of a printer's bulk endpoints: records what is written, replays scripted reads. */
function scriptedPipe(reads: (string | null)[]): BulkPipe & { written: string } {
  const pipe = {
    written: '',
    async write(data: Uint8Array) {
      pipe.written += Buffer.from(data).toString('latin1');
    },
    async read() {
      const next = reads.shift();
      return next == null ? new Uint8Array(0) : Buffer.from(next, 'latin1');
    },
  };
  return pipe;
}

test('readPjl: sends the query in UEL, joins partial reads until both sections ended', async () => {
  const pipe = scriptedPipe(['@PJL INFO PAGE', 'COUNT\r\n4242\r\n\f@PJL INFO STA', 'TUS\r\nCODE=10001\r\nDISPLAY="Ready"\r\nONLINE=TRUE\r\n\f', 'never read']);
  assert.deepEqual(await readPjl(pipe, 1000), { pageCount: 4242, code: 10001, display: 'Ready', online: true });
  assert.equal(pipe.written, PJL_QUERY);
  assert.ok(PJL_QUERY.startsWith('\x1b%-12345X@PJL') && PJL_QUERY.endsWith('\x1b%-12345X'));
});

test('readPjl: a printer that says part and stops gives what it said; one that never answers gives nothing', async () => {
  assert.deepEqual(await readPjl(scriptedPipe(['@PJL INFO PAGECOUNT\r\n9\r\n\f', null]), 1000, 10), { pageCount: 9 });
  assert.equal(await readPjl(scriptedPipe([]), 50, 10), undefined);
});

const report = (over: Partial<UsbPrinterReport> = {}): UsbPrinterReport => ({
  portPath: '1-1.2', vendorId: 0x04f9, productId: 0x0042, manufacturerName: 'Brother', productName: 'HL-L2350DW', serialNumber: 'USBSER1',
  ippUsb: false, problems: [], ...over,
});

test('serial: the Device ID serial, else iSerialNumber, else USB-<vid>:<pid>-<port path> (docs/decisions/0007-device-identity.md)', () => {
  const id = decodeDeviceIdReply(withLength('MFG:Brother;MDL:HL;SN:IDSER;'));
  assert.ok('id' in id);
  assert.equal(usbSerial(report({ deviceId: id.id })), 'IDSER');
  assert.equal(usbSerial(report()), 'USBSER1');
  assert.equal(usbSerial(report({ serialNumber: undefined })), 'USB-04f9:0042-1-1.2');
});

test('a report as a record: USB fields, port name, status lines; a person\'s choices kept; unplugged keeps last_seen', () => {
  const id = decodeDeviceIdReply(withLength('MFG:Brother;CMD:PJL;MDL:HL-L2350DW series;SN:IDSER;'));
  assert.ok('id' in id);
  const r = report({ deviceId: id.id, portStatus: decodePortStatus(0x38), pjl: { pageCount: 100, code: 10001, display: 'Ready', online: true } });
  const d = usbDevice(undefined, r, 1000);
  assert.equal(d.serial, 'IDSER');
  assert.equal(d.port_name, 'usb:1-1.2');
  assert.equal(d.is_usb, true);
  assert.equal(d.device_type, 'usb');
  assert.equal(d.source_type, 'usb');
  assert.equal(d.model, 'HL-L2350DW series');
  assert.deepEqual(d.status_messages, ['paper empty']);
  assert.equal(d.printer_info?.page_count, 100);
  assert.equal(usbSnapshot(r, 1000).page_count, 100);

  const edited = { ...d, location: 'Front desk', model: 'Renamed', locked_fields: [{ field: 'model', locked_at: '2026-01-01T00:00:00Z' }] };
  const moved = usbDevice(edited, { ...r, portPath: '3-1' }, 2000);
  assert.equal(moved.location, 'Front desk');
  assert.equal(moved.model, 'Renamed');
  assert.equal(moved.port_name, 'usb:3-1');
  assert.equal(moved.created_at, 1000);

  const gone = markUnplugged(moved, 3000);
  assert.equal(gone.last_seen, 2000);
  assert.equal(gone.status_messages?.[0], UNPLUGGED);
  assert.equal(usbDevice(gone, r, 4000).status_messages?.includes(UNPLUGGED), false);
});

// ---- IPP over USB: replies built with the encoding of RFC 8010, as a printer sends them.

/** One attribute (or, with name '', an additional value) in IPP's binary encoding. */
function ippAttr(tag: number, name: string, value: Buffer | string | number): Buffer {
  const v = typeof value === 'number' ? Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]) : Buffer.from(value);
  const n = Buffer.from(name);
  return Buffer.concat([Buffer.from([tag, n.length >> 8, n.length & 255]), n, Buffer.from([v.length >> 8, v.length & 255]), v]);
}
const set = (tag: number, name: string, values: (string | number)[]) => Buffer.concat(values.map((v, i) => ippAttr(tag, i === 0 ? name : '', v)));

function printerReply(status = 0x0000, extra: Buffer[] = []): Buffer {
  return Buffer.concat([
    Buffer.from([0x02, 0x00, status >> 8, status & 255, 0, 0, 0, 1]),
    Buffer.from([0x01]), ippAttr(0x47, 'attributes-charset', 'utf-8'), ippAttr(0x48, 'attributes-natural-language', 'en'),
    Buffer.from([0x04]),
    ippAttr(0x41, 'printer-make-and-model', 'HP LaserJet Pro M404dn'),
    ippAttr(0x45, 'printer-uuid', 'urn:uuid:1e9f2a3b-0000-1000-8000-00aabbccddee'),
    ippAttr(0x23, 'printer-state', 3),
    set(0x44, 'printer-state-reasons', ['toner-low-warning']),
    set(0x42, 'marker-names', ['Black Cartridge', 'Cyan Cartridge', 'Waste Toner Box']),
    set(0x42, 'marker-colors', ['#000000', '#00FFFF', 'none']),
    set(0x44, 'marker-types', ['toner-cartridge', 'toner-cartridge', 'waste-toner']),
    set(0x21, 'marker-levels', [42, -3, 100]),
    // printer-impressions-completed-col { monochrome: 900, full-color: 334 }
    ippAttr(0x34, 'printer-impressions-completed-col', ''),
    ippAttr(0x4a, '', 'monochrome'), ippAttr(0x21, '', 900),
    ippAttr(0x4a, '', 'full-color'), ippAttr(0x21, '', 334),
    ippAttr(0x37, '', ''),
    ippAttr(0x21, 'printer-impressions-completed', 1234),
    ...extra,
    Buffer.from([0x03]),
  ]);
}

test('IPP request: Get-Printer-Attributes, version 2.0, the operation attributes, requested-attributes', () => {
  const req = getPrinterAttributesRequest('ipp://localhost/ipp/print', 7);
  assert.equal(req.readUInt16BE(0), 0x0200);
  assert.equal(req.readUInt16BE(2), 0x000b);
  assert.equal(req.readUInt32BE(4), 7);
  assert.ok(req.includes(Buffer.from('requested-attributes')) && req.includes(Buffer.from('marker-levels')));
  assert.equal(req.at(-1), 0x03);
});

test('IPP reply: markers, unknown levels left out, counters (collection too), state', () => {
  const s = printerStateOf(decodeIppResponse(printerReply()));
  assert.equal(s.makeAndModel, 'HP LaserJet Pro M404dn');
  assert.equal(s.uuid, '1e9f2a3b-0000-1000-8000-00aabbccddee');
  assert.equal(s.state, 'idle');
  assert.deepEqual(s.stateReasons, ['toner-low-warning']);
  assert.deepEqual(s.markers, [
    { name: 'Black Cartridge', color: '#000000', type: 'toner-cartridge', level: 42 },
    { name: 'Cyan Cartridge', color: '#00FFFF', type: 'toner-cartridge' },
    { name: 'Waste Toner Box', type: 'waste-toner', level: 100 },
  ]);
  assert.deepEqual([s.pageCount, s.monoPages, s.colorPages], [1234, 900, 334]);
  // As a record: supply keys and levels, the page count, the state reason as a status line.
  const d = usbDevice(undefined, report({ ippUsb: true, ipp: s }), 1);
  assert.equal(d.usb_webui_available, true);
  assert.deepEqual(d.consumables, ['black', 'cyan', 'waste_toner']);
  assert.deepEqual(d.printer_info?.toner_levels, { black: 42, waste_toner: 100 });
  assert.ok(d.status_messages?.includes('toner-low-warning'));
  assert.equal(usbSnapshot(report({ ipp: s }), 1).color_pages, 334);
});

test('IPP reply: a refusal, a truncated reply, junk, a stray collection member: errors naming it', () => {
  assert.throws(() => printerStateOf(decodeIppResponse(printerReply(0x0400))), /refused: status 0x0400/);
  const full = printerReply();
  assert.throws(() => decodeIppResponse(full.subarray(0, full.length - 20)), /truncated/);
  assert.throws(() => decodeIppResponse(Buffer.from('HTTP/1.1 200 OK\r\n')), /not an IPP reply/);
  assert.throws(() => decodeIppResponse(Buffer.concat([Buffer.from([2, 0, 0, 0, 0, 0, 0, 1, 4]), ippAttr(0x4a, '', 'x'), Buffer.from([3])])), /outside a collection/);
});

function httpPipe(chunks: Buffer[]): BulkPipe & { written: Buffer } {
  const pipe = {
    written: Buffer.alloc(0),
    async write(data: Uint8Array) {
      pipe.written = Buffer.concat([pipe.written, data]);
    },
    async read() {
      return chunks.shift() ?? new Uint8Array(0);
    },
  };
  return pipe;
}

test('IPP over USB: a POST to /ipp/print; Content-Length and chunked replies, split across reads', async () => {
  const body = printerReply();
  const plain = httpPipe([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/ipp\r\nContent-Length: ${body.length}\r\n\r\n`), body.subarray(0, 50), body.subarray(50)]);
  assert.equal((await readIppPrinter(plain, { timeoutMs: 1000 })).pageCount, 1234);
  assert.match(plain.written.toString('latin1'), /^POST \/ipp\/print HTTP\/1\.1\r\nHost: localhost\r\nContent-Type: application\/ipp\r\nContent-Length: \d+\r\n\r\n\x02\x00\x00\x0b/);
  const chunked = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'),
    Buffer.from(`${(40).toString(16)}\r\n`), body.subarray(0, 40), Buffer.from(`\r\n${(body.length - 40).toString(16)}\r\n`), body.subarray(40), Buffer.from('\r\n0\r\n\r\n')]);
  const split = [chunked.subarray(0, 17), chunked.subarray(17, 90), chunked.subarray(90)];
  assert.deepEqual((await readIppPrinter(httpPipe(split), { timeoutMs: 1000 })).markers.length, 3);
});

test('IPP over USB: an HTTP error, an oversized reply, silence: errors naming it', async () => {
  await assert.rejects(readIppPrinter(httpPipe([Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')]), { timeoutMs: 1000 }), /HTTP 404/);
  await assert.rejects(readIppPrinter(httpPipe([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${MAX_REPLY + 1}\r\n\r\n`)]), { timeoutMs: 1000 }), /larger than/);
  await assert.rejects(readIppPrinter(httpPipe([]), { timeoutMs: 50 }), /no complete reply in time/);
});
