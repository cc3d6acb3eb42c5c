// The seven read operations of contract 4.1 (and 2.x, 7, 8; docs/decisions/ 0002 time, 0003 JSON,
// 0004 errors, 0005 metric tiers and bounds), black-box against one real agent seeded through
// `import`. Auth: local mode with allow_local_admin, so loopback requests are admin (auth has its
// own file).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAgent, expectJson, expectTextError, describe as show, type Agent } from '../../kit/agent.js';
import {
  DAY, HOUR, MINUTE, SECOND, asDevice, asSnapshot, dayStart, device, hourStart, metrics, monthStart, ndjson,
  lcg, nowSeconds, rfc3339, withoutId, type DeviceLine, type MetricsLine,
} from '../../kit/seed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = encodeURIComponent;

let agent: Agent;
let NOW = 0;
// seeded lines, filled in before()
const D: Record<string, DeviceLine> = {};
const M: Record<string, MetricsLine> = {};
const many: MetricsLine[] = [];
const rand: MetricsLine[] = [];
const HUGE_ROWS = 10_050;
let boundsPoints = 0;

function build(): string {
  const lines: object[] = [];
  const dev = (key: string, serial: string, ip: string, f: Record<string, unknown> = {}) => {
    D[key] = device(serial, ip, NOW, f);
    lines.push(D[key]);
  };
  const met = (key: string, line: MetricsLine) => {
    M[key] = line;
    lines.push(line);
  };
  dev('saved', 'SAVED-1', '10.0.0.1', {
    is_saved: true, manufacturer: 'Acme', model: 'LaserJet 9', hostname: 'prn1', firmware: '1.2.3',
    mac_address: '00:11:22:33:44:55', subnet_mask: '255.255.255.0', gateway: '10.0.0.254',
    consumables: ['Black Toner'], status_messages: ['Ready'], discovery_method: 'snmp', asset_number: 'A-100',
    location: 'Floor 2', description: 'Front desk', web_ui_url: 'http://10.0.0.1/',
    raw_data: { sysDescr: 'Acme LJ9', nested: { a: [1, 2], b: null, c: 'x' } }, port_name: 'IP_10.0.0.1',
    driver_name: 'Acme PCL6', initial_page_count: 42, is_default: true, is_shared: true, spooler_status: 'idle',
    dns_servers: ['10.0.0.53'], dhcp_server: '10.0.0.1', walk_filename: 'walk-1.txt', last_scan_id: 7,
    locked_fields: [{ field: 'location', reason: 'set by hand', locked_at: rfc3339(NOW - DAY), locked_by: 'admin' }],
    last_seen: NOW - 2 * MINUTE, first_seen: NOW - 30 * DAY, created_at: NOW - 30 * DAY,
  });
  dev('savedHidden', 'SAVED-HIDDEN', '10.0.0.2', { is_saved: true, visible: false });
  dev('recent', 'DISC-RECENT', '10.0.0.3', { last_seen: NOW - 5 * MINUTE, first_seen: NOW - 400 * DAY, created_at: NOW - 400 * DAY });
  dev('old', 'DISC-OLD', '10.0.0.4', { last_seen: NOW - 3 * HOUR, first_seen: NOW - 10 * MINUTE, created_at: NOW - 10 * MINUTE });
  dev('hidden', 'DISC-HIDDEN', '10.0.0.5', { visible: false });
  dev('trail', 'TRAIL ', '10.0.0.6', { last_seen: NOW - 20 * MINUTE });
  dev('agg', 'AGG-ONLY', '10.0.0.7', { visible: false });
  dev('nometrics', 'NOMETRICS', '10.0.0.8', { visible: false });
  dev('empties', 'EMPTYS', '10.0.0.9', {
    visible: false, hostname: '', consumables: [], raw_data: {}, initial_page_count: 0, is_usb: false, locked_fields: [],
  });
  for (const [i, s] of ['HIST', 'MANY', 'HUGE', 'BOUNDS', 'RAND'].entries()) dev(s, s, `10.0.1.${i + 1}`, { visible: false });

  // discovered fill: latest raw of DISC-RECENT is r2; an hourly row must not be used
  met('recent1', metrics('DISC-RECENT', 'raw', NOW - 2 * HOUR, { page_count: 100, toner_levels: { black: 50 } }));
  met('recent2', metrics('DISC-RECENT', 'raw', NOW - 1 * HOUR, { page_count: 120, toner_levels: { black: 45, cyan: 80 } }));
  met('oldHourly', metrics('DISC-OLD', 'hourly', hourStart(NOW - 10 * DAY), { page_count: 999, toner_levels: { black: 1 } }));
  // latest of SAVED-1 is s2 (newest by timestamp, not file order); color_pages 0 must be omitted
  met('s1', metrics('SAVED-1', 'raw', NOW - 3 * HOUR, { page_count: 5000, toner_levels: { black: 10 } }));
  met('s2', metrics('SAVED-1', 'raw', NOW - 30 * MINUTE, {
    page_count: 5100, color_pages: 0, mono_pages: 5100, scan_count: 7, toner_levels: { black: 9, cyan: 80 },
  }));
  met('s3', metrics('SAVED-1', 'raw', NOW - 2 * HOUR, { page_count: 5050 }));
  // aggregated only (a closed pyramid, so roll-ups add no rows)
  met('aggH', metrics('AGG-ONLY', 'hourly', hourStart(NOW - 15 * DAY), { page_count: 70 }));
  met('aggD', metrics('AGG-ONLY', 'daily', dayStart(NOW - 15 * DAY), { page_count: 70 }));
  met('aggM', metrics('AGG-ONLY', 'monthly', monthStart(NOW - 15 * DAY), { page_count: 70 }));
  // history tiers: A,B,C raw; D,E hourly; F,G daily; H,I monthly; X1..X3 lie outside their tier's window
  met('A', metrics('HIST', 'raw', NOW - 3 * DAY, { page_count: 800 }));
  met('B', metrics('HIST', 'raw', NOW - 30 * HOUR, { page_count: 900, toner_levels: { black: 'low', cyan: 45.5 } }));
  met('C', metrics('HIST', 'raw', NOW - HOUR + 500, { page_count: 1000, toner_levels: { black: 50 } }));
  met('D', metrics('HIST', 'hourly', hourStart(NOW - 20 * DAY), { page_count: 400 }));
  met('E', metrics('HIST', 'hourly', hourStart(NOW - 10 * DAY), { page_count: 500, toner_levels: { black: 60 } }));
  met('X1', metrics('HIST', 'hourly', hourStart(NOW - 2 * DAY), { page_count: 4242 }));
  met('F', metrics('HIST', 'daily', dayStart(NOW - 100 * DAY), { page_count: 200 }));
  met('G', metrics('HIST', 'daily', dayStart(NOW - 60 * DAY), { page_count: 300 }));
  met('X2', metrics('HIST', 'daily', dayStart(NOW - 10 * DAY), { page_count: 4343 }));
  met('H', metrics('HIST', 'monthly', monthStart(NOW - 500 * DAY), { page_count: 50 }));
  met('I', metrics('HIST', 'monthly', monthStart(NOW - 400 * DAY), { page_count: 100 }));
  met('X3', metrics('HIST', 'monthly', monthStart(NOW - 100 * DAY), { page_count: 4444 }));
  // downsampling: 60 raw rows, a spike at 30 and a dip at 45 (written in reverse file order)
  for (let i = 0; i < 60; i++) {
    const pc = i === 30 ? 5000 : i === 45 ? 1 : 1000 + i * 10;
    many.push(metrics('MANY', 'raw', NOW - 2 * DAY + i * 30 * MINUTE, { page_count: pc }));
  }
  lines.push(...[...many].reverse());
  const rnd = lcg(42);
  for (let i = 0; i < 500; i++) rand.push(metrics('RAND', 'raw', NOW - 3 * DAY + i * 5 * MINUTE, { page_count: 1 + Math.floor(rnd() * 100000) }));
  lines.push(...rand);
  for (let i = 0; i < HUGE_ROWS; i++) lines.push(metrics('HUGE', 'raw', NOW - 5 * DAY + i * 40 * SECOND, { page_count: i + 1 }));
  // bounds: every roll-up target of every row already exists (hourly, daily, monthly buckets of the
  // raw rows; daily and monthly of the hourly row; ...), so roll-ups at any time add no rows.
  met('b1', metrics('BOUNDS', 'raw', NOW - 2 * SECOND, { page_count: 10 }));
  met('b2', metrics('BOUNDS', 'raw', NOW - SECOND + 250, { page_count: 11 }));
  met('bH', metrics('BOUNDS', 'hourly', hourStart(NOW - 12 * DAY), { page_count: 5 }));
  met('bM2', metrics('BOUNDS', 'monthly', monthStart(NOW - 700 * DAY), { page_count: 2 }));
  met('bM3', metrics('BOUNDS', 'monthly', monthStart(NOW - 800 * DAY), { page_count: 1 }));
  const have = new Set(['hourly ' + hourStart(NOW - 12 * DAY), 'monthly ' + monthStart(NOW - 700 * DAY), 'monthly ' + monthStart(NOW - 800 * DAY)]);
  const aggregate = (tier: 'hourly' | 'daily' | 'monthly', ts: number, pc: number) => {
    if (have.has(`${tier} ${ts}`)) return;
    have.add(`${tier} ${ts}`);
    lines.push(metrics('BOUNDS', tier, ts, { page_count: pc }));
    boundsPoints++;
  };
  boundsPoints = 5;
  for (const [ts, pc] of [[NOW - 2 * SECOND, 11], [NOW - 12 * DAY, 5]] as const) {
    if (ts > NOW - 7 * DAY) aggregate('hourly', hourStart(ts), pc);
    aggregate('daily', dayStart(ts), pc);
    aggregate('monthly', monthStart(ts), pc);
  }
  return ndjson(lines);
}

before(async () => {
  NOW = nowSeconds();
  if (NOW - hourStart(NOW) < 5 * SECOND) {
    await sleep(6 * SECOND);
    NOW = nowSeconds();
  }
  agent = await startAgent({ seed: build(), readyTimeoutMs: 30_000 });
});
after(async () => {
  await agent?.stop();
});

const get = (path: string) => agent.get(path);
const hist = async (qs: string): Promise<unknown> => expectJson(await get(`/api/devices/metrics/history?${qs}`));
const rows = (v: unknown) => {
  assert.ok(Array.isArray(v), `expected an array, got ${JSON.stringify(v)?.slice(0, 200)}`);
  return v as Record<string, unknown>[];
};
/** Compares served history rows (id dropped) with seeded lines, in order. */
function sameRows(served: unknown, expected: MetricsLine[], msg = '') {
  const r = rows(served);
  for (const row of r) assert.equal(typeof row.id, 'number', `id must be a number: ${JSON.stringify(row)}`);
  assert.deepEqual(r.map(withoutId), expected.map((l) => asSnapshot(l, true)), msg);
}
/** Reference LTTB (Steinarsson 2013): indices kept, first and last always. */
function lttbIndices(y: number[], threshold: number): number[] {
  const n = y.length;
  if (threshold >= n || threshold < 3) return y.map((_, i) => i);
  const out = [0];
  const every = (n - 2) / (threshold - 2);
  let a = 0;
  for (let i = 0; i < threshold - 2; i++) {
    const avgStart = Math.floor((i + 1) * every) + 1;
    const avgEnd = Math.min(Math.floor((i + 2) * every) + 1, n);
    let avgX = 0;
    let avgY = 0;
    for (let j = avgStart; j < avgEnd; j++) {
      avgX += j;
      avgY += y[j]!;
    }
    avgX /= avgEnd - avgStart;
    avgY /= avgEnd - avgStart;
    const start = Math.floor(i * every) + 1;
    const end = Math.floor((i + 1) * every) + 1;
    let best = start;
    let maxArea = -1;
    for (let j = start; j < end; j++) {
      const area = Math.abs((a - avgX) * (y[j]! - y[a]!) - (a - j) * (avgY - y[a]!)) / 2;
      if (area > maxArea) {
        maxArea = area;
        best = j;
      }
    }
    out.push(best);
    a = best;
  }
  out.push(n - 1);
  return out;
}
const pageCounts = (v: unknown) => rows(v).map((r) => r.page_count);
const T = (k: string) => M[k]!.timestamp;
const ALL = `since=${enc('1970-01-01T00:00:00Z')}&until=${enc(rfc3339(NOW + DAY))}`;

// ---------------------------------------------------------------- GET /devices/list
describe('GET /devices/list', () => {
  test('lists saved devices only, hidden ones included, as SavedDeviceEntry with every field', async () => {
    const list = rows(expectJson(await get('/devices/list')));
    assert.deepEqual(list.map((e) => e.serial).sort(), ['SAVED-1', 'SAVED-HIDDEN']);
    const s = list.find((e) => e.serial === 'SAVED-1')!;
    assert.deepEqual(Object.keys(s).sort(), [
      'asset_number', 'device_type', 'driver_name', 'info', 'initial_page_count', 'is_default', 'is_shared', 'is_usb',
      'location', 'path', 'port_name', 'printer_info', 'serial', 'source_type', 'spooler_status', 'web_ui_url',
    ]);
    const { printer_info, info, ...rest } = s;
    assert.deepEqual(rest, {
      serial: 'SAVED-1', path: 'SAVED-1.json', asset_number: 'A-100', location: 'Floor 2', web_ui_url: 'http://10.0.0.1/',
      device_type: 'network', source_type: 'import', is_usb: false, initial_page_count: 42, port_name: 'IP_10.0.0.1',
      driver_name: 'Acme PCL6', is_default: true, is_shared: true, spooler_status: 'idle',
    });
    assert.deepEqual(printer_info, info, 'printer_info and info hold the same value');
    const pi = printer_info as Record<string, unknown>;
    assert.equal(pi.ip, '10.0.0.1');
    assert.equal(pi.last_seen, D.saved!.last_seen);
    assert.deepEqual(pi.learned_oids, {});
  });

  test('required fields are present even when empty or zero', async () => {
    const list = rows(expectJson(await get('/devices/list')));
    const h = list.find((e) => e.serial === 'SAVED-HIDDEN')!;
    const { printer_info, info, ...rest } = h;
    assert.deepEqual(rest, {
      serial: 'SAVED-HIDDEN', path: 'SAVED-HIDDEN.json', asset_number: '', location: '', web_ui_url: '',
      device_type: 'network', source_type: 'import', is_usb: false, initial_page_count: 0, port_name: '',
      driver_name: '', is_default: false, is_shared: false, spooler_status: '',
    });
    assert.deepEqual(printer_info, info);
    assert.deepEqual((printer_info as Record<string, unknown>).learned_oids, {});
  });

  test('query parameters are not read', async () => {
    const a = expectJson(await get('/devices/list'));
    const b = expectJson(await get('/devices/list?serial=SAVED-1&minutes=1&include_known=true&limit=1'));
    assert.deepEqual(b, a);
  });
});

// ---------------------------------------------------------------- GET /devices/discovered
describe('GET /devices/discovered', () => {
  const ips = async (qs: string) =>
    rows(expectJson(await get(`/devices/discovered${qs}`)))
      .map((p) => p.ip as string)
      .sort();
  const DEFAULT = ['10.0.0.3', '10.0.0.4', '10.0.0.6'];

  test('default: visible, not saved', async () => {
    assert.deepEqual(await ips(''), DEFAULT);
  });
  test('include_known=true adds saved visible devices, never hidden ones', async () => {
    assert.deepEqual(await ips('?include_known=true'), ['10.0.0.1', ...DEFAULT]);
  });
  for (const v of ['TRUE', 'True', '1', 'yes', '', 'true%20']) {
    test(`include_known=${v} is not the exact string true`, async () => {
      assert.deepEqual(await ips(`?include_known=${v}`), DEFAULT);
    });
  }
  test('minutes filters on last_seen (not first_seen)', async () => {
    assert.deepEqual(await ips('?minutes=30'), ['10.0.0.3', '10.0.0.6']);
    assert.deepEqual(await ips('?minutes=300'), DEFAULT);
    assert.deepEqual(await ips('?minutes=30&include_known=true'), ['10.0.0.1', '10.0.0.3', '10.0.0.6']);
  });
  for (const v of ['0', '-5', 'abc', '', '1.5x', '%20']) {
    test(`minutes=${v} applies no time filter`, async () => {
      assert.deepEqual(await ips(`?minutes=${v}`), DEFAULT);
    });
  }
  test('PrinterInfo: page_count and toner_levels from the latest raw snapshot only', async () => {
    const list = rows(expectJson(await get('/devices/discovered')));
    const recent = list.find((p) => p.ip === '10.0.0.3')!;
    assert.equal(recent.page_count, 120);
    assert.deepEqual(recent.toner_levels, { black: 45, cyan: 80 });
    assert.equal(recent.last_seen, D.recent!.last_seen);
    assert.deepEqual(recent.learned_oids, {});
    if ('serial' in recent) assert.equal(recent.serial, 'DISC-RECENT');
    const old = list.find((p) => p.ip === '10.0.0.4')!;
    assert.ok(!('page_count' in old), `no raw metrics: page_count omitted, got ${JSON.stringify(old)}`);
    assert.ok(!('toner_levels' in old), `no raw metrics: toner_levels omitted, got ${JSON.stringify(old)}`);
    const trail = list.find((p) => p.ip === '10.0.0.6')!;
    if ('serial' in trail) assert.equal(trail.serial, 'TRAIL ', 'serial kept untrimmed');
  });
});

// ---------------------------------------------------------------- GET /api/devices/profile
describe('GET /api/devices/profile', () => {
  const P = '/api/devices/profile';
  test('device and latest raw metrics', async () => {
    const p = expectJson(await get(`${P}?serial=SAVED-1`)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(p).sort(), ['device', 'latest_metrics']);
    assert.deepEqual(p.device, asDevice(D.saved!));
    const lm = p.latest_metrics as Record<string, unknown>;
    assert.equal(typeof lm.id, 'number');
    assert.deepEqual(withoutId(lm), {
      serial: 'SAVED-1', timestamp: T('s2'), page_count: 5100, mono_pages: 5100, scan_count: 7, toner_levels: { black: 9, cyan: 80 },
    });
  });
  test('latest_metrics is null when only aggregated rows exist; no visible filter', async () => {
    const r = await get(`${P}?serial=AGG-ONLY`);
    const p = expectJson(r) as Record<string, unknown>;
    assert.ok(r.body.includes('"latest_metrics":null'), show(r));
    assert.equal(p.latest_metrics, null);
    assert.deepEqual(p.device, asDevice(D.agg!));
  });
  test('optional fields that are empty or zero are omitted; required ones stay', async () => {
    const p = expectJson(await get(`${P}?serial=EMPTYS`)) as Record<string, unknown>;
    assert.deepEqual(p.device, {
      serial: 'EMPTYS', ip: '10.0.0.9', last_seen: D.empties!.last_seen, created_at: D.empties!.created_at,
      first_seen: D.empties!.first_seen, is_saved: false, visible: false, device_type: 'network', source_type: 'import',
    });
    assert.equal(p.latest_metrics, null);
  });
  test('serial is matched exactly, without trimming', async () => {
    const p = expectJson(await get(`${P}?serial=TRAIL%20`)) as Record<string, unknown>;
    assert.equal((p.device as Record<string, unknown>).serial, 'TRAIL ');
    expectTextError(await get(`${P}?serial=TRAIL`), 404, 'not found');
    expectTextError(await get(`${P}?serial=SAVED-1%20`), 404, 'not found');
    expectTextError(await get(`${P}?serial=%20SAVED-1`), 404, 'not found');
    expectTextError(await get(`${P}?serial=saved-1`), 404, 'not found');
    expectTextError(await get(`${P}?serial=%20`), 404, 'not found');
  });
  test('404 for an unknown device', async () => {
    expectTextError(await get(`${P}?serial=NOPE`), 404, 'not found');
  });
  test('400 for a missing or empty serial', async () => {
    expectTextError(await get(P), 400, 'serial parameter required');
    expectTextError(await get(`${P}?serial=`), 400, 'serial parameter required');
    expectTextError(await get(`${P}?other=1`), 400, 'serial parameter required');
  });
});

// ---------------------------------------------------------------- GET /api/devices/metrics/latest
describe('GET /api/devices/metrics/latest', () => {
  const L = '/api/devices/metrics/latest';
  test('newest raw row by timestamp; tier omitted; zero counters omitted', async () => {
    const s = expectJson(await get(`${L}?serial=SAVED-1`)) as Record<string, unknown>;
    assert.equal(typeof s.id, 'number');
    assert.ok(Number.isInteger(s.id));
    assert.ok(!('tier' in s), 'tier is omitted by latest');
    assert.deepEqual(withoutId(s), {
      serial: 'SAVED-1', timestamp: T('s2'), page_count: 5100, mono_pages: 5100, scan_count: 7, toner_levels: { black: 9, cyan: 80 },
    });
  });
  test('fractional seconds are printed trimmed (RFC3339Nano)', async () => {
    const s = expectJson(await get(`${L}?serial=HIST`)) as Record<string, unknown>;
    assert.equal(s.timestamp, T('C'));
    assert.match(String(s.timestamp), /\.5Z$/);
    assert.deepEqual(s.toner_levels, { black: 50 });
  });
  test('no fallback to aggregated tiers; no existence check beyond metrics', async () => {
    expectTextError(await get(`${L}?serial=AGG-ONLY`), 404, 'no metrics found');
    expectTextError(await get(`${L}?serial=NOMETRICS`), 404, 'no metrics found');
    expectTextError(await get(`${L}?serial=NOPE`), 404, 'no metrics found');
    expectTextError(await get(`${L}?serial=HIST%20`), 404, 'no metrics found');
  });
  test('hidden devices are served (no saved or visible check)', async () => {
    const s = expectJson(await get(`${L}?serial=MANY`)) as Record<string, unknown>;
    assert.equal(s.timestamp, many[59]!.timestamp);
  });
  test('400 for a missing or empty serial', async () => {
    expectTextError(await get(L), 400, 'serial parameter required');
    expectTextError(await get(`${L}?serial=`), 400, 'serial parameter required');
  });
});

// ---------------------------------------------------------------- GET /api/devices/metrics/history
describe('GET /api/devices/metrics/history: tiers', () => {
  test('custom range over all tiers: raw, hourly, daily, monthly, each ascending, tier set, no overlap', async () => {
    sameRows(await hist(`serial=HIST&${ALL}&raw=true`), ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I'].map((k) => M[k]!));
  });
  test('aggregated rows keep their bucket start and values; arbitrary toner JSON passes through', async () => {
    const r = rows(await hist(`serial=HIST&${ALL}`));
    assert.deepEqual(r.map((x) => x.tier), ['raw', 'raw', 'raw', 'hourly', 'hourly', 'daily', 'daily', 'monthly', 'monthly']);
    assert.deepEqual(r[1]!.toner_levels, { black: 'low', cyan: 45.5 });
  });
  test('period selects the window ending now', async () => {
    sameRows(await hist('serial=HIST&period=day'), [M.C!]);
    sameRows(await hist('serial=HIST&period=week'), [M.A!, M.B!, M.C!]);
    sameRows(await hist('serial=HIST&period=month'), ['A', 'B', 'C', 'D', 'E'].map((k) => M[k]!));
    sameRows(await hist('serial=HIST&period=year'), ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map((k) => M[k]!));
  });
  for (const q of ['', '&period=', '&period=bogus', '&period=Day', '&period=YEAR']) {
    test(`period default week for "${q}"`, async () => {
      sameRows(await hist(`serial=HIST${q}`), [M.A!, M.B!, M.C!]);
    });
  }
  test('custom ranges pick the tiers they intersect, restricted to the intersection', async () => {
    sameRows(await hist(`serial=HIST&since=${rfc3339(NOW - 25 * DAY)}&until=${rfc3339(NOW - 8 * DAY)}`), [M.D!, M.E!]);
    sameRows(
      await hist(`serial=HIST&since=${rfc3339(NOW - 70 * DAY)}&until=${rfc3339(NOW - 2 * DAY)}`),
      [M.A!, M.D!, M.E!, M.G!],
      'combined array is not globally sorted',
    );
    sameRows(await hist(`serial=HIST&since=${rfc3339(NOW - 2000 * DAY)}&until=${rfc3339(NOW - 366 * DAY)}`), [M.H!, M.I!]);
  });
  test('custom range overrides period', async () => {
    sameRows(await hist(`serial=HIST&period=day&since=${rfc3339(NOW - 25 * DAY)}&until=${rfc3339(NOW - 8 * DAY)}`), [M.D!, M.E!]);
  });
  test('bounds are inclusive, to the millisecond', async () => {
    sameRows(await hist(`serial=HIST&since=${T('B')}&until=${T('C')}`), [M.B!, M.C!]);
    sameRows(await hist(`serial=HIST&since=${rfc3339(NOW - 30 * HOUR + 1)}&until=${T('C')}`), [M.C!]);
    sameRows(await hist(`serial=HIST&since=${T('B')}&until=${rfc3339(NOW - HOUR + 499)}`), [M.B!]);
  });
  test('offsets and fractional seconds are accepted', async () => {
    const plus2 = new Date(NOW - 30 * HOUR + 2 * HOUR).toISOString().replace(/\.000Z$/, '+02:00');
    sameRows(await hist(`serial=HIST&since=${enc(plus2)}&until=${enc(rfc3339(NOW + DAY))}`), [M.B!, M.C!]);
    const minus0530 = new Date(NOW - 30 * HOUR - 5.5 * HOUR).toISOString().replace(/\.000Z$/, '-05:30');
    sameRows(await hist(`serial=HIST&since=${enc(minus0530)}&until=${enc(rfc3339(NOW + DAY))}`), [M.B!, M.C!]);
    sameRows(await hist(`serial=HIST&since=1970-01-01T00:00:00.123456789Z&until=${enc(rfc3339(NOW + DAY))}`).then((v) => rows(v).slice(0, 3)), [M.A!, M.B!, M.C!]);
  });
  test('only one bound non-empty: both ignored (even malformed), period used', async () => {
    sameRows(await hist('serial=HIST&since=1970-01-01T00:00:00Z'), [M.A!, M.B!, M.C!]);
    sameRows(await hist('serial=HIST&since=garbage'), [M.A!, M.B!, M.C!]);
    sameRows(await hist('serial=HIST&since=garbage&until='), [M.A!, M.B!, M.C!]);
    sameRows(await hist('serial=HIST&until=garbage&period=day'), [M.C!]);
  });
  test('a reversed range is not rejected', async () => {
    const r = await get(`/api/devices/metrics/history?serial=HIST&since=${rfc3339(NOW)}&until=${rfc3339(NOW - 365 * DAY)}`);
    assert.equal(expectJson(r), null);
    assert.equal(r.body, 'null\n');
  });
  test('no rows: 200 with null, no existence check', async () => {
    for (const s of ['NOMETRICS', 'NOPE', '%20', 'HIST%20']) {
      const r = await get(`/api/devices/metrics/history?serial=${s}`);
      assert.equal(expectJson(r), null);
      assert.equal(r.body, 'null\n', show(r));
    }
  });
  test('400 for a missing or empty serial', async () => {
    expectTextError(await get('/api/devices/metrics/history'), 400, 'serial parameter required');
    expectTextError(await get('/api/devices/metrics/history?serial=&period=day'), 400, 'serial parameter required');
  });
});

describe('GET /api/devices/metrics/history: strict RFC 3339', () => {
  const good = enc('2026-03-01T10:00:00Z');
  const bad = [
    '2026-03-01t10:00:00Z', '2026-03-01T10:00:00z', '2026-03-01T10:00:00', '2026-03-01T10:00:00+0200',
    '2026-03-01 10:00:00Z', '2026-03-01 10:00:00', '2026-03-01', 'yesterday', '1772359200', '2026-02-30T10:00:00Z',
    '2026-13-01T10:00:00Z', '2026-03-01T25:00:00Z', '2026-03-01T10:00Z', '2026-03-01T10:00:00.Z', '+2026-03-01T10:00:00Z',
  ];
  for (const b of bad) {
    test(`since=${JSON.stringify(b)} is rejected`, async () => {
      expectTextError(await get(`/api/devices/metrics/history?serial=HIST&since=${enc(b)}&until=${good}`), 400,
        'invalid since parameter (use RFC3339 format)');
    });
    test(`until=${JSON.stringify(b)} is rejected`, async () => {
      expectTextError(await get(`/api/devices/metrics/history?serial=HIST&since=${good}&until=${enc(b)}`), 400,
        'invalid until parameter (use RFC3339 format)');
    });
  }
  test('a blank but non-empty bound is parsed, and rejected', async () => {
    expectTextError(await get(`/api/devices/metrics/history?serial=HIST&since=%20&until=${good}`), 400, 'invalid since parameter (use RFC3339 format)');
    expectTextError(await get(`/api/devices/metrics/history?serial=HIST&since=${good}&until=%20`), 400, 'invalid until parameter (use RFC3339 format)');
  });
  test('both invalid: since is reported', async () => {
    expectTextError(await get('/api/devices/metrics/history?serial=HIST&since=x&until=y'), 400, 'invalid since parameter (use RFC3339 format)');
  });
  test('missing serial is checked before the bounds', async () => {
    expectTextError(await get('/api/devices/metrics/history?since=x&until=y'), 400, 'serial parameter required');
  });
});

describe('GET /api/devices/metrics/history: maxPoints and LTTB', () => {
  const n = async (qs: string) => rows(await hist(`serial=MANY${qs}`)).length;
  test('all 60 rows ascending with raw=true', async () => {
    sameRows(await hist('serial=MANY&raw=true'), many);
  });
  test('default 200: no reduction below it', async () => {
    assert.equal(await n(''), 60);
  });
  for (const v of ['abc', '0', '-5', '10abc', '1.5e1', '', '%20']) {
    test(`maxPoints=${v} means 200`, async () => {
      assert.equal(await n(`&maxPoints=${v}`), 60);
    });
  }
  for (const v of ['1', '2']) {
    test(`maxPoints=${v} (below 3) reduces nothing`, async () => {
      sameRows(await hist(`serial=MANY&maxPoints=${v}`), many);
    });
  }
  test('the name is case-sensitive', async () => {
    assert.equal(await n('&maxpoints=10'), 60);
    assert.equal(await n('&MaxPoints=10'), 60);
    assert.equal(await n('&maxPoints=10'), 10);
  });
  test('raw: only the exact string true disables downsampling', async () => {
    assert.equal(await n('&raw=true&maxPoints=10'), 60);
    for (const v of ['TRUE', '1', 'yes', 'false', '']) assert.equal(await n(`&raw=${v}&maxPoints=10`), 10, `raw=${v}`);
  });
  test('exactly maxPoints rows, first and last kept, rows unaltered and in order', async () => {
    for (const k of [3, 4, 10, 25, 59]) {
      const r = rows(await hist(`serial=MANY&maxPoints=${k}`));
      assert.equal(r.length, k, `maxPoints=${k}`);
      const full = many.map((l) => asSnapshot(l, true));
      const idx = r.map((row) => full.findIndex((f) => JSON.stringify(f) === JSON.stringify(withoutId(row))));
      assert.ok(idx.every((i) => i >= 0), `rows must be unaltered seeded rows (maxPoints=${k})`);
      assert.equal(idx[0], 0, 'first row kept');
      assert.equal(idx[idx.length - 1], 59, 'last row kept');
      for (let i = 1; i < idx.length; i++) assert.ok(idx[i]! > idx[i - 1]!, `order kept (maxPoints=${k}): ${idx}`);
      if (k >= 10) {
        assert.ok(idx.includes(30), `LTTB keeps the spike (maxPoints=${k}): ${idx}`);
        assert.ok(idx.includes(45), `LTTB keeps the dip (maxPoints=${k}): ${idx}`);
      }
    }
  });
  test('maxPoints=3 keeps first, the largest triangle (the spike), last', async () => {
    assert.deepEqual(pageCounts(await hist('serial=MANY&maxPoints=3')), [1000, 5000, 1590]);
  });
  test('maxPoints at or above the row count reduces nothing', async () => {
    sameRows(await hist('serial=MANY&maxPoints=60'), many);
    sameRows(await hist('serial=MANY&maxPoints=61'), many);
  });
  test('the selection is Largest-Triangle-Three-Buckets (x = position, y = page_count)', async () => {
    const ys = rand.map((l) => l.page_count as number);
    for (const k of [3, 7, 50, 499]) {
      const want = lttbIndices(ys, k).map((i) => ys[i]);
      assert.deepEqual(pageCounts(await hist(`serial=RAND&maxPoints=${k}`)), want, `maxPoints=${k}`);
    }
  });
  test('downsampling runs over the combined tiers', async () => {
    const r = rows(await hist(`serial=HIST&${ALL}&maxPoints=4`));
    assert.equal(r.length, 4);
    assert.equal(r[0]!.timestamp, T('A'));
    assert.equal(r[3]!.timestamp, T('I'));
    assert.equal(r[3]!.tier, 'monthly');
  });
  test('values above 10000 are clamped to 10000', async () => {
    const big = rows(await hist('serial=HUGE&maxPoints=20000'));
    assert.equal(big.length, 10_000);
    assert.equal(big[0]!.page_count, 1);
    assert.equal(big[big.length - 1]!.page_count, HUGE_ROWS);
    assert.equal(rows(await hist('serial=HUGE&maxPoints=10000')).length, 10_000);
    assert.equal(rows(await hist('serial=HUGE&maxPoints=10001')).length, 10_000);
    assert.equal(rows(await hist('serial=HUGE&raw=true&maxPoints=20000')).length, HUGE_ROWS);
    assert.equal(rows(await hist('serial=HUGE')).length, 200);
  });
});

// ---------------------------------------------------------------- GET /api/devices/metrics/bounds
describe('GET /api/devices/metrics/bounds', () => {
  const B = '/api/devices/metrics/bounds';
  test('min and max across all tiers; points is the sum of rows', async () => {
    const b = expectJson(await get(`${B}?serial=BOUNDS`));
    assert.deepEqual(b, {
      serial: 'BOUNDS', min_timestamp: T('bM3'), max_timestamp: T('b2'), points: boundsPoints,
    });
    assert.match(T('b2'), /\.25Z$/);
    assert.ok(boundsPoints >= 8, `seeded ${boundsPoints} rows`);
  });
  test('aggregated rows only', async () => {
    assert.deepEqual(expectJson(await get(`${B}?serial=AGG-ONLY`)), {
      serial: 'AGG-ONLY', min_timestamp: T('aggM'), max_timestamp: T('aggH'), points: 3,
    });
  });
  test('404 when there are no metrics; serial exact', async () => {
    expectTextError(await get(`${B}?serial=NOMETRICS`), 404, 'no metrics found');
    expectTextError(await get(`${B}?serial=NOPE`), 404, 'no metrics found');
    expectTextError(await get(`${B}?serial=BOUNDS%20`), 404, 'no metrics found');
  });
  test('400 for a missing or empty serial', async () => {
    expectTextError(await get(B), 400, 'serial parameter required');
    expectTextError(await get(`${B}?serial=`), 400, 'serial parameter required');
  });
});

// ---------------------------------------------------------------- method guards and check order
describe('GET only', () => {
  const guarded = [
    '/api/devices/profile?serial=SAVED-1', '/api/devices/metrics/latest?serial=SAVED-1',
    '/api/devices/metrics/history?serial=HIST', '/api/devices/metrics/bounds?serial=BOUNDS', '/api/version',
  ];
  for (const path of guarded) {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      test(`${method} ${path} -> 405`, async () => {
        expectTextError(await agent.request(path, { method, headers: { Accept: 'application/json' }, body: method === 'DELETE' ? undefined : '{}' }), 405, 'GET only');
      });
    }
  }
  test('405 comes before parameter validation', async () => {
    for (const p of ['/api/devices/profile', '/api/devices/metrics/latest', '/api/devices/metrics/bounds', '/api/devices/metrics/history?since=x&until=y']) {
      expectTextError(await agent.request(p, { method: 'POST' }), 405, 'GET only');
    }
  });
});
