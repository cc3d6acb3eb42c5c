// Discovery, collection and device management through the real agent, against real printers'
// recordings served by snmpsim over UDP on loopback addresses. Nothing leaves 127.0.0.0/8.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { startSnmpSim, fixturePath, writeMovedCounters, type SnmpSim } from '../../kit/snmpsim.js';
import { device, ndjson, metrics, HOUR } from '../../kit/seed.js';
import { eventProblem } from '../../kit/openapi.js';
import { openEventStream } from '../../kit/events.js';
import { until } from '../../kit/until.js';

// Printers on 127.0.1.1-5, silence on the rest of 127.0.1.1-40. Values from the recordings
// (test/fixtures/snmp/printmaster, see their README): serial and prtMarkerLifeCount.1.1.
const PRINTERS = [
  { address: '127.0.1.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943', pages: 7432 },
  { address: '127.0.1.2', file: 'printmaster/kyocera_cs4053.snmprec', serial: 'RH28Y00024', pages: 76498 },
  { address: '127.0.1.3', file: 'printmaster/brother.snmprec', serial: 'U64641E7J134163', pages: 42976 },
  { address: '127.0.1.4', file: 'printmaster/epson_cw.snmprec', serial: 'X7F4008528', pages: 7389 },
  { address: '127.0.1.5', file: 'printmaster/epson_sc.snmprec', serial: 'X8G9000415', pages: 145 },
];
const SILENT_SAVED = 'SILENT-0001';

let sim: SnmpSim;
let agent: Agent;
const events: { event: string; data: any }[] = [];
let sse: ReturnType<typeof openEventStream> | undefined;



before(async () => {
  sim = await startSnmpSim({
    endpoints: PRINTERS.map((p) => ({ address: p.address, recording: fixturePath(p.file), switchable: p.address === '127.0.1.1' })),
  });
  agent = await startAgent({
    seed: ndjson([device(SILENT_SAVED, { ip: '127.0.1.39', is_saved: true }), metrics(SILENT_SAVED, 'raw', Date.now() - HOUR, { page_count: 5 })]),
  });
  // Listen to the event stream for the whole file.
  sse = openEventStream(agent.httpsPort, (event, data) => events.push({ event, data }));
  const r = await agent.post('/settings', {
    discovery: { manual_ranges: true, ranges_text: '127.0.1.1-40', allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 800, discover_concurrency: 16 },
    snmp: { port: sim.port, communities: ['public'] },
  });
  expectJson(r);
});

after(async () => {
  sse?.destroy();
  await agent?.stop();
  await sim?.stop();
});

test('the event stream opens with connected', async () => {
  await until('connected event', async () => events.find((e) => e.event === 'connected'));
  assert.match(events.find((e) => e.event === 'connected')!.data.agent_version, /^\d+\.\d+\.\d+/);
});

test('POST /discover answers 202 at once, does not double a running scan, and finds exactly the printers', async () => {
  const first = expectJson(await agent.post('/discover', {}), 202) as any;
  assert.equal(first.state, 'running');
  assert.equal(typeof first.scan_id, 'number');
  const second = expectJson(await agent.post('/discover', {}), 202) as any;
  assert.equal(second.scan_id, first.scan_id);
  assert.equal(second.already_running, true);

  const done = await until('scan end', async () => {
    const s = expectJson(await agent.get('/discover')) as any;
    return s.state === 'running' ? undefined : s;
  });
  assert.equal(done.state, 'done');
  assert.equal(done.total, 40);
  assert.equal(done.scanned, 40);
  assert.equal(done.found, PRINTERS.length);

  const found = expectJson(await agent.get('/devices/discovered')) as any[];
  assert.deepEqual(found.map((d) => d.serial).sort(), PRINTERS.map((p) => p.serial).sort());
  for (const p of PRINTERS) {
    const info = found.find((d) => d.serial === p.serial);
    assert.equal(info.ip, p.address, p.serial);
    assert.equal(info.page_count, p.pages, `${p.serial} page_count`);
    assert.ok(info.learned_oids && typeof info.learned_oids === 'object');
    assert.deepEqual(info.discovery_methods, ['manual_range'], `${p.serial}: why it is listed`);
  }
  const profile = expectJson(await agent.get('/api/devices/profile?serial=VD21457943')) as any;
  assert.equal(profile.device.source_type, 'snmp');
  assert.equal(profile.device.device_type, 'network');
  assert.equal(profile.device.is_saved, false);
  assert.equal(profile.device.last_scan_id, first.scan_id);
  assert.equal(profile.latest_metrics.page_count, 7432);

  // Progress events ended with the final state, and each printer was announced.
  const updates = events.filter((e) => e.event === 'discovery_update' && e.data.scan_id === first.scan_id);
  assert.equal(updates.at(-1)!.data.state, 'done');
  assert.equal(updates.at(-1)!.data.found, PRINTERS.length);
  const announced = new Set(events.filter((e) => e.event === 'device_change' && e.data.change === 'discovered').map((e) => e.data.serial));
  for (const p of PRINTERS) assert.ok(announced.has(p.serial), p.serial);
});

test('a person-set location survives re-discovery; saving moves a device to the saved list', async () => {
  expectJson(await agent.post('/devices/update', { serial: 'VD21457943', location: 'Reception', asset_number: 'A-17' }));
  expectJson(await agent.post('/devices/save', { serial: 'VD21457943' }));
  expectJson(await agent.post('/discover', {}), 202);
  await until('scan end', async () => ((expectJson(await agent.get('/discover')) as any).state === 'running' ? undefined : true));
  const profile = expectJson(await agent.get('/api/devices/profile?serial=VD21457943')) as any;
  assert.equal(profile.device.location, 'Reception');
  assert.equal(profile.device.asset_number, 'A-17');
  assert.ok(profile.device.locked_fields.some((l: any) => l.field === 'location'));
  assert.equal(profile.device.is_saved, true);
  const saved = expectJson(await agent.get('/devices/list')) as any[];
  assert.ok(saved.some((d) => d.serial === 'VD21457943' && d.location === 'Reception'));
  const discovered = expectJson(await agent.get('/devices/discovered')) as any[];
  assert.ok(!discovered.some((d) => d.serial === 'VD21457943'));
});

test('collect reads moving counters between two polls', async () => {
  const first = expectJson(await agent.post('/devices/metrics/collect', { serial: 'VD21457943' })) as any;
  assert.equal(first.page_count, 7432);
  const moved = join(sim.workDir, 'moved.snmprec');
  writeMovedCounters(fixturePath('printmaster/kyocera_p2040.snmprec'), moved, 250);
  sim.switchRecording('127.0.1.1', moved);
  const second = expectJson(await agent.post('/devices/metrics/collect', { serial: 'VD21457943' })) as any;
  assert.equal(second.page_count, 7432 + 250);
  assert.ok(second.id > first.id);
  const latest = expectJson(await agent.get('/api/devices/metrics/latest?serial=VD21457943')) as any;
  assert.equal(latest.page_count, 7682);
});

test('a saved device that stops answering is marked, not deleted', async () => {
  expectTextError(await agent.post('/devices/metrics/collect', { serial: SILENT_SAVED }), 504, `device ${SILENT_SAVED} did not answer at 127.0.1.39`);
  const profile = expectJson(await agent.get(`/api/devices/profile?serial=${SILENT_SAVED}`)) as any;
  assert.match(profile.device.status_messages[0], /^not answering since \d{4}-\d\d-\d\dT[0-9:.]+Z: /);
  assert.equal(profile.latest_metrics.page_count, 5);
});

test('device management bodies are validated and errors change nothing', async () => {
  expectTextError(await agent.post('/devices/save', { serial: 'NOPE' }), 404, 'no device with serial "NOPE"');
  expectTextError(await agent.post('/devices/save', {}), 400, 'missing field serial');
  expectTextError(await agent.post('/devices/update', { serial: 'RH28Y00024', colour: 'red' }), 400, 'unknown field colour');
  expectTextError(await agent.post('/devices/update', { serial: 'RH28Y00024', location: 5 }), 400, 'field location must be a string');
  const bad = await agent.request('/devices/save', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"serial": ' });
  assert.equal(bad.status, 400);
  assert.match(bad.body, /^malformed JSON body/);
  const wrongType = await agent.request('/devices/save', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'serial=x' });
  assert.equal(wrongType.status, 415);
});

test('settings: a bad field is named and nothing changes; changes persist', async () => {
  const before = expectJson(await agent.get('/settings')) as any;
  expectTextError(await agent.post('/settings', { discovery: { discover_concurrency: 0, subnet_scan: true } }), 400, 'discovery.discover_concurrency must be an integer from 1 to 256');
  const tooWide = await agent.post('/settings', { discovery: { ranges_text: '127.0.0.1\n127.0.0.0/8' } });
  assert.equal(tooWide.status, 400);
  assert.match(tooWide.body, /^discovery\.ranges_text: line 2: .*4096/);
  assert.deepEqual(expectJson(await agent.get('/settings')), before);
  // The deprecated endpoint still works and writes the same setting.
  expectJson(await agent.post('/settings/subnet_scan', { subnet_scan: false }));
  assert.equal((expectJson(await agent.get('/settings')) as any).discovery.subnet_scan, false);
  expectTextError(await agent.get('/saved_ranges'), 410, 'gone: /saved_ranges was removed; use /settings, field discovery.ranges_text');
  expectTextError(await agent.get('/mib_walk'), 410, 'gone: /mib_walk was removed; discovery reads printers itself, configure it through /settings');
});

test('delete removes the device and all its history', async () => {
  expectJson(await agent.post('/devices/delete', { serial: 'RH28Y00024' }));
  expectTextError(await agent.get('/api/devices/profile?serial=RH28Y00024'), 404, 'not found');
  expectTextError(await agent.get('/api/devices/metrics/bounds?serial=RH28Y00024'), 404, 'no metrics found');
  await until('deleted event', async () => events.find((e) => e.event === 'device_change' && e.data.serial === 'RH28Y00024' && e.data.change === 'deleted'));
});

test('logs: recent records by level and tail; bad parameters are 400', async () => {
  const logs = expectJson(await agent.get('/logs?level=info&tail=500')) as any[];
  assert.ok(logs.some((l) => l.msg === 'discovery done'));
  assert.ok(logs.every((l) => ['info', 'warn', 'error', 'fatal'].includes(l.level)));
  assert.equal((expectJson(await agent.get('/logs?tail=1')) as any[]).length, 1);
  expectTextError(await agent.get('/logs?level=loud'), 400, 'invalid level parameter (use debug, info, warn, error)');
  expectTextError(await agent.get('/logs?tail=-3'), 400, 'invalid tail parameter (use an integer from 1 to 2000)');
  const file = await agent.get('/logfile');
  assert.equal(file.status, 200);
  assert.match(String(file.headers['content-disposition']), /attachment/);
});

test('every event the stream carried is described in docs/openapi.yaml (x-events)', () => {
  const kinds = new Set(events.map((e) => e.event));
  for (const kind of ['connected', 'discovery_update', 'device_change']) assert.ok(kinds.has(kind), `saw ${kind}`);
  assert.deepEqual(events.map((e) => eventProblem(e.event, e.data)).filter(Boolean), []);
});
