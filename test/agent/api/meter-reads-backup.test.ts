// Billing meter reads in the box's backup (docs/backup-format.md `meter_read` lines): a
// restore must not lose the billing history. A database with reads (printers named with commas,
// quotes, line breaks, a leading `=`, and `constructor`) is exported by the real command line,
// restored into a running agent (POST /restore) and imported into another database
// (`printbox-agent import`): every read comes back as it was, the API lists it with its delta,
// and the restored box's own backup holds the same lines. A backup without reads is written as
// before (no `meter_read` count in the trailer). Bad meter-read lines are refused naming the line
// and the field, and nothing changes.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { expectJson, importNdjson, runCli, startAgent, writeConfig, type Agent } from '../../kit/agent.js';
import { DAY, HOUR, MINUTE, device, metrics, ndjson, nowSeconds, rfc3339 } from '../../kit/seed.js';
import { HOSTILE_NAMES } from '../../kit/hostile-names.js';

type Json = Record<string, any>;
const NOW = nowSeconds();
const agents: Agent[] = [];
after(async () => {
  for (const a of agents) await a.stop();
});

// Serials and locations a CSV or a JSON line could trip over, and the names of a prototype's properties.
const SERIALS = ['MR-1', 'MR,2 "quoted"', 'MR\n3 line', '=HYPERLINK("x")', ...HOSTILE_NAMES];
const LOCATION = 'Room "5", floor 2\n=SUM(A1:A9) ü';
const due = (month: string) => Date.parse(`${month}-01T00:00:00Z`);

/** Lines of the backup format, as export writes them (keys in its order). */
function read(serial: string, period: string, source: 'poll' | 'nearest' | 'missing', page: number, extra: Json = {}): Json {
  const billing = due(period);
  if (source === 'missing') return { kind: 'meter_read', serial, period, billing_time: rfc3339(billing), source, attempts: 48 };
  const readAt = source === 'poll' ? billing + 7 * 1000 : billing - 3 * HOUR - 20 * MINUTE;
  return {
    kind: 'meter_read', serial, period, billing_time: rfc3339(billing), read_at: rfc3339(readAt), source, attempts: source === 'poll' ? 1 : 48,
    page_count: page, mono_pages: page - 100, color_pages: 100, ...extra,
  };
}

const SEED_DEVICES = SERIALS.map((s, i) => device(s, `10.7.0.${i + 1}`, NOW, { is_saved: true, location: LOCATION, model: `Model ${s}` }));
// Two periods for every printer, and a third where one was silent all day and one had no reading near.
const SEED_READS = [
  ...SERIALS.map((s, i) => read(s, '2026-09', 'poll', 1000 + i)),
  ...SERIALS.map((s, i) =>
    i === 1 ? read(s, '2026-10', 'nearest', 1500 + i) : i === 2 ? read(s, '2026-10', 'missing', 0) : read(s, '2026-10', 'poll', 1600 + i, { copy_pages: 40 + i, duplex_sheets: 7 }),
  ),
];
const SEED = [...SEED_DEVICES, metrics('MR-1', 'raw', NOW - DAY, { page_count: 5000 }), ...SEED_READS];

async function exportText(configPath: string): Promise<string> {
  const r = await runCli(['export'], { configPath });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}
const linesOf = (text: string): Json[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
const readLines = (text: string) => linesOf(text).filter((l) => l.kind === 'meter_read');

/** A database with SEED imported, and its export. */
async function seeded(): Promise<{ configPath: string; backup: string }> {
  const cfg = await writeConfig();
  const r = await importNdjson(cfg.configPath, ndjson(SEED));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^imported ${SERIALS.length} devices, 1 metric rows and ${SEED_READS.length} billing meter reads from `));
  return { configPath: cfg.configPath, backup: await exportText(cfg.configPath) };
}

test('meter reads: exported after the metrics and counted in the trailer; restored by POST /restore and by import, every read intact', async () => {
  const { backup } = await seeded();
  const lines = linesOf(backup);
  // Exported in period then serial order, each exactly as seeded (the hostile names as values).
  const byKey = (l: Json) => `${l.period} ${l.serial}`;
  const want = [...SEED_READS].sort((a, b) => (byKey(a) < byKey(b) ? -1 : byKey(a) > byKey(b) ? 1 : 0));
  assert.deepEqual(readLines(backup), want);
  const firstRead = lines.findIndex((l) => l.kind === 'meter_read');
  assert.ok(lines.slice(0, firstRead).every((l) => l.kind !== 'meter_read') && lines.slice(firstRead, -1).every((l) => l.kind === 'meter_read'), 'reads come last, before the trailer');
  assert.equal(lines.at(-1)!.records.meter_read, SEED_READS.length);

  // POST /restore into a running agent: the API lists every read with its previous period's delta.
  const agent = await startAgent();
  agents.push(agent);
  const r = await agent.request('/restore', { method: 'POST', body: backup, headers: { 'Content-Type': 'application/x-ndjson', Accept: 'application/json' } });
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), { devices: SERIALS.length, metrics: 1, skipped: 0, meter_reads: SEED_READS.length, meter_reads_skipped: 0 });
  const october = expectJson(await agent.get('/api/billing/reads?period=2026-10')) as Json;
  assert.deepEqual(october.periods.map((p: Json) => [p.period, p.printers, p.nearest, p.missing]), [['2026-10', SERIALS.length, 1, 1], ['2026-09', SERIALS.length, 0, 0]]);
  assert.equal(october.reads.length, SERIALS.length);
  for (const [i, serial] of SERIALS.entries()) {
    const got = october.reads.find((x: Json) => x.serial === serial);
    assert.ok(got, `read of ${JSON.stringify(serial)}`);
    assert.equal(got.location, LOCATION);
    const seededRead = SEED_READS.find((l) => l.serial === serial && l.period === '2026-10')!;
    assert.equal(got.source, seededRead.source);
    assert.equal(got.read_at, seededRead.read_at ?? null);
    assert.equal(got.total, seededRead.page_count ?? null);
    assert.equal(got.previous.total, 1000 + i);
    if (seededRead.source !== 'missing') assert.equal(got.delta.total, seededRead.page_count - (1000 + i));
    if (seededRead.source === 'nearest') assert.equal(got.offset_minutes, -200, 'the nearest read says how far it was from the billing time');
  }
  // The restored box's own backup holds the same reads; restored over itself, none is written twice.
  const again = await agent.request('/backup');
  assert.deepEqual(readLines(again.body), readLines(backup));
  const twice = await agent.request('/restore', { method: 'POST', body: again.body, headers: { 'Content-Type': 'application/x-ndjson', Accept: 'application/json' } });
  assert.equal(twice.status, 200, twice.body);
  assert.equal(JSON.parse(twice.body).meter_reads_skipped, SEED_READS.length);
  assert.equal(JSON.parse(twice.body).meter_reads, 0);

  // `printbox-agent import` into another database: the same lines come back out.
  const other = await writeConfig();
  const cli = await importNdjson(other.configPath, backup);
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.stderr, '', 'a version 2 backup imports without a warning');
  assert.deepEqual(readLines(await exportText(other.configPath)), readLines(backup));
  const overItself = await importNdjson(other.configPath, backup);
  assert.equal(overItself.code, 0, overItself.stderr);
  assert.match(overItself.stdout, new RegExp(`; ${SEED_READS.length} meter reads not imported: the box has a read for that printer and period already, which stays\\n$`));
});

test('meter reads: a backup without them is written as before (no meter_read count) and restores; one from before them restores too', async () => {
  const cfg = await writeConfig();
  const r = await importNdjson(cfg.configPath, ndjson(SEED.filter((l) => l.kind !== 'meter_read')));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^imported \d+ devices and 1 metric rows from /, 'nothing about reads when the file has none');
  const backup = await exportText(cfg.configPath);
  assert.deepEqual(Object.keys(linesOf(backup).at(-1)!.records), ['device', 'metrics']);
  const agent = await startAgent();
  agents.push(agent);
  const restored = await agent.request('/restore', { method: 'POST', body: backup, headers: { 'Content-Type': 'application/x-ndjson', Accept: 'application/json' } });
  assert.equal(restored.status, 200, restored.body);
  assert.equal(JSON.parse(restored.body).meter_reads, 0);
  assert.deepEqual((expectJson(await agent.get('/api/billing/reads')) as Json).reads, []);
});

test('meter reads: a bad meter_read line is refused naming the line and the field; nothing changes (import and POST /restore)', async () => {
  const { backup } = await seeded();
  const target = await writeConfig();
  const base = await importNdjson(target.configPath, ndjson([device('KEEP-1', '10.8.0.1', NOW, { is_saved: true }), read('KEEP-1', '2026-09', 'poll', 777)]));
  assert.equal(base.code, 0, base.stderr);
  const before = await exportText(target.configPath);
  const agent = await startAgent({ seed: ndjson([device('KEEP-1', '10.8.0.1', NOW, { is_saved: true }), read('KEEP-1', '2026-09', 'poll', 777)]) });
  agents.push(agent);
  const apiBefore = (expectJson(await agent.get('/api/billing/reads?period=2026-09')) as Json).reads;
  assert.equal(apiBefore.length, 1);

  const good = read('MR-1', '2026-11', 'poll', 3000);
  const cases: [string, Json, RegExp][] = [
    ['unknown field', { ...good, billed_by: 'x' }, /unknown meter_read field billed_by/],
    ['bad period', { ...good, period: '2026-13' }, /field period must be a month as YYYY-MM/],
    ['bad source', { ...good, source: 'guess' }, /field source must be one of poll, nearest, missing/],
    ['poll without its time', (({ read_at: _r, ...l }) => l)(good), /field read_at is required for a poll read/],
    ['missing with a time', { ...read('MR-1', '2026-11', 'missing', 0), read_at: rfc3339(NOW) }, /field read_at must be absent for a missing read/],
    ['missing with counters', { ...read('MR-1', '2026-11', 'missing', 0), page_count: 5 }, /a missing read has no counters/],
    ['negative counter', { ...good, page_count: -1 }, /field page_count must be a non-negative integer/],
    ['text counter', { ...good, copy_pages: '12' }, /field copy_pages must be a non-negative integer/],
    ['bad billing time', { ...good, billing_time: 'yesterday' }, /field billing_time must be an RFC 3339 date-time/],
    ['unknown printer', { ...good, serial: 'NOT-THERE' }, /meter_read for unknown device "NOT-THERE"/],
    ['empty serial', { ...good, serial: '' }, /field serial must be a non-empty string/],
    ['inherited key', JSON.parse(JSON.stringify(good).replace('"source"', '"constructor":1,"source"')), /key "constructor"/],
  ];
  // Each bad line is put in a version 1 file after the good backup's lines (no trailer to recompute).
  const v1 = linesOf(backup).slice(0, -1).map((l) => (l.kind === 'header' ? { ...l, version: 1 } : l));
  for (const [name, bad, message] of cases) {
    const file = ndjson([...v1.slice(1), bad]);
    const lineNo = v1.length + 1;
    const cli = await importNdjson(target.configPath, file);
    assert.equal(cli.code, 1, `${name}: ${cli.stdout}`);
    assert.match(cli.stderr, new RegExp(`line ${lineNo}: ${message.source}.*; nothing was imported\\n$`), name);
    const res = await agent.request('/restore', { method: 'POST', body: file, headers: { 'Content-Type': 'application/x-ndjson', Accept: 'application/json' } });
    assert.equal(res.status, 400, `${name}: ${res.body}`);
    assert.match(res.body, new RegExp(`^line ${lineNo}: ${message.source}.*; nothing was restored`), name);
  }
  // A version 2 file whose trailer counts one read too many: refused by the counts.
  const lines = backup.split('\n').slice(0, -1);
  const trailer = JSON.parse(lines.at(-1)!) as Json;
  trailer.records.meter_read += 1;
  const miscounted = [...lines.slice(0, -1), JSON.stringify(trailer)].join('\n') + '\n';
  const cli = await importNdjson(target.configPath, miscounted);
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, new RegExp(`the record counts do not match the trailer: ${SEED_READS.length} meter_read lines in the file, ${SEED_READS.length + 1} in the trailer`));

  assert.equal(await exportText(target.configPath), before, 'the database is unchanged');
  assert.deepEqual((expectJson(await agent.get('/api/billing/reads?period=2026-09')) as Json).reads, apiBefore, 'the agent\'s reads are unchanged');
  assert.deepEqual((expectJson(await agent.get('/api/billing/reads')) as Json).periods.map((p: Json) => p.period), ['2026-09']);
});
