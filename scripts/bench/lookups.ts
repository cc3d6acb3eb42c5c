// A lookup by serial through a join: the stores' own statements (DeviceStore.get,
// MetricsStore.latestRaw) against the same SQL with the serial bound bare (`= ?`), which SQLite
// prepares again at every call (store/bound.ts says why). One real SQLite file in a temporary
// directory, DEVICES saved printers with a reading each; every lookup a different serial, as the API
// and a polling round ask. Prints µs a call (median of ROUNDS rounds of CALLS each) and checks that
// both forms return the same rows.
//   npm run build && node dist/scripts/bench/lookups.js [--devices 2000] [--calls 20000] [--rounds 5]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Device } from '../../src/model/device.js';
import { openDatabase } from '../../src/store/db.js';
import { DeviceStore } from '../../src/store/devices.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { COLUMNS, fromRow } from '../../src/store/device-rows.js';

const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : undefined;
};
const DEVICES = option('devices') ?? 2000;
const CALLS = option('calls') ?? 20_000;
const ROUNDS = option('rounds') ?? 5;

const dir = mkdtempSync(join(tmpdir(), 'printbox-lookups-'));
try {
  const db = openDatabase(join(dir, 'printbox.db'));
  const devices = new DeviceStore(db);
  const metrics = new MetricsStore(db);
  const now = Date.now();
  const serials = Array.from({ length: DEVICES }, (_, i) => `BENCH${String(i).padStart(5, '0')}`);
  db.transaction(() => {
    serials.forEach((serial, i) => {
      const device: Device = {
        serial, ip: `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`, manufacturer: 'HP', model: 'LaserJet', last_seen: now,
        created_at: now, first_seen: now, device_type: 'network', source_type: 'snmp', is_usb: false, is_default: false,
        is_shared: false, usb_webui_available: false, is_saved: true, visible: true,
      } as Device;
      devices.put(device);
      metrics.insertRaw({ serial, ts: now - 60_000, page_count: 7000 + i, toner_levels: { black: 40 } });
    });
  })();

  // The statements as they were before store/bound.ts, bare parameter and all.
  const bareDevice = db.prepare(`SELECT ${COLUMNS.map((c) => `d.${c}`).join(', ')}, max(d.last_seen, coalesce(l.ts, d.last_seen)) AS seen
    FROM devices d LEFT JOIN device_latest l ON l.serial = d.serial WHERE d.serial = ?`);
  const bareLatest = db.prepare('SELECT r.* FROM device_latest l JOIN metrics_raw r ON r.id = l.raw_id WHERE l.serial = ?');
  const bareDeviceGet = (s: string) => fromRow(bareDevice.get(s) as Record<string, unknown>);
  for (const s of serials.slice(0, 100)) {
    if (!isDeepStrictEqual(bareDeviceGet(s), devices.get(s))) throw new Error(`device ${s}: the two forms differ`);
    const row = bareLatest.get(s) as { id: number; ts: number };
    const latest = metrics.latestRaw(s);
    if (row.id !== latest?.id || row.ts !== latest.ts) throw new Error(`latest ${s}: the two forms differ`);
  }

  const lookups: Record<string, (serial: string) => unknown> = {
    'DeviceStore.get': (s) => devices.get(s),
    'the same, serial bound bare': bareDeviceGet,
    'MetricsStore.latestRaw': (s) => metrics.latestRaw(s),
    // The row only: latestRaw also parses its JSON columns, so this side is, if anything, favoured.
    'the same, serial bound bare (the row only)': (s) => bareLatest.get(s),
  };
  const times = new Map<string, number[]>(Object.keys(lookups).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, lookup] of Object.entries(lookups)) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) lookup(serials[(i * 7919) % DEVICES]);
      times.get(name)!.push(Number(process.hrtime.bigint() - t0) / CALLS / 1000);
    }
  }
  console.log(`node ${process.version}; ${DEVICES} devices, ${CALLS} lookups a round, ${ROUNDS} rounds, interleaved`);
  console.log('| lookup | µs a call, median [min-max] |\n|---|---|');
  for (const [name, t] of times) {
    const s = [...t].sort((a, b) => a - b);
    console.log(`| ${name} | ${s[Math.floor(s.length / 2)].toFixed(1)} [${s[0].toFixed(1)}-${s[s.length - 1].toFixed(1)}] |`);
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
