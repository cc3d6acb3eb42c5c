// The box against PrintMaster's own central server (../shared/tools/printmaster-server), the real
// peer of server-protocol.md, over real HTTPS and WebSocket on loopback: enrollment,
// the device and every reading with its own time, the server's commands, and deletes both ways.
// A real printer (a Kyocera recording served by snmpsim) gives the box real readings; seeded
// readings an hour apart give it a history to send.
import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { startAgent, stopAll, type Agent } from '../../kit/agent.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { HOUR, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';
import {
  assertSameReadings, boxReadings, findAndSave, linkOf, postJson, primaryAddress, protocolComplaints, serverReadings, until, type Json,
} from '../../kit/pm-checks.js';

const why = printmasterUnavailable() ?? ensureSnmpsim();

const PRINTER = { address: '127.0.4.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' };
/** Seeded devices (never polled: not saved), each with readings an hour apart. */
const SEEDED = ['PM-SEED-1', 'PM-SEED-2'];

describe('PrintMaster server', { skip: why ?? false }, () => {
  let pm: PmServer;
  let sim: SnmpSim;
  let agent: Agent;
  let agentId = '';
  const start = nowSeconds() - 4 * HOUR;

  before(async () => {
    [pm, sim] = await Promise.all([startPrintmaster(), startSnmpSim({ endpoints: [{ address: PRINTER.address, recording: fixturePath(PRINTER.file) }] })]);
    agent = await startAgent({
      serverUrl: pm.url,
      server: { enrollment_token: pm.token, ca_file: pm.caFile, upload_interval_ms: 0 },
      seed: ndjson(
        SEEDED.flatMap((serial, k) => [
          device(serial, { ip: `127.0.4.${50 + k}`, model: 'ECOSYS P2040dw', manufacturer: 'Kyocera' }),
          ...[0, 1, 2, 3].map((h) => metrics(serial, 'raw', start + h * HOUR + k * 1000, { page_count: 1000 + h, copy_pages: 400 + h, toner_levels: { black: 90 - h } })),
        ]),
      ),
    });
    // The real printer: found by discovery over SNMP and saved.
    await findAndSave(agent, sim.port, PRINTER.address, PRINTER.serial);
    agentId = String((await linkOf(agent)).agent_id);
  });
  after(async () => {
    await stopAll();
    await Promise.all([pm?.kill(), sim?.stop()]);
  });

  test('the box enrolls with the join token: the server knows its hostname, address, platform and version', async () => {
    const row = await until('the agent in the server\'s table', () =>
      pm.query<Json>('SELECT agent_id, hostname, ip, platform, version, tenant_id FROM agents WHERE agent_id = ?', agentId)[0]);
    const version = (JSON.parse((await agent.get('/api/version')).body) as { version: string }).version;
    assert.equal(row.hostname, os.hostname());
    assert.equal(row.ip, primaryAddress(), 'the address registration gave is kept through heartbeats (each one overwrites it)');
    assert.equal(row.platform, 'linux');
    assert.equal(row.version, version);
    assert.equal(row.tenant_id, pm.tenant, 'in the join token\'s tenant');
    const list = await pm.api('GET', '/api/v1/agents/list');
    assert.equal(list.status, 200, list.text);
    const listed = (list.json as Json[]).find((a) => a.agent_id === agentId);
    assert.ok(listed, `the agents list has ${agentId}: ${list.text.slice(0, 500)}`);
    assert.equal(listed.hostname, os.hostname());
    assert.equal((await linkOf(agent)).state, 'online');
  });

  test('the devices and every reading reach the server, each once, at its own time', async () => {
    const serials = [PRINTER.serial, ...SEEDED];
    await until('every device on the server', () => {
      const have = new Set(pm.query<{ serial: string }>('SELECT serial FROM devices').map((d) => d.serial));
      return serials.every((s) => have.has(s));
    });
    const printer = pm.query<Json>('SELECT agent_id, ip, manufacturer, model FROM devices WHERE serial = ?', PRINTER.serial)[0];
    assert.equal(printer.agent_id, agentId);
    assert.equal(printer.ip, PRINTER.address);
    assert.match(String(printer.model), /P2040/);
    // Each device carries its supply forecast, which the server keeps whole in raw_data.
    const seededRaw = JSON.parse(String(pm.query<Json>('SELECT raw_data FROM devices WHERE serial = ?', SEEDED[0])[0].raw_data)) as Json;
    // ... and its latest counters, which the server's device table shows from there
    // (server/web/table-customizer.js: raw_data.page_count, raw_data.copy_pages ...).
    assert.equal(seededRaw.page_count, 1003);
    assert.equal(seededRaw.copy_pages, 403);
    assert.equal(Object.hasOwn(seededRaw, 'fax_pages'), false, 'a counter the readings do not have is not sent');
    const forecast = seededRaw.forecast as { supplies: Json[] };
    assert.ok(forecast, `raw_data has the forecast: ${JSON.stringify(seededRaw).slice(0, 500)}`);
    assert.equal(forecast.supplies.length, 1);
    assert.equal(forecast.supplies[0].name, 'black');
    assert.equal(forecast.supplies[0].level, 87);
    assert.equal(forecast.supplies[0].days_to_empty, null, 'four hours of history: no guess');
    assert.match(String(forecast.supplies[0].reason), /^not enough history/);
    await until('the backlog sent', async () => (await linkOf(agent)).backlog === 0);
    for (const serial of serials) {
      const box = boxReadings(agent, serial);
      await until(`${serial}'s readings on the server`, () => serverReadings(pm, serial).length >= box.length);
      assertSameReadings(serial, box, serverReadings(pm, serial));
    }
    // Readings an hour apart stay an hour apart (not all at the time of the batch that carried them).
    const seeded = serverReadings(pm, SEEDED[0]);
    assert.equal(seeded.length, 4);
    for (let i = 1; i < seeded.length; i++) assert.ok(seeded[i] - seeded[i - 1] > HOUR - 2 * 60_000, 'an hour apart');
    const pages = pm.query<{ page_count: number }>('SELECT page_count FROM metrics_history WHERE serial = ? ORDER BY timestamp', SEEDED[0]);
    assert.deepEqual(pages.map((p) => p.page_count), [1000, 1001, 1002, 1003], 'each row carries its own reading');
    const link = await linkOf(agent);
    assert.equal(link.last_error, undefined, `no upload failed: ${String(link.last_error)}`);
  });

  test('the server\'s collect command makes a new reading, which arrives', async () => {
    await until('the channel up', async () => (await linkOf(agent)).channel_connected === true);
    const before = boxReadings(agent, PRINTER.serial).length;
    const r = await pm.api('POST', `/api/v1/agents/command/${agentId}`, { command: 'collect' });
    assert.equal(r.status, 200, r.text);
    await until('a new reading on the box', () => boxReadings(agent, PRINTER.serial).length > before, 60_000);
    const box = boxReadings(agent, PRINTER.serial);
    await until('it on the server', () => serverReadings(pm, PRINTER.serial).length >= box.length);
    assertSameReadings(PRINTER.serial, box, serverReadings(pm, PRINTER.serial));
  });

  test('the server\'s "collect metrics" button: the box answers a job at once (async=true), the reading follows', async () => {
    const before = boxReadings(agent, PRINTER.serial).length;
    // The server's own route, which asks the box with ?async=true through the channel.
    const r = await pm.api('POST', '/devices/metrics/collect', { serial: PRINTER.serial });
    assert.equal(r.status, 202, r.text);
    assert.match(String(r.json?.job_id), /^[0-9a-f-]{36}$/, r.text);
    await until('the reading on the box', () => boxReadings(agent, PRINTER.serial).length > before, 60_000);
    const box = boxReadings(agent, PRINTER.serial);
    await until('it on the server', () => serverReadings(pm, PRINTER.serial).length >= box.length);
    assertSameReadings(PRINTER.serial, box, serverReadings(pm, PRINTER.serial));
  });

  test('deletes both ways: the server\'s reaches the box (not echoed back), the box\'s reaches the server', async () => {
    const onBox = async () => (JSON.parse((await agent.get('/devices/list')).body) as Json[]).map((d) => d.serial);
    const onServer = () => pm.query<{ serial: string }>('SELECT serial FROM devices').map((d) => d.serial);
    // The server's own delete button: from the server and from the box.
    const r = await pm.api('POST', '/api/v1/devices/delete', { serial: SEEDED[1], delete_from_agent: true });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.deleted_from_agent, true, r.text);
    assert.ok(!(await onBox()).includes(SEEDED[1]), 'deleted on the box');
    assert.ok(!onServer().includes(SEEDED[1]), 'deleted on the server');
    // The box's own delete: the server follows (device_deleted).
    const local = await postJson(agent, '/devices/delete', { serial: SEEDED[0] });
    assert.equal(local.status, 200, local.body);
    await until('the box\'s delete on the server', () => !onServer().includes(SEEDED[0]));
    // Frames arrive in order: had the box echoed the server's delete, that frame came first.
    const synced = pm.log().split('\n').filter((l) => l.includes('Agent deleted device'));
    assert.ok(synced.some((l) => l.includes(SEEDED[0])));
    assert.ok(!synced.some((l) => l.includes(SEEDED[1])), `the server's own delete was not echoed back: ${synced.join('\n')}`);
    assert.ok(onServer().includes(PRINTER.serial), 'the other device stays');
  });

  test('nothing the box sent made the server complain (no command_result, no bad bodies)', () => {
    assert.deepEqual(protocolComplaints(pm.log()), []);
  });

  // Near the end: the server refuses (and logs) a reading of a device it no longer holds.
  test('a device deleted on the server alone comes back with the box\'s next reading, which is not lost', async () => {
    const onServer = () => pm.query<{ serial: string }>('SELECT serial FROM devices WHERE serial = ?', PRINTER.serial).length > 0;
    const r = await pm.api('POST', '/api/v1/devices/delete', { serial: PRINTER.serial, delete_from_agent: false });
    assert.equal(r.status, 200, r.text);
    assert.equal(onServer(), false);
    const before = boxReadings(agent, PRINTER.serial).length;
    assert.equal((await pm.api('POST', `/api/v1/agents/command/${agentId}`, { command: 'collect' })).status, 200);
    await until('a new reading on the box', () => boxReadings(agent, PRINTER.serial).length > before, 60_000);
    const latest = boxReadings(agent, PRINTER.serial).at(-1)!;
    // The server answers 200 with a lower `stored`: the box sends the device again, then the reading.
    await until('the device back on the server', onServer, 60_000);
    await until('the new reading on the server', () => serverReadings(pm, PRINTER.serial).some((t) => Math.abs(t - latest) <= 60_000), 60_000);
    await until('the link without an upload error', async () => (await linkOf(agent)).upload_error === undefined);
  });

  test('a managed setting changed on the server applies on the box; one the box cannot apply is reported', async () => {
    const put = await pm.api('PUT', `/api/v1/settings/tenants/${pm.tenant}`, { snmp: { timeout_ms: 3500 }, features: { epson_remote_mode_enabled: true } });
    assert.equal(put.status, 200, put.text);
    // No restart: the box's next periodic heartbeat (every 60 s) brings the changed snapshot.
    const link = await until('the managed settings applied on the box', async () => {
      const s = JSON.parse((await agent.get('/settings')).body) as { discovery: { snmp_timeout_ms: number }; server: { link: Json } };
      return s.discovery.snmp_timeout_ms === 3500 ? s.server.link : undefined;
    }, 150_000);
    assert.match(String(link.settings_version), /^[0-9a-f]{64}$/, 'the server\'s own version, kept as it is');
    assert.ok((link.settings_unmapped as string[] | undefined)?.some((f) => f.startsWith('features.epson_remote_mode_enabled')), JSON.stringify(link));
  });
});
