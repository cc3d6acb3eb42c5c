// POST /devices/preview and POST /api/report[/stream]: the central server's
// "Refresh details" and "Report a problem" buttons, against a real printer's recording served by
// snmpsim on loopback, directly and through PrintMaster's own server as its UI asks for them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectJson, expectTextError, startAgent, type Agent, type Res } from '../../kit/agent.js';
import { fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { HOUR, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { connectedAgentId, serverKnowsDevice } from '../../kit/pm-agent.js';

const PRINTER = { address: '127.0.31.1', serial: 'VD21457943', file: 'printmaster/kyocera_p2040.snmprec' };
const SILENT = '127.0.31.9';
const now = nowSeconds();
const SEED = ndjson([
  device(PRINTER.serial, { ip: PRINTER.address, is_saved: true, manufacturer: 'Kyocera', model: 'old model name', location: 'hall' }),
  ...[3, 2, 1].map((h) => metrics(PRINTER.serial, 'raw', now - h * HOUR, { page_count: 7000 + h })),
  device('SILENT-1', { ip: SILENT, is_saved: true }),
  device('USB-2', { ip: '', is_saved: true, is_usb: true, device_type: 'usb', source_type: 'usb' }),
]);

const postJson = (agent: Agent, path: string, body: unknown): Promise<Res> =>
  agent.request(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** Server-Sent Events of a finished stream, in order. */
function events(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? '';
      return { event, data: JSON.parse(data) };
    });
}

let sim: SnmpSim;
before(async () => {
  sim = await startSnmpSim({ endpoints: [{ address: PRINTER.address, recording: fixturePath(PRINTER.file) }] });
});
after(async () => {
  await sim?.stop();
});

async function boxReadingTheSim(opts: Parameters<typeof startAgent>[0] = {}): Promise<Agent> {
  const agent = await startAgent({ seed: SEED, ...opts });
  const set = await postJson(agent, '/settings', {
    discovery: { allowed_ranges: ['127.0.31.0/24'], snmp_timeout_ms: 800 },
    snmp: { port: sim.port, communities: ['public'] },
  });
  expectJson(set);
  return agent;
}

describe('on the box', () => {
  let agent: Agent;
  before(async () => {
    agent = await boxReadingTheSim();
  });
  after(async () => {
    await agent?.stop();
  });

  test('POST /devices/preview reads the printer now and writes nothing', async () => {
    const before = [await agent.get(`/api/devices/profile?serial=${PRINTER.serial}`), await agent.get(`/api/devices/metrics/bounds?serial=${PRINTER.serial}`)].map((r) => r.body);
    const r = expectJson(await postJson(agent, '/devices/preview', { serial: PRINTER.serial })) as { proposed: Record<string, unknown> };
    assert.equal(r.proposed.ip, PRINTER.address);
    assert.equal(r.proposed.manufacturer, 'Kyocera');
    assert.equal(r.proposed.model, 'ECOSYS P2040dw', 'what the printer says now, not the record');
    assert.match(String(r.proposed.description), /KYOCERA/);
    const afterwards = [await agent.get(`/api/devices/profile?serial=${PRINTER.serial}`), await agent.get(`/api/devices/metrics/bounds?serial=${PRINTER.serial}`)].map((x) => x.body);
    assert.deepEqual(afterwards, before, 'neither the record nor its readings changed');
    // By address alone, as the reference allows.
    const byIp = expectJson(await postJson(agent, '/devices/preview', { ip: PRINTER.address })) as { proposed: Record<string, unknown> };
    assert.equal(byIp.proposed.model, 'ECOSYS P2040dw');
  });

  test('POST /devices/preview refuses what it cannot read, naming why', async () => {
    expectTextError(await postJson(agent, '/devices/preview', { serial: 'NOPE' }), 404, 'no device with serial "NOPE"');
    expectTextError(await postJson(agent, '/devices/preview', {}), 400, 'ip required (or the serial of a known device)');
    expectTextError(await postJson(agent, '/devices/preview', { ip: 'printer.local' }), 400, 'field ip must be an IPv4 address, got "printer.local"');
    expectTextError(await postJson(agent, '/devices/preview', { serial: 5 }), 400, 'field serial must be a string');
    expectTextError(await postJson(agent, '/devices/preview', { serial: 'USB-2' }), 409, 'device "USB-2" is a USB printer: it is read through /devices/metrics/collect');
    expectTextError(await postJson(agent, '/devices/preview', { ip: '127.0.32.1' }), 403, 'SNMP target 127.0.32.1 is outside discovery.allowed_ranges');
    expectTextError(await postJson(agent, '/devices/preview', { serial: 'SILENT-1' }), 504, `no SNMP answer from ${SILENT}`);
    expectTextError(await postJson(agent, '/devices/preview', '{"serial":'), 400, 'malformed JSON body: Unexpected end of JSON input');
  });

  test('POST /api/report returns the report, with the record, its readings and the log, and sends it nowhere', async () => {
    const r = expectJson(
      await postJson(agent, '/api/report', { issue_type: 'wrong_model', expected_value: 'ECOSYS P2040dw', user_message: 'model is wrong', device_serial: PRINTER.serial, device_ip: PRINTER.address }),
    ) as any;
    assert.equal(r.fallback, true);
    assert.equal(r.success, false);
    assert.match(r.error, /^not sent: /);
    const rep = r.report;
    assert.match(rep.report_id, /^RPT-/);
    assert.equal(rep.issue_type, 'wrong_model');
    assert.equal(rep.user_message, 'model is wrong');
    assert.equal(rep.device_record.serial, PRINTER.serial);
    assert.equal(rep.device_record.location, 'hall');
    assert.deepEqual(rep.metrics_history.map((m: any) => m.page_count), [7003, 7002, 7001]);
    assert.ok(rep.agent_logs.length > 0, 'the agent\'s recent log records');
    assert.equal(rep.snmp_responses, undefined, 'no SNMP read unless full_walk');
    const other = expectJson(await postJson(agent, '/api/report', { issue_type: 'something new' })) as any;
    assert.equal(other.report.issue_type, 'other', 'an unknown issue type is "other", as the reference does');
  });

  test('POST /api/report refuses a request without issue_type, or with a field of the wrong type', async () => {
    expectTextError(await postJson(agent, '/api/report', { device_serial: PRINTER.serial }), 400, 'issue_type is required');
    expectTextError(await postJson(agent, '/api/report', { issue_type: 'other', device_ip: 7 }), 400, 'field device_ip must be a string');
    expectTextError(await postJson(agent, '/api/report/stream', { issue_type: 'other', full_walk: 'yes' }), 400, 'field full_walk must be true or false');
  });

  test('POST /api/report/stream: progress events, the printer\'s SNMP values with full_walk, then complete', async () => {
    const r = await postJson(agent, '/api/report/stream', { issue_type: 'missing_toner', device_serial: PRINTER.serial, full_walk: true });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/event-stream; charset=utf-8');
    const evs = events(r.body);
    const stages = evs.filter((e) => e.event === 'progress').map((e) => e.data.stage);
    assert.deepEqual(stages, ['starting', 'connecting', 'walking', 'walked', 'building']);
    const walked = evs.find((e) => e.data.stage === 'walked')!.data;
    assert.ok(walked.oids_found > 50, `values read: ${walked.oids_found}`);
    const percents = evs.filter((e) => e.event === 'progress').map((e) => e.data.percent);
    assert.deepEqual([...percents].sort((a, b) => a - b), percents, 'progress only moves forward');
    const last = evs.at(-1)!;
    assert.equal(last.event, 'complete');
    assert.equal(last.data.fallback, true);
    const sysDescr = last.data.report.snmp_responses.find((s: any) => s.oid === '1.3.6.1.2.1.1.1.0');
    assert.match(sysDescr.value, /KYOCERA Document Solutions Printing System/);
    assert.equal(last.data.report.snmp_responses.length, walked.oids_found);
  });
});

const skipPm = printmasterUnavailable();
describe('through PrintMaster\'s own server, as its UI asks', { skip: skipPm ?? false }, () => {
  let pm: PmServer;
  let agent: Agent;
  before(async () => {
    pm = await startPrintmaster();
    agent = await boxReadingTheSim({ serverUrl: pm.url, server: { enrollment_token: pm.token, ca_file: pm.caFile } });
    const agentId = await connectedAgentId(pm);
    // The server sends a device's buttons to the agent it has on record for it (see pm-agent.ts).
    await serverKnowsDevice(pm, agent, agentId, { serial: PRINTER.serial, ip: PRINTER.address, manufacturer: 'Kyocera', model: 'old model name' });
  });
  after(async () => {
    await agent?.stop();
    await pm?.kill();
  });

  // What a browser on the server's page sends with a fetch() POST; the server passes it on.
  const browser = () => ({ Origin: pm.url, 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors' });

  test('the server\'s /devices/preview reaches the box and the printer', async () => {
    const r = await pm.api('POST', '/devices/preview', { serial: PRINTER.serial, ip: PRINTER.address }, browser());
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.proposed.model, 'ECOSYS P2040dw');
  });

  test('the server\'s /api/report and /api/report/stream answer with the box\'s report', async () => {
    const r = await pm.api('POST', '/api/report', { issue_type: 'wrong_model', device_serial: PRINTER.serial, device_ip: PRINTER.address }, browser());
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.fallback, true);
    assert.equal(r.json.report.device_record.serial, PRINTER.serial);
    assert.ok(Array.isArray(r.json.report.server_logs), 'the server adds its own log to a fallback report');
    const s = await pm.api('POST', '/api/report/stream', { issue_type: 'missing_toner', device_serial: PRINTER.serial, full_walk: true }, browser());
    assert.equal(s.status, 200, s.text);
    const evs = events(s.text);
    assert.equal(evs.at(-1)!.event, 'complete', s.text.slice(-500));
    assert.ok(evs.at(-1)!.data.report.snmp_responses.length > 50);
    assert.ok(evs.some((e) => e.event === 'progress' && e.data.stage === 'walked'), 'progress came through the server');
  });
});
