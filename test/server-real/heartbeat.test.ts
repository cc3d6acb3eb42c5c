// Registration and heartbeats over HTTP while the WebSocket is down, against PrintMaster's own
// server (issue 31, items 3 and 8). The box reaches the server through an HTTPS relay
// (test/helpers/pm-relay.ts) that refuses the WebSocket upgrade and passes every plain request
// through, so the only heartbeats the server can get are the HTTP ones, and the relay sees each
// answer's status. At first it refuses the heartbeat too: what the server then knows of the box
// came with its registration alone.
import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { startAgent, stopAll, type Agent } from '../helpers/agent.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../helpers/printmaster.js';
import { startRelay, type Relay } from '../helpers/pm-relay.js';
import { linkOf, pmTime, primaryAddress, until, type Json } from '../helpers/pm-checks.js';

const why = printmasterUnavailable();
const HEARTBEAT = '/api/v1/agents/heartbeat';

describe('registration and HTTP heartbeats with the WebSocket down', { skip: why ?? false }, () => {
  let pm: PmServer;
  let relay: Relay;
  let agent: Agent;

  before(async () => {
    pm = await startPrintmaster();
    relay = await startRelay(pm);
    relay.refused.add(HEARTBEAT);
    agent = await startAgent({ serverUrl: relay.url, server: { enrollment_token: pm.token, ca_file: pm.caFile } });
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
});
