// Alerts through the real agent: real polls (POST /devices/metrics/collect) of a
// printer served by snmpsim over UDP on loopback, whose recording is switched between polls to a
// low toner level, a level flickering above the threshold, a jam, and back. Nothing leaves
// 127.0.0.0/8.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { startSnmpSim, fixturePath, type SnmpSim } from '../../kit/snmpsim.js';
import { device, ndjson, HOUR } from '../../kit/seed.js';
import { eventProblem } from '../../kit/openapi.js';
import { openEventStream } from '../../kit/events.js';
import { until } from '../../kit/until.js';

const ADDRESS = '127.0.36.1';
const RECORDING = 'printmaster/kyocera_p2040.snmprec';
const SERIAL = 'VD21457943';
// prtMarkerSuppliesMaxCapacity.1.1 is 7200 in the recording; the level is set against it.
const LEVEL_OID = '1.3.6.1.2.1.43.11.1.1.9.1.1';
const ERROR_STATE_OID = '1.3.6.1.2.1.25.3.5.1.2.1';
const SILENT = 'SILENT-ALERT-1';

let sim: SnmpSim;
let agent: Agent;
const events: { event: string; data: any }[] = [];
let sse: ReturnType<typeof openEventStream> | undefined;



/** The recording with the black toner at `percent` and hrPrinterDetectedErrorState set to `errorState` (hex). */
function serve(percent: number, errorState = '00'): void {
  const file = join(sim.workDir, `variant-${percent}-${errorState}.snmprec`);
  const text = readFileSync(fixturePath(RECORDING), 'utf8')
    .split('\n')
    .map((l) => (l.startsWith(`${LEVEL_OID}|`) ? `${LEVEL_OID}|2|${Math.round((7200 * percent) / 100)}` : l.startsWith(`${ERROR_STATE_OID}|`) ? `${ERROR_STATE_OID}|4x|${errorState}` : l))
    .join('\n');
  writeFileSync(file, text);
  chmodSync(file, 0o644);
  sim.switchRecording(ADDRESS, file);
}

/** A real poll; returns the black toner level it read. */
async function poll(): Promise<number> {
  const r = expectJson(await agent.post('/devices/metrics/collect', { serial: SERIAL })) as any;
  return r.toner_levels?.black;
}

const alerts = async (query = '') => expectJson(await agent.get(`/api/alerts${query}`)) as any[];
const ofPrinter = (list: any[]) => list.filter((a) => a.serial === SERIAL);

before(async () => {
  sim = await startSnmpSim({ endpoints: [{ address: ADDRESS, recording: fixturePath(RECORDING), switchable: true }] });
  // A saved printer last seen two hours ago: offline (default 60 minutes) as soon as the agent starts.
  agent = await startAgent({ seed: ndjson([device(SILENT, { ip: '127.0.36.200', is_saved: true, last_seen: Date.now() - 2 * HOUR })]) });
  sse = openEventStream(agent.httpsPort, (event, data) => events.push({ event, data }));
  expectJson(
    await agent.post('/settings', {
      discovery: { manual_ranges: true, ranges_text: ADDRESS, allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 1500, subnet_scan: false },
      snmp: { port: sim.port, communities: ['public'] },
      // No forecast rule here: the printer has minutes of history (unit tests cover the rule).
      alerts: { supply_empty_within_days: 0 },
    }),
  );
  expectJson(await agent.post('/discover', {}), 202);
  await until('the scan to find the printer', async () => ((expectJson(await agent.get('/discover')) as any).state === 'running' ? undefined : true));
  expectJson(await agent.post('/devices/save', { serial: SERIAL }));
});

after(async () => {
  sse?.destroy();
  await agent?.stop();
  await sim?.stop();
});

test('the rules are settings: defaults shown, a bad value is a 400 naming the field and changes nothing', async () => {
  const s = expectJson(await agent.get('/settings')) as any;
  assert.deepEqual(s.alerts, {
    supply_below_percent: 15, supply_empty_within_days: 0, jam: true, door_open: true, paper_out: true, service_requested: true, offline_after_minutes: 60, counter_backwards: true,
  });
  expectTextError(await agent.post('/settings', { alerts: { supply_below_percent: 101 } }), 400, 'alerts.supply_below_percent must be an integer from 0 to 100');
  expectTextError(await agent.post('/settings', { alerts: { jam: 'yes' } }), 400, 'alerts.jam must be true or false');
  expectTextError(await agent.post('/settings', { alerts: { flood: true } }), 400, 'unknown setting alerts.flood');
  assert.deepEqual((expectJson(await agent.get('/settings')) as any).alerts, s.alerts);
});

test('a saved printer silent past offline_after_minutes has an offline alert from the start', async () => {
  const offline = await until('offline alert', async () => (await alerts()).find((a) => a.serial === SILENT && a.kind === 'offline'));
  assert.equal(offline.severity, 'critical');
  assert.match(offline.message, /^not answering for 1[12]\d minutes$/);
  assert.equal(offline.cleared_at, null);
});

test('a full toner opens nothing; a low one opens one supply_low alert, with an alert event', async () => {
  serve(98);
  assert.equal(await poll(), 98);
  assert.deepEqual(ofPrinter(await alerts()), []);
  serve(10);
  assert.equal(await poll(), 10);
  const low = await until('supply_low alert', async () => ofPrinter(await alerts()).find((a) => a.kind === 'supply_low'));
  assert.equal(low.supply, 'black');
  assert.equal(low.severity, 'warning');
  assert.match(low.message, /^black at 10% \(below 15%\)$/);
  assert.equal(low.acknowledged_at, null);
  const ev = await until('alert event', async () => events.find((e) => e.event === 'alert' && e.data.id === low.id && e.data.change === 'opened'));
  assert.equal(eventProblem('alert', ev.data), null);
});

test('a level flickering above the threshold (but under threshold + 5) keeps the one alert open', async () => {
  const [before] = ofPrinter(await alerts());
  for (const level of [17, 12, 19]) {
    serve(level);
    assert.equal(await poll(), level);
  }
  const after = ofPrinter(await alerts());
  assert.deepEqual(after.map((a) => a.id), [before.id], 'the same alert, never cleared nor opened again');
  assert.equal(after[0].cleared_at, null);
  assert.equal((await alerts('?all=true')).filter((a) => a.serial === SERIAL).length, 1, 'no cleared alert in the history');
});

test('a jam opens a critical alert listed first; acknowledging works once, with 400 and 404 for bad ids', async () => {
  serve(19, '04'); // hrPrinterDetectedErrorState bit 5: jammed
  await poll();
  const jam = await until('jam alert', async () => ofPrinter(await alerts()).find((a) => a.kind === 'jam'));
  assert.equal(jam.severity, 'critical');
  assert.match(jam.message, /^paper jam: Paper jam$/);
  assert.equal(ofPrinter(await alerts())[0].id, jam.id, 'newest open first');

  const low = ofPrinter(await alerts()).find((a) => a.kind === 'supply_low');
  const acked = expectJson(await agent.post('/api/alerts/acknowledge', { id: low.id })) as any;
  assert.equal(acked.id, low.id);
  assert.match(acked.acknowledged_at, /^\d{4}-\d\d-\d\dT/);
  assert.equal(acked.cleared_at, null, 'acknowledged is still open');
  const again = expectJson(await agent.post('/api/alerts/acknowledge', { id: low.id })) as any;
  assert.equal(again.acknowledged_at, acked.acknowledged_at, 'the first acknowledgement counts');
  await until('acknowledged event', async () => events.find((e) => e.event === 'alert' && e.data.id === low.id && e.data.change === 'acknowledged'));
  assert.equal(events.filter((e) => e.event === 'alert' && e.data.id === low.id && e.data.change === 'acknowledged').length, 1);

  expectTextError(await agent.post('/api/alerts/acknowledge', { id: '1' }), 400, 'field id must be a positive integer');
  expectTextError(await agent.post('/api/alerts/acknowledge', { id: 0 }), 400, 'field id must be a positive integer');
  expectTextError(await agent.post('/api/alerts/acknowledge', {}), 400, 'field id must be a positive integer');
  expectTextError(await agent.post('/api/alerts/acknowledge', { id: low.id, note: 'x' }), 400, 'unknown field note');
  expectTextError(await agent.post('/api/alerts/acknowledge', { id: 999_999 }), 404, 'no alert with id 999999');
  expectTextError(await agent.get('/api/alerts?limit=0'), 400, 'limit must be an integer from 1 to 5000');
  expectTextError(await agent.get('/api/alerts?all=yes'), 400, 'all must be true or false');
  // Nothing the refused requests asked for changed.
  assert.equal(ofPrinter(await alerts()).find((a) => a.kind === 'jam').acknowledged_at, null);
});

test('the level 5 points above the threshold and the jam cleared: both alerts clear and stay in the history', async () => {
  const open = ofPrinter(await alerts());
  serve(20);
  assert.equal(await poll(), 20);
  await until('alerts cleared', async () => (ofPrinter(await alerts()).length === 0 ? true : undefined));
  const history = ofPrinter(await alerts('?all=true'));
  assert.deepEqual(history.map((a) => a.id).sort(), open.map((a) => a.id).sort());
  for (const a of history) assert.match(a.cleared_at, /^\d{4}-\d\d-\d\dT/);
  assert.ok(history.find((a) => a.kind === 'supply_low').acknowledged_at, 'the acknowledgement is kept');
  for (const a of open) await until(`cleared event for ${a.id}`, async () => events.find((e) => e.event === 'alert' && e.data.id === a.id && e.data.change === 'cleared'));
  // Open alerts (the silent printer's) come before cleared ones.
  const all = await alerts('?all=true');
  const firstCleared = all.findIndex((a) => a.cleared_at !== null);
  assert.ok(all.slice(firstCleared).every((a) => a.cleared_at !== null));
  assert.equal((await alerts('?all=true&limit=1')).length, 1);
});

test('low again: a new alert opens; turning the rule off clears it, turning it on opens one at once', async () => {
  const before = ofPrinter(await alerts('?all=true')).map((a) => a.id);
  serve(5);
  await poll();
  const low = await until('a new supply_low alert', async () => ofPrinter(await alerts()).find((a) => a.kind === 'supply_low'));
  assert.ok(!before.includes(low.id));
  expectJson(await agent.post('/settings', { alerts: { supply_below_percent: 0 } }));
  await until('cleared by the rule turned off', async () => (ofPrinter(await alerts()).length === 0 ? true : undefined));
  // Turned on again, it is judged at once against the stored reading (5%), without a poll.
  expectJson(await agent.post('/settings', { alerts: { supply_below_percent: 15 } }));
  const again = await until('opened by the rule turned on', async () => ofPrinter(await alerts()).find((a) => a.kind === 'supply_low'));
  assert.notEqual(again.id, low.id);
  assert.match(again.message, /^black at 5% /);
});
