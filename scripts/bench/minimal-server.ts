// The comparison server for http.ts: node:https and better-sqlite3 on the same database file,
// certificate and TLS options as the agent, answering the same queries with the same JSON (the
// agent's own stores and views), and nothing else: no framework, no auth, no logging. What the
// agent costs above this is its HTTP stack.
//   node dist/scripts/bench/minimal-server.js DB CERT KEY PORT
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { openDatabase } from '../../src/store/db.js';
import { DeviceStore } from '../../src/store/devices.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { savedEntryJson, snapshotJson } from '../../src/api/views.js';
import { versionInfo } from '../../src/version.js';
import { lttb } from '../../src/api/lttb.js';
import { TLS_OPTIONS } from '../../src/web/listeners.js';

const [dbPath, cert, key, port] = process.argv.slice(2);
const DAY = 86_400_000;
const PERIODS: Record<string, number> = { day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };
const db = openDatabase(dbPath, { readonly: true });
const devices = new DeviceStore(db);
const metrics = new MetricsStore(db);

const json = (res: import('node:http').ServerResponse, value: unknown) => {
  const body = JSON.stringify(value) + '\n';
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
};

createServer({ cert: readFileSync(cert), key: readFileSync(key), ...TLS_OPTIONS }, (req, res) => {
  const url = new URL(req.url ?? '/', 'https://x');
  if (url.pathname === '/api/devices/metrics/latest') return json(res, snapshotJson(metrics.latestRaw(url.searchParams.get('serial') ?? '')!));
  if (url.pathname === '/devices/list') return json(res, devices.listSaved().map(savedEntryJson));
  if (url.pathname === '/api/devices/metrics/history') {
    // The agent's default: 200 points over the period, downsampled by LTTB.
    const now = Date.now();
    const period = PERIODS[url.searchParams.get('period') ?? 'week'];
    const rows = metrics.historySampled(url.searchParams.get('serial') ?? '', now - period, now, now, (points) => lttb(points, 200));
    return json(res, rows.length ? rows.map(snapshotJson) : null);
  }
  if (url.pathname === '/api/version') return json(res, versionInfo());
  res.writeHead(404).end();
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
