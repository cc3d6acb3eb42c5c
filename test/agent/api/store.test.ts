// Store through the command line and the API (docs/decisions/ 0011 backup, 0009 durable writes,
// 0005 metric tiers): import/export round trip, all-or-nothing import naming the bad line,
// durability across a hard kill, WAL, roll-ups serving counter max and toner last.
import assert from 'node:assert/strict';
import { closeSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { exportNdjson, expectJson, importNdjson, runCli, startAgent, writeConfig } from '../../kit/agent.js';
import { DAY, HOUR, MINUTE, dayStart, device, hourStart, metrics, monthStart, ndjson, nowSeconds, rfc3339 } from '../../kit/seed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NOW = nowSeconds();

/** Canonical form: keys sorted deeply; metrics without id; header and trailer lines dropped. */
function canon(records: object[]): string[] {
  const sortKeys = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sortKeys)
      : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]))
      : v;
  return records
    .filter((r) => !['header', 'trailer'].includes(String((r as { kind?: string }).kind)))
    .map((r) => {
      const { id: _id, ...rest } = r as Record<string, unknown>;
      if (rest.kind !== 'metrics') return JSON.stringify(sortKeys(r));
      // Aggregated rows may carry their sample_count (docs/decisions/0005-metric-tiers.md keeps it
      // per bucket); tolerated.
      if (rest.tier !== 'raw' && Number.isInteger(rest.sample_count) && (rest.sample_count as number) > 0) delete rest.sample_count;
      return JSON.stringify(sortKeys(rest));
    })
    .sort();
}

const RICH = [
  device('RT-1', '10.1.0.1', NOW, {
    is_saved: true, manufacturer: 'Acme', model: 'M1', hostname: 'h1', firmware: 'f1', mac_address: 'aa:bb:cc:dd:ee:ff',
    subnet_mask: '255.255.0.0', gateway: '10.1.0.254', consumables: ['Toner K', 'Drum'], status_messages: ['Ready', 'Low toner'],
    discovery_method: 'snmp', asset_number: 'A1', location: 'L1', description: 'D1', web_ui_url: 'https://10.1.0.1/',
    raw_data: { a: 1, b: 'x', c: [true, null, { d: 2.5 }] }, device_type: 'network', source_type: 'snmp', port_name: 'p',
    driver_name: 'd', spooler_status: 's', is_usb: true, is_default: true, is_shared: true, usb_webui_available: true,
    initial_page_count: 12345, dns_servers: ['1.1.1.1', '8.8.8.8'], dhcp_server: '10.1.0.2', walk_filename: 'w.txt',
    last_scan_id: 9007199254740991,
    locked_fields: [
      { field: 'location', reason: 'manual', locked_at: rfc3339(NOW - DAY + 123), locked_by: 'tech' },
      { field: 'asset_number', locked_at: rfc3339(NOW - 2 * DAY) },
    ],
    last_seen: NOW - MINUTE + 5, created_at: NOW - 90 * DAY, first_seen: NOW - 90 * DAY,
  }),
  device('RT 2 ü', '10.1.0.2', NOW, { visible: false, device_type: 'usb', source_type: 'usb' }),
  metrics('RT-1', 'raw', NOW - 10 * MINUTE + 7, {
    page_count: 100, color_pages: 40, mono_pages: 60, scan_count: 3, toner_levels: { black: 80, cyan: 'OK', magenta: 12.5, yellow: null },
  }),
  metrics('RT-1', 'raw', NOW - 5 * MINUTE, { page_count: 101 }),
  metrics('RT-1', 'hourly', hourStart(NOW - 10 * DAY), { page_count: 90, toner_levels: { black: 85 } }),
  metrics('RT-1', 'daily', dayStart(NOW - 40 * DAY), { page_count: 50, mono_pages: 50 }),
  metrics('RT-1', 'monthly', monthStart(NOW - 400 * DAY), { page_count: 10 }),
  metrics('RT 2 ü', 'raw', NOW - HOUR, { page_count: 1 }),
];

test('store: import then export reproduces the same records, and again after re-import', async () => {
  const a = await writeConfig();
  const r = await importNdjson(a.configPath, ndjson(RICH));
  assert.equal(r.code, 0, r.stderr);
  const out = await exportNdjson(a.configPath);
  for (const rec of out) assert.ok(['header', 'device', 'metrics', 'trailer'].includes(String(rec.kind)), `unexpected line ${JSON.stringify(rec)}`);
  assert.deepEqual(canon(out), canon(RICH));
  // Export writes format version 2 (docs/backup-format.md; backup-format.test.ts checks the trailer).
  assert.deepEqual(out[0], { kind: 'header', format: 'printbox-ndjson', version: 2 });
  assert.equal(out.at(-1)!.kind, 'trailer');

  const b = await writeConfig();
  const r2 = await importNdjson(b.configPath, out.map((x) => JSON.stringify(x)).join('\n') + '\n');
  assert.equal(r2.code, 0, r2.stderr);
  assert.deepEqual(canon(await exportNdjson(b.configPath)), canon(RICH));
});

// Import idempotence (migration 7): a raw row whose (serial, timestamp) is stored is skipped and
// counted; aggregated rows are keyed and rewritten with the values they have. The export, ids
// included, is the same byte for byte after importing the backup again, or the seed it came from.
test('store: importing the same backup twice changes nothing; the second import skips every raw row', async () => {
  const a = await writeConfig();
  const r = await importNdjson(a.configPath, ndjson(RICH));
  assert.equal(r.code, 0, r.stderr);
  const exportText = async () => {
    const e = await runCli(['export'], { configPath: a.configPath });
    assert.equal(e.code, 0, e.stderr);
    return e.stdout;
  };
  const backup = await exportText();
  const raw = RICH.filter((x) => x.kind === 'metrics' && x.tier === 'raw').length;
  const again = await importNdjson(a.configPath, backup);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`imported 2 devices and ${RICH.length - 2 - raw} metric rows .*; ${raw} raw rows already stored, skipped`));
  assert.equal(await exportText(), backup);
  const seedAgain = await importNdjson(a.configPath, ndjson(RICH));
  assert.equal(seedAgain.code, 0, seedAgain.stderr);
  assert.equal(await exportText(), backup);
});

test('store: import without a header line, and an empty database exports no records', async () => {
  const a = await writeConfig();
  assert.deepEqual(canon(await exportNdjson(a.configPath)), []);
  const r = await importNdjson(a.configPath, ndjson(RICH.slice(0, 3), false));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(canon(await exportNdjson(a.configPath)), canon(RICH.slice(0, 3)));
});

const J = (v: unknown) => JSON.stringify(v);
const goodNew = [J(device('NEW-1', '10.2.0.1', NOW)), J(metrics('NEW-1', 'raw', NOW - MINUTE, { page_count: 5 }))];
const hdr = J({ kind: 'header', format: 'printbox-ndjson', version: 1 });
const badCases: [string, string[], number][] = [
  ['not JSON', [hdr, ...goodNew, '{not json', J(device('NEW-2', '10.2.0.2', NOW))], 4],
  ['unknown kind', [hdr, goodNew[0]!, J({ kind: 'gadget', serial: 'X' }), goodNew[1]!], 3],
  ['device without serial', [hdr, ...goodNew, J(device('NEW-3', '10.2.0.3', NOW)), J({ ...device('x', '10.2.0.4', NOW), serial: undefined })], 5],
  ['device with an empty serial', [hdr, J({ ...device('', '10.2.0.4', NOW) }), ...goodNew], 2],
  ['metrics with an unknown tier', [hdr, J({ ...metrics('NEW-1', 'raw', NOW), tier: 'weekly' }), ...goodNew], 2],
  ['metrics with a bad timestamp', [hdr, ...goodNew, J({ ...metrics('NEW-1', 'raw', NOW), timestamp: 'yesterday' })], 4],
  ['device with a wrong type', [hdr, ...goodNew, J({ ...device('NEW-4', '10.2.0.5', NOW), is_saved: 'yes' })], 4],
  ['metrics counter with a wrong type', [goodNew[0]!, goodNew[1]!, J(metrics('NEW-1', 'raw', NOW - 2 * MINUTE, { page_count: 'many' })), hdr], 3],
  ['a JSON array instead of an object', [hdr, ...goodNew, '[1,2,3]'], 4],
];
for (const [name, lines, lineNo] of badCases) {
  test(`store: import rejects the whole file on a bad line (${name}), naming line ${lineNo}`, async () => {
    const a = await writeConfig();
    const base = await importNdjson(a.configPath, ndjson(RICH));
    assert.equal(base.code, 0, base.stderr);
    const before = canon(await exportNdjson(a.configPath));
    const r = await importNdjson(a.configPath, lines.join('\n') + '\n');
    assert.notEqual(r.code, 0, 'import must fail');
    assert.match(r.stderr, new RegExp(`line\\s*:?\\s*#?${lineNo}\\b`, 'i'), `stderr must name line ${lineNo}: ${JSON.stringify(r.stderr)}`);
    assert.deepEqual(canon(await exportNdjson(a.configPath)), before, 'nothing written');
  });
}

test('store: import of a missing file fails', async () => {
  const a = await writeConfig();
  const r = await runCli(['import', join(a.dir, 'does-not-exist.ndjson')], { configPath: a.configPath });
  assert.notEqual(r.code, 0);
  assert.ok(r.stderr.trim().length > 0);
});

function sqliteFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...sqliteFiles(p));
    else if (st.size >= 100) {
      const fd = openSync(p, 'r');
      const b = Buffer.alloc(20);
      readSync(fd, b, 0, 20, 0);
      closeSync(fd);
      if (b.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') out.push(p);
    }
  }
  return out;
}

test('store: a real SQLite file in WAL mode; data survives a hard kill', async () => {
  const agent = await startAgent({ seed: ndjson(RICH) });
  try {
    const files = sqliteFiles(agent.dataDir);
    assert.ok(files.length >= 1, 'an SQLite database file under data_dir');
    const fd = openSync(files[0]!, 'r');
    const b = Buffer.alloc(20);
    readSync(fd, b, 0, 20, 0);
    closeSync(fd);
    assert.deepEqual([b[18], b[19]], [2, 2], 'file format read/write version 2 = WAL');
    const before = expectJson(await agent.get('/api/devices/profile?serial=RT-1'));
    agent.proc.kill('SIGKILL');
    await new Promise((r) => agent.proc.once('exit', r));
    await agent.restart();
    assert.deepEqual(expectJson(await agent.get('/api/devices/profile?serial=RT-1')), before);
    assert.equal(expectJson(await agent.get('/devices/list')) instanceof Array, true);
  } finally {
    await agent.stop();
  }
});

test('store: an hourly roll-up serves the counter max and the last toner reading at the bucket start', async () => {
  const H = hourStart(NOW - 10 * DAY);
  // page_count 10, 60, 20: max 60, last 20, avg 30; toner 90, 60, 70: last 70, avg 73.3, max 90
  const seed = ndjson([
    device('ROLL', '10.3.0.1', NOW),
    metrics('ROLL', 'raw', H + 10 * MINUTE, { page_count: 10, toner_levels: { black: 90 } }),
    metrics('ROLL', 'raw', H + 20 * MINUTE, { page_count: 60, toner_levels: { black: 60 } }),
    metrics('ROLL', 'raw', H + 30 * MINUTE, { page_count: 20, toner_levels: { black: 70 } }),
  ]);
  const cfg = await writeConfig();
  const imp = await importNdjson(cfg.configPath, seed);
  assert.equal(imp.code, 0, imp.stderr);
  // `rollup` is the agent's documented subcommand (docs/architecture.md); serve also catches up.
  const roll = await runCli(['rollup'], { configPath: cfg.configPath });
  if (roll.code === 0) {
    const once = canon(await exportNdjson(cfg.configPath));
    const again = await runCli(['rollup'], { configPath: cfg.configPath });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(canon(await exportNdjson(cfg.configPath)), once, 'roll-ups are idempotent');
  }
  const agent = await startAgent({ config: cfg });
  try {
    const q = `/api/devices/metrics/history?serial=ROLL&since=${rfc3339(H - HOUR)}&until=${rfc3339(H + 2 * HOUR)}&raw=true`;
    let got: unknown = null;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      got = expectJson(await agent.get(q));
      if (Array.isArray(got) && got.length > 0) break;
      await sleep(300);
    }
    assert.ok(Array.isArray(got), `an hourly row is served (rollup exit ${roll.code}: ${roll.stderr})`);
    const rows = got as Record<string, unknown>[];
    assert.equal(rows.length, 1, JSON.stringify(rows));
    const { id, ...row } = rows[0]!;
    assert.equal(typeof id, 'number');
    assert.deepEqual(row, { serial: 'ROLL', timestamp: rfc3339(H), page_count: 60, toner_levels: { black: 70 }, tier: 'hourly' });
  } finally {
    await agent.stop();
  }
});
