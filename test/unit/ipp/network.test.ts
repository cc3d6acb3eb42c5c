// IPP reading of a network printer: the shared codec's reply decoded into identity,
// supplies, counters and state, mapped to PrinterInfo; the network client over real HTTP and
// HTTPS (a self-signed certificate, as printers have) on 127.0.0.1; the safety rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { decodeIppResponse, printerStateOf } from '../../../src/ipp/codec.js';
import { readNetworkPrinter, resourceOf } from '../../../src/ipp/client.js';
import { combineObservations, ippMetrics, ippObservation, uuidKey } from '../../../src/ipp/observation.js';
import { ippSupplies } from '../../../src/ipp/supplies.js';
import type { Observation } from '../../../src/model/observation.js';

/** One attribute (or, with name '', an additional value) in IPP's binary encoding (RFC 8010). */
function attr(tag: number, name: string, value: Buffer | string | number): Buffer {
  const v = typeof value === 'number' ? Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]) : Buffer.from(value);
  const n = Buffer.from(name);
  return Buffer.concat([Buffer.from([tag, n.length >> 8, n.length & 255]), n, Buffer.from([v.length >> 8, v.length & 255]), v]);
}
const set = (tag: number, name: string, values: (string | number)[]) => Buffer.concat(values.map((v, i) => attr(tag, i === 0 ? name : '', v)));
const col = (name: string, members: [string, number][]) =>
  Buffer.concat([attr(0x34, name, ''), ...members.flatMap(([m, v]) => [attr(0x4a, '', m), attr(0x21, '', v)]), attr(0x37, '', '')]);

function reply(printer: Buffer[], status = 0): Buffer {
  return Buffer.concat([
    Buffer.from([0x02, 0x00, status >> 8, status & 255, 0, 0, 0, 1]),
    Buffer.from([0x01]), attr(0x47, 'attributes-charset', 'utf-8'), attr(0x48, 'attributes-natural-language', 'en'),
    Buffer.from([0x04]), ...printer, Buffer.from([0x03]),
  ]);
}

/** A colour laser that reports everything, its supplies by marker-* and printer-supply both. */
const colourLaser = reply([
  attr(0x41, 'printer-make-and-model', 'Acme ColorLaser 9000'),
  attr(0x41, 'printer-device-id', 'MFG:Acme;MDL:ColorLaser 9000;CMD:PWGRaster,PDF;SN:ACM0042;'),
  attr(0x45, 'printer-uuid', 'urn:uuid:6F1B2C3D-0000-1000-8000-00AABBCCDDEE'),
  attr(0x41, 'printer-firmware-string-version', '2.4.1'),
  attr(0x41, 'printer-info', 'Second floor colour'),
  attr(0x41, 'printer-location', 'Room 204'),
  attr(0x42, 'printer-name', 'acme-9000'),
  attr(0x23, 'printer-state', 5),
  attr(0x41, 'printer-state-message', 'Paper jam in tray 2'),
  set(0x44, 'printer-state-reasons', ['media-jam-error', 'toner-low-warning']),
  set(0x30, 'printer-alert', ['code=jam;severity=critical;group=mediaPath', 'code=other']),
  set(0x41, 'printer-alert-description', ['Jam in tray 2', '']),
  set(0x42, 'marker-names', ['Black Toner', 'Cyan Toner', 'Magenta Toner', 'Yellow Toner', 'Waste Toner Box']),
  set(0x42, 'marker-colors', ['#000000', '#00FFFF', '#FF00FF', '#FFFF00', 'none']),
  set(0x44, 'marker-types', ['toner', 'toner', 'toner', 'toner', 'waste-toner']),
  set(0x21, 'marker-levels', [80, 55, -2, 12, 100]),
  set(0x30, 'printer-supply', ['index=1;type=toner;unit=percent;maxcapacity=100;level=80;colorantname=black;']),
  attr(0x21, 'printer-impressions-completed', 5150),
  col('printer-impressions-completed-col', [['monochrome', 4000], ['full-color', 1150]]),
  attr(0x21, 'printer-media-sheets-completed', 3100),
  attr(0x22, 'color-supported', Buffer.from([1])),
  set(0x44, 'sides-supported', ['one-sided', 'two-sided-long-edge']),
  attr(0x45, 'printer-more-info', 'https://198.18.9.5/'),
]);

test('IPP reply: identity, supplies, counters and state of a colour laser', () => {
  const s = printerStateOf(decodeIppResponse(colourLaser));
  assert.equal(s.makeAndModel, 'Acme ColorLaser 9000');
  assert.equal(s.uuid, '6F1B2C3D-0000-1000-8000-00AABBCCDDEE');
  assert.equal(s.state, 'stopped');
  assert.deepEqual(s.alerts, ['jam: Jam in tray 2']);
  assert.deepEqual(s.supplies, [{ type: 'toner', colorantName: 'black', level: 80 }]);
  assert.equal(s.mediaSheets, 3100);
  assert.equal(s.colorSupported, true);
  assert.equal(s.duplexSupported, true);

  const o = ippObservation({ ip: '198.18.9.5', port: 631, tls: false, state: s, now: Date.UTC(2026, 0, 2) });
  assert.ok(o);
  assert.equal(o.serial, 'ACM0042');
  assert.equal(o.source, 'ipp');
  assert.deepEqual(o.discoveryMethods, ['ipp']);
  assert.deepEqual(o.fields, {
    manufacturer: 'Acme',
    model: 'ColorLaser 9000',
    hostname: undefined,
    firmware: '2.4.1',
    location: 'Room 204',
    web_ui_url: 'https://198.18.9.5/',
    consumables: ['black', 'cyan', 'magenta', 'yellow', 'waste_toner'],
    status_messages: ['stopped: Paper jam in tray 2', 'media-jam-error', 'toner-low-warning', 'jam: Jam in tray 2'],
  });
  const info = o.printerInfo;
  // magenta's -2 (unknown) is no level, never 0 %.
  assert.deepEqual(info.toner_levels, { black: 80, cyan: 55, yellow: 12, waste_toner: 100 });
  assert.equal(info.page_count, 5150);
  assert.equal(info.mono_impressions, 4000);
  assert.equal(info.color_impressions, 1150);
  assert.deepEqual(info.meters, { media_sheets: 3100 });
  assert.equal(info.description, 'Second floor colour');
  assert.equal(info.printer_uuid, '6f1b2c3d-0000-1000-8000-00aabbccddee');
  assert.equal(info.is_color, true);
  assert.equal(info.duplex_supported, true);
  assert.deepEqual(info.open_ports, [631]);
  assert.equal(info.last_seen, '2026-01-02T00:00:00.000Z');
  assert.deepEqual(ippMetrics(s), {
    page_count: 5150, mono_pages: 4000, color_pages: 1150, extra: { full_color_pages: 1150 },
    toner_levels: { black: 80, cyan: 55, yellow: 12, waste_toner: 100 },
  });
});

test('IPP: a printer with no serial is keyed by its printer-uuid; the announcement fills what IPP did not say', () => {
  const s = printerStateOf(
    decodeIppResponse(
      reply([
        attr(0x41, 'printer-make-and-model', 'Zed Mono 10'),
        attr(0x45, 'printer-uuid', 'urn:uuid:0A0B0C0D-1111-2222-3333-444455556666'),
        attr(0x23, 'printer-state', 3),
        set(0x44, 'printer-state-reasons', ['none']),
        col('printer-impressions-completed-col', [['total', 77]]),
      ]),
    ),
  );
  const o = ippObservation({
    ip: '198.18.9.6', port: 443, tls: true, state: s, now: 0,
    announcement: { services: ['_ipps._tcp', '_ipp._tcp'], host: 'zed.local', txt: { note: 'Hall', adminurl: 'http://zed.local/', color: 'F', duplex: 'F', pdl: 'application/pdf,image/pwg-raster' } },
  });
  assert.ok(o);
  assert.equal(o.serial, 'UUID-0a0b0c0d-1111-2222-3333-444455556666');
  assert.equal(o.fields.manufacturer, 'Zed');
  assert.equal(o.fields.model, 'Mono 10');
  assert.equal(o.fields.location, 'Hall');
  assert.equal(o.fields.web_ui_url, 'http://zed.local/');
  assert.deepEqual(o.fields.status_messages, []);
  assert.equal(o.printerInfo.page_count, 77);
  assert.equal(o.printerInfo.hostname, 'zed');
  assert.equal(o.printerInfo.is_color, false);
  assert.equal(o.printerInfo.duplex_supported, false);
  assert.deepEqual(o.printerInfo.advertised_services, ['_ipps._tcp', '_ipp._tcp']);
  assert.deepEqual(o.printerInfo.detection_reasons, ['mdns: _ipps._tcp', 'mdns: _ipp._tcp', 'ipp: ipps port 443 answered Get-Printer-Attributes']);
  assert.deepEqual(o.discoveryMethods, ['mdns', 'ipp']);
  assert.equal(o.printerInfo.consumables, undefined);
  // Neither serial nor uuid: nothing to key a record by.
  assert.equal(ippObservation({ ip: '198.18.9.7', port: 631, tls: false, state: { ...s, uuid: undefined }, now: 0 }), undefined);
  assert.equal(uuidKey('not-a-uuid'), undefined);
  assert.equal(uuidKey('urn:uuid:0A0B0C0D-1111-2222-3333-444455556666'), 'UUID-0a0b0c0d-1111-2222-3333-444455556666');
});

// PWG 5100.22's members beyond monochrome and full-color (no recorded reply carries them:
// test/fixtures/ipp/README.md), and part numbers where the supply texts hold one.
test('IPP counters: highlight colour, two-sided sheets; part numbers from marker names or supply descriptions', () => {
  const s = printerStateOf(decodeIppResponse(reply([
    set(0x42, 'marker-names', ['Black Toner', 'Cyan Toner']),
    set(0x42, 'marker-colors', ['#000000', '#00FFFF']),
    set(0x44, 'marker-types', ['toner', 'toner']),
    set(0x21, 'marker-levels', [40, 60]),
    set(0x30, 'printer-supply', ['type=toner;colorantname=black;', 'type=toner;colorantname=cyan;']),
    set(0x41, 'printer-supply-description', ['Black Toner HP 58A CF258A', 'Cyan Toner']),
    attr(0x45, 'printer-supply-info-uri', 'http://localhost/supplies'),
    col('printer-impressions-completed-col', [['monochrome', 700], ['full-color', 200], ['highlight-color', 30]]),
    col('printer-media-sheets-completed-col', [['monochrome', 500], ['monochrome-two-sided', 120], ['full-color-two-sided', 15]]),
  ])));
  assert.deepEqual(ippMetrics(s).extra, { full_color_pages: 200, two_color_pages: 30, duplex_sheets: 135 });
  assert.deepEqual(ippSupplies(s)?.partNumbers, { black: 'CF258A' });
  const o = ippObservation({ ip: '198.18.9.7', port: 631, tls: false, state: { ...s, deviceId: 'MFG:Acme;MDL:X;SN:ACM7;' }, now: 0 });
  assert.deepEqual(o?.printerInfo.supply_part_numbers, { black: 'CF258A' });
  // The printer names itself localhost in its own links: the address it was read at instead.
  assert.equal(o?.printerInfo.supply_info_uri, 'http://198.18.9.7/supplies');
  // No member reported, no counter: a printer with only a total has no category counters.
  const bare = printerStateOf(decodeIppResponse(reply([attr(0x21, 'printer-impressions-completed', 9)])));
  assert.equal(ippMetrics(bare).extra, undefined);
});

test('IPP supplies: printer-supply when there are no markers; a mono printer\'s toner is black', () => {
  assert.deepEqual(
    ippSupplies({
      markers: [],
      supplies: [
        { type: 'tonerCartridge', description: 'Toner Cartridge', level: 30 },
        { type: 'opc', description: 'Imaging Drum' },
      ],
    }),
    { consumables: ['black', 'drum'], levels: { black: 30 }, partNumbers: {}, types: { black: 'tonerCartridge', drum: 'opc' } },
  );
  assert.equal(ippSupplies({ markers: [], supplies: [] }), undefined);
});

test('IPP: one printer that answers SNMP and IPP is one observation keyed by the SNMP serial', () => {
  const snmp: Observation = {
    serial: 'SNMP-SER-1', ip: '198.18.9.5', now: 1, fields: { manufacturer: 'Acme', model: 'CL9000', status_messages: ['toner low'] },
    printerInfo: { ip: '198.18.9.5', serial: 'SNMP-SER-1', page_count: 5151, status_messages: ['toner low'] },
  };
  const ipp = ippObservation({ ip: '198.18.9.5', port: 631, tls: false, state: printerStateOf(decodeIppResponse(colourLaser)), now: 1, announcement: { services: ['_ipp._tcp'], txt: {} } })!;
  const c = combineObservations(snmp, ipp);
  assert.equal(c.serial, 'SNMP-SER-1');
  assert.equal(c.fields.model, 'CL9000');
  assert.equal(c.fields.location, 'Room 204');
  assert.equal(c.printerInfo.page_count, 5151);
  assert.equal(c.printerInfo.color_impressions, 1150);
  assert.deepEqual(c.discoveryMethods, ['mdns', 'ipp']);
  assert.equal(c.printerInfo.serial, 'SNMP-SER-1');
  assert.equal((c.printerInfo.status_messages as string[])[0], 'toner low');
  // SNMP knew only the MAC: the printer's own serial (from IPP) keys the record.
  assert.equal(combineObservations({ ...snmp, serial: 'MAC-001122334455' }, ipp).serial, 'ACM0042');
});

test('IPP resource: TXT rp, else /ipp/print; nothing that leaves the path', () => {
  assert.equal(resourceOf('ipp/print'), '/ipp/print');
  assert.equal(resourceOf('printers/lab'), '/printers/lab');
  assert.equal(resourceOf(undefined), '/ipp/print');
  assert.equal(resourceOf('../../etc'), '/ipp/print');
  assert.equal(resourceOf('a b'), '/ipp/print');
});

/** A printer on 127.0.0.1 (HTTP or HTTPS) that answers `answer`; records the requests. */
async function printerServer(answer: (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => void, tls?: { key: Buffer; cert: Buffer }) {
  const seen: { url?: string; type?: string; body: Buffer }[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      seen.push({ url: req.url, type: req.headers['content-type'], body });
      answer(req, body, res);
    });
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, seen, close: () => new Promise((r) => server.close(r)) };
}

test('IPP client: a POST of Get-Printer-Attributes over ipp:// and ipps:// (self-signed certificate)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ipp-cert-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const gen = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=printer.local', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { encoding: 'utf8' });
  assert.equal(gen.status, 0, gen.stderr);
  const ok = (_: http.IncomingMessage, __: Buffer, res: http.ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/ipp' });
    res.end(colourLaser);
  };
  for (const tls of [false, true]) {
    const srv = await printerServer(ok, tls ? { key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) } : undefined);
    try {
      const s = await readNetworkPrinter({ address: '127.0.0.1', port: srv.port, resource: '/ipp/print', tls }, { timeoutMs: 3000, allowedRanges: ['127.0.0.0/8'] });
      assert.equal(s.makeAndModel, 'Acme ColorLaser 9000');
      assert.equal(srv.seen.length, 1);
      assert.equal(srv.seen[0].url, '/ipp/print');
      assert.equal(srv.seen[0].type, 'application/ipp');
      const body = srv.seen[0].body;
      assert.equal(body.readUInt16BE(2), 0x000b); // Get-Printer-Attributes
      assert.ok(body.includes(Buffer.from(`${tls ? 'ipps' : 'ipp'}://127.0.0.1:${srv.port}/ipp/print`)));
    } finally {
      await srv.close();
    }
  }
});

test('IPP client: refused outside the allowed ranges (nothing sent); HTTP errors, IPP errors and oversize replies named', async () => {
  let hits = 0;
  const srv = await printerServer((req, _b, res) => {
    hits++;
    if (req.url === '/missing') {
      res.writeHead(404);
      return res.end();
    }
    if (req.url === '/refuse') {
      res.writeHead(200, { 'Content-Type': 'application/ipp' });
      return res.end(reply([], 0x0400));
    }
    res.writeHead(200, { 'Content-Type': 'application/ipp', 'Content-Length': String(2 * 1024 * 1024) });
    res.end();
  });
  try {
    const target = (resource: string) => ({ address: '127.0.0.1', port: srv.port, resource, tls: false });
    await assert.rejects(readNetworkPrinter(target('/ipp/print'), { timeoutMs: 2000, allowedRanges: ['10.0.0.0/8'] }), /outside the allowed ranges/);
    assert.equal(hits, 0);
    await assert.rejects(readNetworkPrinter({ ...target('/ipp/print'), address: 'printer.local' }, { timeoutMs: 2000 }), /not an IPv4 address/);
    await assert.rejects(readNetworkPrinter(target('/missing'), { timeoutMs: 2000 }), /HTTP 404/);
    await assert.rejects(readNetworkPrinter(target('/refuse'), { timeoutMs: 2000 }), /refused: status 0x0400/);
    await assert.rejects(readNetworkPrinter(target('/big'), { timeoutMs: 2000 }), /larger than/);
  } finally {
    await srv.close();
  }
});
