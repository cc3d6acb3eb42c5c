// The box against PrintMaster's own central server (../shared/tools/printmaster-server), the real
// peer of server-protocol.md, over real HTTPS and WebSocket on loopback.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAgent, stopAll, type Agent } from '../helpers/agent.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../helpers/printmaster.js';

const why = printmasterUnavailable();

describe('PrintMaster server', { skip: why ?? false }, () => {
  let pm: PmServer;
  let agent: Agent;
  before(async () => {
    pm = await startPrintmaster();
    agent = await startAgent({ serverUrl: pm.url, server: { enrollment_token: pm.token, ca_file: pm.caFile } });
  });
  after(async () => {
    await stopAll();
    await pm?.kill();
  });

  test('the box enrolls with the join token', async () => {
    for (;;) {
      const rows = pm.query<{ agent_id: string }>('SELECT agent_id FROM agents');
      if (rows.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await pm.api('GET', '/api/v1/agents/list');
    assert.equal(r.status, 200, r.text);
  });
});
