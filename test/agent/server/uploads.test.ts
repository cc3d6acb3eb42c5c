// What the uploader sends as a box polls, against the test server peer
// (test/kit/server-peer.ts, a real HTTPS server on loopback) from real SQLite stores: each reading sends
// its device again with the reading's time (the reference server's Last Seen is the devices
// batch's timestamp); each round is its own metrics batch at its own time; the forecast a device
// carries is made once per FORECAST_REFRESH_MS, not at every reading.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openDatabase, type DB } from '../../../src/store/db.js';
import { DeviceStore, type Reading } from '../../../src/store/devices.js';
import { MetricsStore } from '../../../src/store/metrics.js';
import { LinkStore } from '../../../src/store/server-link.js';
import { ServerClient } from '../../../src/net/http-client.js';
import { Uploader } from '../../../src/server/uploader.js';
import type { Device } from '../../../src/model/device.js';
import type { Logger } from '../../../src/log/logger.js';
import { startServerPeer, type ServerPeer } from '../../kit/server-peer.js';

let peer: ServerPeer;
let dir: string;
let db: DB;
before(async () => {
  peer = await startServerPeer();
  dir = mkdtempSync(join(tmpdir(), 'printbox-uploads-'));
  db = openDatabase(join(dir, 'u.db'));
});
after(async () => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
  await peer?.stop();
});

const device = (serial: string, ts: number): Device => ({
  serial, ip: '127.0.0.9', last_seen: ts, created_at: ts, first_seen: ts, device_type: 'network', source_type: 'snmp',
  is_usb: false, is_default: false, is_shared: false, usb_webui_available: false, is_saved: true, visible: true, printer_info: {},
});

test('a reading sends its device again at the reading\'s time, and its round as a batch of its own; the forecast is kept', async () => {
  const devices = new DeviceStore(db);
  const metrics = new MetricsStore(db);
  const link = new LinkStore(db);
  const agentId = link.get().agent_id;
  link.useServer(peer.url);
  link.registered(peer.url, peer.issueToken(agentId), '');
  const client = new ServerClient(peer.url, readFileSync(peer.caFile));
  const uploader = new Uploader({
    store: link, devices, metrics, log: pino({ level: 'silent' }) as unknown as Logger,
    session: () => ({ client, token: link.get().agent_token, agentId }),
    onRejected: () => {}, onProgress: () => {}, batchSize: 100, minIntervalMs: 0,
  });
  const t1 = Date.now() - 120_000;
  const read = (ts: number, black: number, page: number): Reading => ({
    device: { ...device('UP-1', ts) }, snapshot: { serial: 'UP-1', ts, page_count: page, toner_levels: { black } }, existed: false,
  });
  devices.recordReadings([read(t1, 80, 100)]);
  uploader.start();
  try {
    await peer.waitFor(() => peer.batches('metrics').length >= 1 || undefined, 30_000, 'the first reading');
    // The next round's reading: the link notes its device (device_change "metrics").
    const t2 = t1 + 60_000;
    devices.recordReadings([{ ...read(t2, 70, 110), existed: true }]);
    uploader.noteDevice('UP-1');
    await peer.waitFor(() => peer.batches('metrics').length >= 2 || undefined, 30_000, 'the second reading');
    const devBatches = peer.batches('devices');
    assert.equal(devBatches.length, 2, 'the device went again with the second reading');
    assert.deepEqual(devBatches.map((b) => Date.parse(String(b.body.timestamp))), [t1, t2], 'each devices batch at its reading\'s time: the server\'s Last Seen');
    assert.deepEqual(peer.batches('metrics').map((b) => Date.parse(String(b.body.timestamp))), [t1, t2], 'each round its own batch and time');
    const forecasts = devBatches.map((b) => JSON.stringify(b.items[0].forecast));
    assert.ok(forecasts[0] !== undefined && forecasts[0].includes('black'), `the device carries its forecast: ${forecasts[0]}`);
    assert.equal(forecasts[1], forecasts[0], 'the forecast made with the first devices batch is sent again within the hour, not made again');
  } finally {
    await uploader.stop();
  }
});
