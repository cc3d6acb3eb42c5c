// Alerts from real polls of printers whose answers change, each as a real printer of
// its make says it: a real agent saves three recorded printers that snmpsim serves over UDP on
// loopback, then the test changes what they answer (variants of the recordings, written into
// snmpsim's data dir) and reads them with POST /devices/metrics/collect, the UI's "read now".
// - a colour Kyocera (kyocera_cs4053): magenta toner low, then a jam the Kyocera way (a prtAlert
//   row with code jam(8) and no description, and the hrPrinterDetectedErrorState jammed bit);
// - a Brother (printmaster/brother): the cover open the Brother way (its one prtAlert row, which
//   it uses as its panel's display, reads "Cover is Open" instead of "Sleep", alert code 0);
// - a mono Kyocera (kyocera_p2040) in a simulator of its own, stopped: the printer stops answering.
// offline_after_minutes is set to 1, the smallest it takes; the minute runs while the other
// printers are tested. Nothing leaves 127.0.0.0/8.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent, expectJson, expectTextError, type Agent } from '../../kit/agent.js';
import { startSnmpSim, fixturePath, type SnmpSim } from '../../kit/snmpsim.js';
import { deriveSnmprec } from '../../kit/snmprec.js';
import { eventProblem } from '../../kit/openapi.js';
import { openEventStream } from '../../kit/events.js';
import { until } from '../../kit/until.js';

const KYOCERA = { address: '127.0.38.1', recording: 'printmaster/kyocera_cs4053.snmprec', serial: 'RH28Y00024' };
const BROTHER = { address: '127.0.38.2', recording: 'printmaster/brother.snmprec', serial: 'U64641E7J134163' };
const SILENT = { address: '127.0.38.3', recording: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' };

// prtMarkerSuppliesLevel of the magenta toner (TK-8527M); its prtMarkerSuppliesMaxCapacity is 15000.
const MAGENTA_LEVEL = '1.3.6.1.2.1.43.11.1.1.9.1.2';
const MAGENTA_MAX = 15000;
const ERROR_STATE = '1.3.6.1.2.1.25.3.5.1.2.1'; // hrPrinterDetectedErrorState
const ALERT = '1.3.6.1.2.1.43.18.1.1'; // prtAlertEntry
const THRESHOLD = 15; // alerts.supply_below_percent, the default
const CLEAR_MARGIN = 5; // model/alert-rules.ts SUPPLY_CLEAR_MARGIN

let sim: SnmpSim; // the Kyocera and the Brother
let silentSim: SnmpSim | undefined; // the printer that stops answering, alone so that it can be stopped
let agent: Agent;
const events: { event: string; data: any }[] = [];
let sse: ReturnType<typeof openEventStream> | undefined;
const started = Date.now();
/** Epoch ms just before the silent printer's last answered read, and its last_seen after it. */
let lastAnswerNotBefore = 0;
let lastAnswer = 0;


/** Serves `printer` a variant of its recording (`changes`: OID -> "TAG|VALUE", or null to drop it). */
function serve(printer: typeof KYOCERA, name: string, changes: Record<string, string | null>): void {
  const file = join(sim.workDir, `${printer.serial}-${name}.snmprec`);
  writeFileSync(file, deriveSnmprec(readFileSync(fixturePath(printer.recording), 'utf8'), changes));
  chmodSync(file, 0o644);
  sim.switchRecording(printer.address, file);
}

/** The Kyocera with magenta at `percent`, jammed or not. */
function serveKyocera(percent: number, jammed = false): void {
  const level = { [MAGENTA_LEVEL]: `2|${Math.round((MAGENTA_MAX * percent) / 100)}` };
  // A jam as a Kyocera reports it: the jammed bit (5) and a critical alert row in the mediaPath
  // group with code jam(8) and an empty description, beside its recorded rows 2 and 1835.
  const jam = {
    [ERROR_STATE]: '4x|04',
    [`${ALERT}.2.1.1836`]: '2|3',
    [`${ALERT}.3.1.1836`]: '2|3',
    [`${ALERT}.4.1.1836`]: '2|13',
    [`${ALERT}.5.1.1836`]: '2|1',
    [`${ALERT}.6.1.1836`]: '2|0',
    [`${ALERT}.7.1.1836`]: '2|8',
    [`${ALERT}.8.1.1836`]: '4|',
    [`${ALERT}.9.1.1836`]: '67|260405500',
  };
  serve(KYOCERA, `${percent}${jammed ? '-jam' : ''}`, jammed ? { ...level, ...jam } : level);
}

/** A real read of one printer; the snapshot answered. */
async function readNow(serial: string): Promise<any> {
  return expectJson(await agent.post('/devices/metrics/collect', { serial }));
}

const alerts = async (query = '') => expectJson(await agent.get(`/api/alerts${query}`)) as any[];
const ofPrinter = async (serial: string, query = '') => (await alerts(query)).filter((a) => a.serial === serial);
const eventsOf = (id: number, change: string) => events.filter((e) => e.event === 'alert' && e.data.id === id && e.data.change === change);

/** Waits for the one `alert` event of `change` for alert `id`, and checks it against docs/openapi.yaml. */
async function alertEvent(id: number, change: string): Promise<any> {
  const ev = await until(`alert event ${change} for ${id}`, () => eventsOf(id, change)[0]);
  assert.equal(eventProblem('alert', ev.data), null);
  assert.equal(eventsOf(id, change).length, 1, `one ${change} event for ${id}`);
  return ev.data;
}

before(async () => {
  sim = await startSnmpSim({
    endpoints: [
      { address: KYOCERA.address, recording: fixturePath(KYOCERA.recording), switchable: true },
      { address: BROTHER.address, recording: fixturePath(BROTHER.recording), switchable: true },
    ],
  });
  // The same port on another address: snmp.port is one setting for every printer.
  silentSim = await startSnmpSim({ endpoints: [{ address: SILENT.address, recording: fixturePath(SILENT.recording) }], port: sim.port });
  agent = await startAgent();
  sse = openEventStream(agent.httpsPort, (event, data) => events.push({ event, data }));
  expectJson(
    await agent.post('/settings', {
      discovery: { manual_ranges: true, ranges_text: '127.0.38.1-3', allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 1500, subnet_scan: false },
      snmp: { port: sim.port, communities: ['public'] },
      // No forecast rule: the printers have minutes of history (unit tests cover it).
      alerts: { supply_empty_within_days: 0, offline_after_minutes: 1 },
    }),
  );
  expectJson(await agent.post('/discover', {}), 202);
  await until('the scan to end', async () => ((expectJson(await agent.get('/discover')) as any).state === 'running' ? undefined : true));
  for (const p of [KYOCERA, BROTHER, SILENT]) expectJson(await agent.post('/devices/save', { serial: p.serial }));
});

after(async () => {
  sse?.destroy();
  await agent?.stop();
  await sim?.stop();
  await silentSim?.stop();
});

test('the printers as recorded open no alert; the third stops answering and is not offline before a minute', async () => {
  const k = await readNow(KYOCERA.serial);
  assert.equal(k.toner_levels.magenta, 32);
  // Its toners and waste box say only "some remaining" (-3, kept as the printer said it): no level, no alert.
  assert.deepEqual((await readNow(BROTHER.serial)).toner_levels, { black: -3, cyan: -3, magenta: -3, yellow: -3, waste_toner: -3, belt: 56, drum: 75 });
  lastAnswerNotBefore = Date.now();
  await readNow(SILENT.serial);
  await silentSim!.stop();
  silentSim = undefined;
  expectTextError(await agent.post('/devices/metrics/collect', { serial: SILENT.serial }), 504, `device ${SILENT.serial} did not answer at ${SILENT.address}`);
  const { device } = expectJson(await agent.get(`/api/devices/profile?serial=${SILENT.serial}`)) as any;
  assert.match(device.status_messages[0], /^not answering since \d{4}-\d\d-\d\dT[0-9:.]+Z: no SNMP answer$/);
  lastAnswer = Date.parse(device.last_seen);
  assert.ok(lastAnswer >= lastAnswerNotBefore, 'last_seen is the last answered read');
  assert.ok(Date.now() - lastAnswer < 60_000, 'checked within the minute');
  for (const p of [KYOCERA, BROTHER, SILENT]) assert.deepEqual(await ofPrinter(p.serial, '?all=true'), [], p.serial);
});

test('magenta lowered below the threshold: one supply_low alert, with one opened event; a second low poll opens no other', async () => {
  serveKyocera(10);
  assert.equal((await readNow(KYOCERA.serial)).toner_levels.magenta, 10);
  const low = await until('supply_low alert', async () => (await ofPrinter(KYOCERA.serial)).find((a) => a.kind === 'supply_low'));
  assert.equal(low.supply, 'magenta');
  assert.equal(low.severity, 'warning');
  assert.equal(low.message, `magenta at 10% (below ${THRESHOLD}%)`);
  assert.equal(low.acknowledged_at, null);
  const ev = await alertEvent(low.id, 'opened');
  assert.equal(ev.kind, 'supply_low');
  serveKyocera(9);
  assert.equal((await readNow(KYOCERA.serial)).toner_levels.magenta, 9);
  assert.deepEqual((await ofPrinter(KYOCERA.serial, '?all=true')).map((a) => a.id), [low.id]);
});

test('a Kyocera jam and a Brother cover open each open one critical alert, listed first, newest first', async () => {
  serveKyocera(9, true);
  await readNow(KYOCERA.serial);
  const jam = await until('jam alert', async () => (await ofPrinter(KYOCERA.serial)).find((a) => a.kind === 'jam'));
  assert.equal(jam.severity, 'critical');
  assert.equal(jam.message, 'paper jam: Paper jam');
  await alertEvent(jam.id, 'opened');

  // The Brother shows its panel in its one alert row: "Sleep" becomes "Cover is Open".
  serve(BROTHER, 'cover-open', { [`${ALERT}.8.1.1`]: '4|Cover is Open' });
  await readNow(BROTHER.serial);
  const door = await until('door_open alert', async () => (await ofPrinter(BROTHER.serial)).find((a) => a.kind === 'door_open'));
  assert.equal(door.severity, 'critical');
  assert.equal(door.message, 'door open: Cover is Open');
  await alertEvent(door.id, 'opened');

  const open = (await alerts()).filter((a) => a.serial !== SILENT.serial);
  assert.deepEqual(open.map((a) => a.kind), ['door_open', 'jam', 'supply_low'], 'newest open first');
  // Polled again, still jammed and open: nothing opened twice.
  await readNow(KYOCERA.serial);
  await readNow(BROTHER.serial);
  assert.deepEqual((await alerts('?all=true')).filter((a) => a.serial !== SILENT.serial).map((a) => a.id), open.map((a) => a.id));
});

test('acknowledging keeps an alert open, once, with one event', async () => {
  const jam = (await ofPrinter(KYOCERA.serial)).find((a) => a.kind === 'jam');
  const acked = expectJson(await agent.post('/api/alerts/acknowledge', { id: jam.id })) as any;
  assert.equal(acked.id, jam.id);
  assert.match(acked.acknowledged_at, /^\d{4}-\d\d-\d\dT/);
  assert.equal(acked.cleared_at, null);
  const again = expectJson(await agent.post('/api/alerts/acknowledge', { id: jam.id })) as any;
  assert.equal(again.acknowledged_at, acked.acknowledged_at, 'the first acknowledgement counts');
  const ev = await alertEvent(jam.id, 'acknowledged');
  assert.equal(ev.acknowledged_at, acked.acknowledged_at);
  // Still jammed: a poll leaves it open and acknowledged.
  await readNow(KYOCERA.serial);
  const still = (await ofPrinter(KYOCERA.serial)).find((a) => a.id === jam.id);
  assert.equal(still.acknowledged_at, acked.acknowledged_at);
});

test('back to normal: the jam and the cover clear at once, the low toner only at threshold + 5 (hysteresis)', async () => {
  const before = await ofPrinter(KYOCERA.serial);
  const low = before.find((a) => a.kind === 'supply_low');
  const jam = before.find((a) => a.kind === 'jam');
  serveKyocera(THRESHOLD + 1);
  assert.equal((await readNow(KYOCERA.serial)).toner_levels.magenta, THRESHOLD + 1);
  await alertEvent(jam.id, 'cleared');
  for (const level of [THRESHOLD + CLEAR_MARGIN - 1, THRESHOLD + 2]) {
    serveKyocera(level);
    assert.equal((await readNow(KYOCERA.serial)).toner_levels.magenta, level);
  }
  assert.deepEqual((await ofPrinter(KYOCERA.serial)).map((a) => a.id), [low.id], 'just above the threshold: still open');
  assert.equal(eventsOf(low.id, 'cleared').length, 0);
  serveKyocera(THRESHOLD + CLEAR_MARGIN);
  assert.equal((await readNow(KYOCERA.serial)).toner_levels.magenta, THRESHOLD + CLEAR_MARGIN);
  await alertEvent(low.id, 'cleared');
  assert.deepEqual(await ofPrinter(KYOCERA.serial), []);

  const door = (await ofPrinter(BROTHER.serial)).find((a) => a.kind === 'door_open');
  sim.switchRecording(BROTHER.address, fixturePath(BROTHER.recording));
  await readNow(BROTHER.serial);
  await alertEvent(door.id, 'cleared');
  assert.deepEqual(await ofPrinter(BROTHER.serial), []);

  const history = (await alerts('?all=true')).filter((a) => a.serial !== SILENT.serial);
  assert.deepEqual(history.map((a) => a.id).sort(), [low.id, jam.id, door.id].sort());
  for (const a of history) assert.match(a.cleared_at, /^\d{4}-\d\d-\d\dT/);
  assert.ok(history.find((a) => a.id === jam.id).acknowledged_at, 'the acknowledgement is kept');
});

test('the printer not answering: offline opens once a minute has passed, and clears at its next answer', async (t) => {
  // Read now every few seconds, as a person waiting at the UI would, until the minute has passed
  // and the alert opens (the agent's own once-a-minute silence check may open it first).
  let lastRead = 0;
  const offline = await until(
    'offline alert',
    async () => {
      if (Date.now() - lastRead >= 3000) {
        lastRead = Date.now();
        expectTextError(await agent.post('/devices/metrics/collect', { serial: SILENT.serial }), 504, `device ${SILENT.serial} did not answer at ${SILENT.address}`);
      }
      return (await ofPrinter(SILENT.serial)).find((a) => a.kind === 'offline');
    },
    150_000,
  );
  const silentFor = Date.parse(offline.opened_at) - lastAnswer;
  t.diagnostic(`offline opened ${(silentFor / 1000).toFixed(1)} s after the last answer`);
  assert.ok(silentFor >= 60_000, `opened ${offline.opened_at}, a minute after the last answer (${new Date(lastAnswer).toISOString()})`);
  assert.equal(offline.severity, 'critical');
  assert.equal(offline.message, 'not answering for 1 minute');
  await alertEvent(offline.id, 'opened');
  assert.equal((await alerts())[0].id, offline.id, 'the newest open alert first');
  const all = await alerts('?all=true');
  assert.equal(all[0].id, offline.id, 'open before cleared');
  assert.ok(all.slice(1).every((a) => a.cleared_at !== null));

  silentSim = await startSnmpSim({ endpoints: [{ address: SILENT.address, recording: fixturePath(SILENT.recording) }], port: sim.port });
  await readNow(SILENT.serial);
  await alertEvent(offline.id, 'cleared');
  assert.deepEqual(await ofPrinter(SILENT.serial), []);
});

after(() => {
  console.log(`# alerts-polled: ${((Date.now() - started) / 1000).toFixed(1)} s from start to end`);
});
