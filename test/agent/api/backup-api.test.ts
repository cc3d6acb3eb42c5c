// GET /backup and POST /restore (backup and restore from the browser): the download is
// the CLI's export, the upload the CLI's import, all or nothing, over real HTTPS.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { expectTextError, startAgent, type Agent } from '../../kit/agent.js';
import { HOUR, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';

const NOW = nowSeconds();
const SEED = ndjson([
  device('BACK-1', '10.6.0.1', NOW, { is_saved: true, location: 'hall' }),
  device('BACK-2', '10.6.0.2', NOW),
  ...Array.from({ length: 24 }, (_, i) => metrics('BACK-1', 'raw', NOW - (i + 1) * HOUR, { page_count: 1000 + i })),
]);
let source: Agent;
let target: Agent;
before(async () => {
  [source, target] = await Promise.all([startAgent({ seed: SEED }), startAgent()]);
});
after(() => Promise.all([source?.stop(), target?.stop()]));

const restore = (agent: Agent, body: string, type = 'application/x-ndjson') =>
  agent.request('/restore', { method: 'POST', body, headers: { 'Content-Type': type, Accept: 'application/json' } });

test('GET /backup is the whole database as a version 2 backup, as an attachment', async () => {
  const r = await source.request('/backup');
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['content-type'], 'application/x-ndjson');
  assert.match(String(r.headers['content-disposition']), /^attachment; filename="printbox-backup-[0-9TZ-]+\.ndjson"$/);
  const lines = r.body.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines[0], { kind: 'header', format: 'printbox-ndjson', version: 2 });
  const trailer = lines.at(-1);
  assert.equal(trailer.kind, 'trailer');
  assert.deepEqual(trailer.records, { device: 2, metrics: { raw: 24, hourly: trailer.records.metrics.hourly, daily: trailer.records.metrics.daily, monthly: trailer.records.metrics.monthly } });
  assert.equal(lines.filter((l) => l.kind === 'device').length, 2);
});

test('POST /restore reads a backup into another box, all or nothing', async () => {
  const backup = (await source.request('/backup')).body;
  // Refused, each changing nothing: cut at a line boundary, a changed byte, not NDJSON's type.
  const cut = backup.split('\n').slice(0, 3).join('\n') + '\n';
  expectTextError(await restore(target, cut), 400, 'backup is truncated: no trailer after line 3 (a version 2 backup ends with one); nothing was restored');
  const changed = backup.replace('"hall"', '"hell"');
  const bad = await restore(target, changed);
  assert.equal(bad.status, 400);
  assert.match(bad.body, /checksum mismatch.*; nothing was restored\n$/);
  expectTextError(await restore(target, backup, 'application/json'), 415, 'a backup must be sent as Content-Type: application/x-ndjson (the file GET /backup gives)');
  assert.equal((await target.get('/devices/discovered?include_known=true')).body, '[]\n');

  const r = await restore(target, backup);
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), { devices: 2, metrics: JSON.parse(r.body).metrics, skipped: 0, meter_reads: 0, meter_reads_skipped: 0 });
  assert.ok(JSON.parse(r.body).metrics >= 24);
  assert.equal((await target.get('/devices/list')).body, (await source.get('/devices/list')).body);
  // Row ids are the box's own (a backup does not carry them): the rest is the same.
  const history = async (a: Agent) =>
    (JSON.parse((await a.get('/api/devices/metrics/history?serial=BACK-1&period=day')).body) as Record<string, unknown>[]).map(({ id: _id, ...rest }) => rest);
  assert.deepEqual(await history(target), await history(source));
  assert.ok((await history(target)).length >= 23, 'the day holds the readings of the last 24 hours');

  // The same file again: the raw readings are already there.
  const again = JSON.parse((await restore(target, backup)).body);
  assert.equal(again.skipped, 24);
  // The round trip: the restored box backs up the same records.
  const second = (await target.request('/backup')).body.trim().split('\n');
  assert.deepEqual(JSON.parse(second.at(-1)!).records, JSON.parse(backup.trim().split('\n').at(-1)!).records);
});

test('gzip when asked: the backup gzipped both ways; backup, wipe, restore gives a byte-identical backup', async () => {
  // A box whose readings were stored as they came (row ids in time order, as on a real box: a
  // backup carries the ids, and a restore numbers rows in the file's order).
  const box = await startAgent({
    seed: ndjson([
      device('ROUND-1', '10.6.0.9', NOW, { is_saved: true, location: 'lab' }),
      ...Array.from({ length: 48 }, (_, i) => metrics('ROUND-1', 'raw', NOW - (48 - i) * HOUR, { page_count: 5000 + i })),
    ]),
  });
  const fresh = await startAgent();
  try {
    const plain = await box.request('/backup');
    const zipped = await box.request('/backup', { headers: { 'Accept-Encoding': 'gzip, deflate, br' } });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'Accept-Encoding');
    assert.equal(plain.headers['content-encoding'], undefined, 'not gzipped unasked');
    assert.equal(gunzipSync(zipped.bytes).toString('utf8'), plain.body);

    const send = (body: Buffer, encoding: string) =>
      fresh.request('/restore', { method: 'POST', body, headers: { 'Content-Type': 'application/x-ndjson', 'Content-Encoding': encoding, Accept: 'application/json' } });
    expectTextError(await send(zipped.bytes, 'br'), 415, 'a backup may be sent as it is or gzipped (Content-Encoding: gzip), not br');
    const damaged = Buffer.from(zipped.bytes);
    damaged[damaged.length - 6] ^= 0xff; // the gzip trailer's CRC
    const bad = await send(damaged, 'gzip');
    assert.equal(bad.status, 400, bad.body);
    assert.match(bad.body, /^the gzipped backup is damaged: .*; nothing was restored\n$/);
    assert.equal((await fresh.get('/devices/discovered?include_known=true')).body, '[]\n', 'nothing restored');
    const ok = await send(zipped.bytes, 'gzip');
    assert.equal(ok.status, 200, ok.body);
    assert.equal((await fresh.request('/backup')).body, plain.body, 'the backup after the round trip is byte-identical');
  } finally {
    await Promise.all([box.stop(), fresh.stop()]);
  }
});
