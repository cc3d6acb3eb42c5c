// Backup format version 2 (docs/backup-format.md) through the real command line and real files:
// export writes a header naming version 2 and ends with a trailer (record counts, SHA-256 of every
// byte before it); import refuses a version 2 file whose trailer is missing, wrong, or followed by
// anything, and leaves the database as it was; version 1 files still import, with a warning.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { importNdjson, runCli, writeConfig, type CliResult } from '../../kit/agent.js';
import { DAY, HOUR, MINUTE, dayStart, device, hourStart, metrics, monthStart, ndjson, nowSeconds } from '../../kit/seed.js';

const NOW = nowSeconds();

// 3 devices, 12 raw, 2 hourly, 1 daily, 1 monthly: 20 record lines, so there are cut points in
// every section of the file. Raw rows in export order (serial, then time): import numbers raw rows
// in file order, so the ids, and with them the export, come out the same.
const SEED = [
  device('BF-1', '10.9.0.1', NOW, { is_saved: true, hostname: 'one' }),
  device('BF-2', '10.9.0.2', NOW, { location: 'Room 2 ü' }),
  device('BF-3', '10.9.0.3', NOW),
  ...Array.from({ length: 12 }, (_, i) => metrics(`BF-${Math.floor(i / 4) + 1}`, 'raw', NOW - (12 - i) * MINUTE, { page_count: 123400 + i })),
  // The same hour: export orders a tier by time, then serial, and import numbers rows in file
  // order, so the seed's ids must follow that order (an hour apart, they did not across midnight).
  metrics('BF-1', 'hourly', hourStart(NOW - 10 * DAY), { page_count: 90 }),
  metrics('BF-2', 'hourly', hourStart(NOW - 10 * DAY), { page_count: 80 }),
  metrics('BF-1', 'daily', dayStart(NOW - 40 * DAY), { page_count: 50 }),
  metrics('BF-1', 'monthly', monthStart(NOW - 400 * DAY), { page_count: 10 }),
];
const COUNTS = { device: 3, metrics: { raw: 12, hourly: 2, daily: 1, monthly: 1 } };

// A database that already holds something else: a refused import must leave it exactly as it was.
const BASE = [device('KEEP-1', '10.8.0.1', NOW), metrics('KEEP-1', 'raw', NOW - HOUR, { page_count: 7 })];

async function exportText(configPath: string): Promise<string> {
  const r = await runCli(['export'], { configPath });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/** A database with BASE in it, and its export. */
async function baseDb(): Promise<{ configPath: string; before: string }> {
  const cfg = await writeConfig();
  const r = await importNdjson(cfg.configPath, ndjson(BASE));
  assert.equal(r.code, 0, r.stderr);
  return { configPath: cfg.configPath, before: await exportText(cfg.configPath) };
}

/** A version 2 backup of SEED, as export writes it. */
async function v2Backup(): Promise<string> {
  const cfg = await writeConfig();
  const r = await importNdjson(cfg.configPath, ndjson(SEED));
  assert.equal(r.code, 0, r.stderr);
  return exportText(cfg.configPath);
}

const linesOf = (text: string) => text.split('\n').slice(0, -1); // every line ends with "\n"
const join = (lines: string[]) => lines.map((l) => l + '\n').join('');

async function assertRefused(db: { configPath: string; before: string }, r: CliResult, message: RegExp): Promise<void> {
  assert.notEqual(r.code, 0, `import must fail: ${r.stdout}`);
  assert.match(r.stderr, message);
  assert.match(r.stderr, /nothing was imported\n$/);
  assert.equal(r.stdout, '');
  assert.equal(await exportText(db.configPath), db.before, 'the database is unchanged');
}

test('backup v2: export writes header version 2 and a trailer with the counts and the SHA-256 of the bytes before it; a round trip is identical', async () => {
  const backup = await v2Backup();
  const lines = linesOf(backup);
  assert.deepEqual(JSON.parse(lines[0]!), { kind: 'header', format: 'printbox-ndjson', version: 2 });
  assert.equal(lines.length, 1 + SEED.length + 1);
  const body = join(lines.slice(0, -1));
  // The exact shape, keys in this order (docs/backup-format.md).
  assert.equal(lines.at(-1), JSON.stringify({ kind: 'trailer', records: COUNTS, sha256: createHash('sha256').update(body).digest('hex') }));

  for (const via of ['file', 'stdin'] as const) {
    const cfg = await writeConfig();
    const r = via === 'file' ? await importNdjson(cfg.configPath, backup) : await runCli(['import', '-'], { configPath: cfg.configPath, input: backup });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'no warning for a version 2 file');
    assert.match(r.stdout, /^imported 3 devices and 16 metric rows from /);
    assert.equal(await exportText(cfg.configPath), backup, `export of the import (${via}) is the same bytes`);
  }
});

test('backup v2: a file cut at a line boundary (or inside a line) is refused and changes nothing', async () => {
  const backup = await v2Backup();
  const lines = linesOf(backup);
  const db = await baseDb();
  // After the header, among the devices, after the devices, among raw rows, among tier rows, right before the trailer.
  const cuts = [1, 2, 4, 10, 17, lines.length - 1];
  for (const k of cuts) {
    const r = await importNdjson(db.configPath, join(lines.slice(0, k)));
    await assertRefused(db, r, new RegExp(`: backup is truncated: no trailer after line ${k} \\(a version 2 backup ends with one\\); nothing was imported`));
  }
  // The same through stdin.
  const k = lines.length - 1;
  await assertRefused(db, await runCli(['import', '-'], { configPath: db.configPath, input: join(lines.slice(0, k)) }), new RegExp(`^printbox-agent import: -: backup is truncated: no trailer after line ${k} `));
  // Cut inside a line: the last line is not JSON and has no newline.
  const mid = join(lines.slice(0, 8)) + lines[8]!.slice(0, 30);
  await assertRefused(db, await importNdjson(db.configPath, mid), /line 9: invalid JSON at the end of the file, without a newline: the backup is truncated/);
  // Cut inside the trailer.
  await assertRefused(db, await importNdjson(db.configPath, backup.slice(0, -20)), new RegExp(`line ${lines.length}: invalid JSON at the end of the file, without a newline: the backup is truncated`));
});

test('backup v2: a changed byte in the middle is refused by the checksum; a count mismatch is refused', async () => {
  const backup = await v2Backup();
  const lines = linesOf(backup);
  const db = await baseDb();
  // The last digit of the page_count on the line at the middle of the file: still valid JSON with
  // the same counts, so only the checksum sees it.
  const lineStart = backup.lastIndexOf('\n', backup.length / 2) + 1;
  const at = backup.indexOf(',"page_count":', lineStart) + ',"page_count":123400'.length - 1;
  assert.ok(at < backup.indexOf('\n', lineStart), 'a metrics line in the middle');
  const changed = backup.slice(0, at) + (backup[at] === '9' ? '8' : '9') + backup.slice(at + 1);
  assert.equal(changed.length, backup.length);
  await assertRefused(db, await importNdjson(db.configPath, changed), new RegExp(`line ${lines.length}: checksum mismatch: the bytes before the trailer hash to sha256 [0-9a-f]{64}, the trailer says [0-9a-f]{64}; the backup was changed or damaged after export`));

  // The trailer's count differs from the file's.
  const trailer = JSON.parse(lines.at(-1)!);
  trailer.records.metrics.raw = 13;
  await assertRefused(db, await importNdjson(db.configPath, join([...lines.slice(0, -1), JSON.stringify(trailer)])), new RegExp(`line ${lines.length}: the record counts do not match the trailer: 12 raw metrics lines in the file, 13 in the trailer;`));
  // A line missing from the middle: the counts say which kind.
  const dropped = [...lines.slice(0, 6), ...lines.slice(7)];
  await assertRefused(db, await importNdjson(db.configPath, join(dropped)), new RegExp(`line ${dropped.length}: the record counts do not match the trailer: 11 raw metrics lines in the file, 12 in the trailer;`));
  // A trailer that is not the agent's shape.
  const { sha256: _s, ...noSum } = JSON.parse(lines.at(-1)!);
  await assertRefused(db, await importNdjson(db.configPath, join([...lines.slice(0, -1), JSON.stringify(noSum)])), /trailer field sha256 must be 64 lowercase hex digits/);
});

test('backup v2: anything after the trailer is refused; a trailer in a version 1 file is refused', async () => {
  const backup = await v2Backup();
  const lines = linesOf(backup);
  const db = await baseDb();
  const n = lines.length;
  const extra = JSON.stringify(device('LATE-1', '10.9.9.9', NOW));
  await assertRefused(db, await importNdjson(db.configPath, backup + extra + '\n'), new RegExp(`line ${n + 1}: a line after the trailer \\(line ${n}\\); a version 2 backup ends with its trailer`));
  await assertRefused(db, await importNdjson(db.configPath, backup + backup), new RegExp(`line ${n + 1}: a line after the trailer`));
  await assertRefused(db, await importNdjson(db.configPath, backup + '\n'), new RegExp(`line ${n + 1}: a line after the trailer`));
  await assertRefused(db, await importNdjson(db.configPath, ndjson(SEED) + lines.at(-1) + '\n'), new RegExp(`line ${SEED.length + 2}: a trailer belongs to a version 2 backup; this one is version 1`));
});

test('backup v1: a file without a trailer still imports, with a warning that it cannot be checked', async () => {
  for (const [name, text] of [
    ['version 1 header', ndjson(SEED)],
    ['no header', ndjson(SEED, false)],
  ] as const) {
    for (const via of ['file', 'stdin'] as const) {
      const cfg = await writeConfig();
      const r = via === 'file' ? await importNdjson(cfg.configPath, text) : await runCli(['import', '-'], { configPath: cfg.configPath, input: text });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^imported 3 devices and 16 metric rows from /);
      const what = name === 'no header' ? 'no header line: read as format version 1, which' : 'format version 1';
      assert.match(r.stderr, new RegExp(`^printbox-agent import: [^\\n]+: warning: ${what} has no trailer, so the file cannot be checked for truncation\\n$`), `${name} via ${via}`);
      // What it imported exports as version 2, the same as the seed's export elsewhere.
      const out = linesOf(await exportText(cfg.configPath));
      assert.equal(JSON.parse(out.at(-1)!).kind, 'trailer');
      assert.deepEqual(JSON.parse(out.at(-1)!).records, COUNTS);
    }
  }
});
