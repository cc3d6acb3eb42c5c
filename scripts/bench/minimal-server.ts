// The comparison server for http.ts: node:https and better-sqlite3 on the same database file,
// certificate and TLS options as the agent, and nothing else: no framework, no auth, no logging.
// `latest`, history and `/api/version` answer with the agent's own stores and views, so what the
// agent costs above them is its HTTP stack. `/devices/list` is written plainly here, as anyone
// would: one query, JSON.parse of the stored PrinterInfo, an object per row with the contract's
// fields (2.1), JSON.stringify; so the agent's own store and views are measured against it too.
// POST /release-memory runs the agent's memory release here too (heap-release.ts).
//   node dist/scripts/bench/minimal-server.js DB CERT KEY PORT
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { openDatabase } from '../../src/store/db.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { COLUMNS } from '../../src/store/device-rows.js';
import { snapshotJson } from '../../src/api/views.js';
import { versionInfo } from '../../src/shared/version.js';
import { lttb } from '../../src/api/lttb.js';
import { TLS_OPTIONS } from '../../src/web/listeners.js';
import { releaseHeapMemory } from '../../src/shared/release-memory.js';

const [dbPath, cert, key, port] = process.argv.slice(2);
const DAY = 86_400_000;
const PERIODS: Record<string, number> = { day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };
const db = openDatabase(dbPath, { readonly: true });
const metrics = new MetricsStore(db);

type DeviceRow = Record<string, string | number | null>;
// The record's columns (store/device-rows.ts COLUMNS): the stored list pieces beside them are the agent's own way.
const savedRows = db.prepare(`SELECT ${COLUMNS.map((c) => `d.${c}`).join(', ')}, max(d.last_seen, coalesce(l.ts, d.last_seen)) AS seen
  FROM devices d LEFT JOIN device_latest l ON l.serial = d.serial WHERE d.is_saved = 1 ORDER BY d.serial`);
const savedEntry = (r: DeviceRow) => {
  const info = {
    learned_oids: {},
    ...JSON.parse((r.printer_info as string | null) ?? '{}'),
    ip: r.ip, serial: r.serial, last_seen: new Date(r.seen as number).toISOString(),
  };
  for (const k of ['manufacturer', 'model', 'hostname', 'firmware', 'mac_address', 'location', 'web_ui_url', 'subnet_mask', 'gateway']) {
    if (r[k] !== null) info[k] = r[k];
  }
  return {
    serial: r.serial, path: `${r.serial}.json`, printer_info: info, info,
    asset_number: r.asset_number ?? '', location: r.location ?? '', web_ui_url: r.web_ui_url ?? '',
    device_type: r.device_type ?? '', source_type: r.source_type ?? '', is_usb: r.is_usb === 1,
    initial_page_count: r.initial_page_count ?? 0, port_name: r.port_name ?? '', driver_name: r.driver_name ?? '',
    is_default: r.is_default === 1, is_shared: r.is_shared === 1, spooler_status: r.spooler_status ?? '',
  };
};

let released = 0; // /release-memory runs so far

const json = (res: import('node:http').ServerResponse, value: unknown) => {
  const body = JSON.stringify(value) + '\n';
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
};

createServer({ cert: readFileSync(cert), key: readFileSync(key), ...TLS_OPTIONS }, (req, res) => {
  const url = new URL(req.url ?? '/', 'https://x');
  if (url.pathname === '/api/devices/metrics/latest') return json(res, snapshotJson(metrics.latestRaw(url.searchParams.get('serial') ?? '')!));
  if (url.pathname === '/devices/list') return json(res, (savedRows.all() as DeviceRow[]).map(savedEntry));
  if (url.pathname === '/api/devices/metrics/history') {
    // The agent's default: 200 points over the period, downsampled by LTTB.
    const now = Date.now();
    const period = PERIODS[url.searchParams.get('period') ?? 'week'];
    const rows = metrics.historySampled(url.searchParams.get('serial') ?? '', now - period, now, now, (points) => lttb(points, 200));
    return json(res, rows.length ? rows.map(snapshotJson) : null);
  }
  if (url.pathname === '/api/version') return json(res, versionInfo());
  if (url.pathname === '/release-memory') {
    // The agent's memory release (heap-release.ts says why a bench runs it in both servers),
    // once this answer is out, as a round's runs when no request is in flight.
    if (req.method === 'GET') return json(res, { released });
    res.on('close', () => setImmediate(() => (releaseHeapMemory(), released++)));
    return res.writeHead(202).end();
  }
  res.writeHead(404).end();
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => process.exit(0)); // a clean exit (and, under --cpu-prof, its profile written)
