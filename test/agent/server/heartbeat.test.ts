// Registration and heartbeats over HTTP while the WebSocket is down, against PrintMaster's own
// server. The box reaches the server through an HTTPS relay
// (test/kit/pm-relay.ts) that refuses the WebSocket upgrade and passes every plain request
// through, so the only heartbeats the server can get are the HTTP ones, and the relay sees each
// answer's status. At first it refuses the heartbeat too: what the server then knows of the box
// came with its registration alone. Last, it loses the answer to one metrics batch.
import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { importNdjson, startAgent, stopAll, type Agent } from '../../kit/agent.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { startRelay, type Relay } from '../../kit/pm-relay.js';
import { assertSameReadings, boxReadings, linkOf, pmTime, primaryAddress, serverReadings, until, type Json } from '../../kit/pm-checks.js';
import { MINUTE, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';

const why = printmasterUnavailable();
const HEARTBEAT = '/api/v1/agents/heartbeat';
const METRICS = '/api/v1/metrics/batch';
const LOST = ['LOST-1', 'LOST-2'];
/** A saved printer silent for two hours: an offline alert from the agent's start. */
const SILENT = 'SILENT-HB-1';

describe('through a relay: registration, HTTP heartbeats with the WebSocket down, a lost answer', { skip: why ?? false }, () => {
  let pm: PmServer;
  let relay: Relay;
  let agent: Agent;

  before(async () => {
    pm = await startPrintmaster();
    relay = await startRelay(pm);
    relay.refused.add(HEARTBEAT);
    relay.captured.add(HEARTBEAT);
    agent = await startAgent({
      serverUrl: relay.url,
      server: { enrollment_token: pm.token, ca_file: pm.caFile },
      // Devices for the last test: on the server before any of their readings (it refuses a reading of a device it lacks).
      seed: ndjson([
        ...LOST.map((serial, k) => device(serial, { ip: `127.0.6.${50 + k}` })),
        device(SILENT, { ip: '127.0.6.60', is_saved: true, last_seen: Date.now() - 2 * 60 * MINUTE }),
      ]),
    });
  });
  after(async () => {
    await stopAll();
    await relay?.close();
    await pm?.kill();
  });

  test('registration alone tells the server the box\'s hostname, address, platform, version and system', async () => {
    const agentId = String(await until('registered', async () => {
      const l = await linkOf(agent);
      return l.registered === true ? l.agent_id : undefined;
    }));
    const row = pm.query<Json>(
      'SELECT hostname, ip, platform, version, protocol_version, os_version, architecture, tenant_id FROM agents WHERE agent_id = ?', agentId)[0];
    assert.ok(row, 'the agent is in the server\'s table');
    assert.ok(relay.requests.filter((r) => r.path === HEARTBEAT).every((r) => r.status === 503), 'no heartbeat reached the server yet');
    const version = (JSON.parse((await agent.get('/api/version')).body) as { version: string }).version;
    assert.equal(row.hostname, os.hostname());
    assert.equal(row.ip, primaryAddress());
    assert.equal(row.platform, 'linux');
    assert.equal(row.version, version);
    assert.equal(row.protocol_version, '1');
    assert.equal(row.os_version, os.release());
    assert.ok(row.architecture, 'architecture');
    assert.equal(row.tenant_id, pm.tenant);
    // From here on the heartbeats go through (a start sends one at once).
    relay.refused.delete(HEARTBEAT);
    await agent.restart();
  });

  /** The heartbeats the server answered (not those the relay refused). */
  const heartbeats = () => relay.requests.filter((r) => r.method === 'POST' && r.path === HEARTBEAT && r.status !== 0 && r.status !== 503);

  test('the server takes the HTTP heartbeat (2xx) and the box says so', async () => {
    const link = await until('a heartbeat acknowledged', async () => {
      const l = await linkOf(agent);
      return l.last_heartbeat_at ? l : undefined;
    });
    assert.equal(link.channel_connected, false);
    assert.equal(link.last_error, undefined, `no error: ${String(link.last_error)}`);
    assert.ok(relay.requests.some((r) => r.method === 'UPGRADE' && r.status === 503), 'the box tried the WebSocket and was refused');
    assert.ok(!relay.requests.some((r) => r.method === 'UPGRADE' && r.status === 101), 'no WebSocket got through');
    const hb = heartbeats();
    assert.ok(hb.length >= 1);
    for (const h of hb) assert.ok(h.status >= 200 && h.status < 300, `heartbeat answered ${h.status}`);
  });

  test('each heartbeat moves the agent\'s last_seen on the server', async () => {
    const agentId = String((await linkOf(agent)).agent_id);
    const seen = () => pm.query<{ last_seen: string; last_heartbeat: string }>('SELECT last_seen, last_heartbeat FROM agents WHERE agent_id = ?', agentId)[0];
    const before = seen();
    const n = heartbeats().length;
    // A start sends a heartbeat at once (the next one would be a minute later).
    await agent.restart();
    await until('the next heartbeat', () => heartbeats().length > n);
    for (const h of heartbeats()) assert.ok(h.status >= 200 && h.status < 300, `heartbeat answered ${h.status}`);
    const now = seen();
    assert.ok(pmTime(now.last_seen) > pmTime(before.last_seen), `last_seen moved: ${before.last_seen} -> ${now.last_seen}`);
    assert.ok(pmTime(now.last_heartbeat) > pmTime(before.last_heartbeat), `last_heartbeat moved: ${before.last_heartbeat} -> ${now.last_heartbeat}`);
    const link = await until('acknowledged after the restart', async () => {
      const l = await linkOf(agent);
      return l.last_heartbeat_at ? l : undefined;
    });
    assert.equal(link.channel_connected, false);
    assert.equal(link.last_error, undefined);
  });

  test('the heartbeat carries the open alerts, and the server takes it (it ignores fields it does not know)', async () => {
    const n = heartbeats().length;
    await agent.restart();
    const hb = await until('a heartbeat with the offline alert', async () =>
      heartbeats().slice(n).find((h) => h.body && (JSON.parse(h.body) as Json).alerts_open));
    assert.ok(hb.status >= 200 && hb.status < 300, `heartbeat answered ${hb.status}`);
    const body = JSON.parse(hb.body!) as { alerts: Json[]; alerts_open: number };
    assert.equal(body.alerts_open, 1);
    assert.equal(body.alerts.length, 1);
    assert.deepEqual({ serial: body.alerts[0].serial, kind: body.alerts[0].kind, severity: body.alerts[0].severity, cleared_at: body.alerts[0].cleared_at },
      { serial: SILENT, kind: 'offline', severity: 'critical', cleared_at: null });
    const link = await until('acknowledged', async () => {
      const l = await linkOf(agent);
      return l.last_heartbeat_at ? l : undefined;
    });
    assert.equal(link.last_error, undefined);
  });

  test('an answer lost on the way back: the batch is sent again, and the server (which does not dedupe) holds that batch twice, nothing more', async () => {
    const now = nowSeconds();
    const rounds = [30, 20, 10].map((m) => now - m * MINUTE);
    const serials = LOST;
    // The silent saved printer of the alerts test is a device too.
    await until('the devices on the server', () => pm.query('SELECT serial FROM devices').length === LOST.length + 1);
    relay.loseAnswer.add(METRICS);
    const r = await importNdjson(agent.configPath, ndjson(rounds.flatMap((ts, i) => serials.map((serial) => metrics(serial, 'raw', ts, { page_count: 10 + i })))));
    assert.equal(r.code, 0, r.stderr);
    await until('the lost answer', () => relay.requests.some((q) => q.path === METRICS && q.lost), 60_000);
    await until('the backlog sent', async () => (await linkOf(agent)).backlog === 0, 60_000);
    const batches = relay.requests.filter((q) => q.path === METRICS);
    assert.ok(batches.every((q) => q.lost || (q.status >= 200 && q.status < 300)), JSON.stringify(batches));
    for (const serial of serials) {
      const box = boxReadings(agent, serial);
      const server = serverReadings(pm, serial);
      // The first round twice (its batch was stored, its answer lost, so it went again), each other once.
      assert.deepEqual(server.map((t) => Math.round((t - now) / MINUTE)), [-30, -30, -20, -10], `${serial} on the server`);
      assertSameReadings(serial, box, [...new Set(server)]);
    }
    assert.equal(batches.length, rounds.length + 1, 'one batch a round, and the one sent again');
  });
});
