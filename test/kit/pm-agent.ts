// Test helper: a box enrolled to PrintMaster's own server (kit/printmaster.ts), for tests of
// what the server's UI asks the box for.
//
//   connectedAgentId(pm)                  -> the enrolled box's agent_id, once its channel is up (the server
//                                            proxies a request to it); polls, never a fixed sleep
//   serverKnowsDevice(pm, agent, id, dev) -> posts the device to the server's /api/v1/devices/batch with the
//                                            box's own agent token (read from its database), as the box's
//                                            uploader does: the server routes a device's buttons to the agent
//                                            it has on record for it
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Agent } from './agent.js';
import type { PmServer } from './printmaster.js';

export async function connectedAgentId(pm: PmServer, timeoutMs = 90_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const id = pm.query<{ agent_id: string }>('SELECT agent_id FROM agents')[0]?.agent_id;
    // The server answers 503 until the box's WebSocket channel is connected.
    if (id && (await pm.api('GET', `/api/v1/proxy/agent/${id}/api/version`)).status === 200) return id;
    if (Date.now() > end) throw new Error(`the box's channel to the server was not up within ${timeoutMs} ms\n${pm.log().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function serverKnowsDevice(pm: PmServer, agent: Agent, agentId: string, device: Record<string, unknown>): Promise<void> {
  const db = new Database(join(agent.dataDir, 'printbox.db'), { readonly: true });
  let token: string;
  try {
    token = (db.prepare('SELECT agent_token FROM server_link').get() as { agent_token: string }).agent_token;
  } finally {
    db.close();
  }
  const body = JSON.stringify({ agent_id: agentId, timestamp: new Date().toISOString(), devices: [device] });
  const status = await new Promise<number>((ok, fail) => {
    https
      .request(
        `${pm.url}/api/v1/devices/batch`,
        { method: 'POST', ca: readFileSync(pm.caFile), checkServerIdentity: () => undefined, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => ok(res.statusCode ?? 0));
        },
      )
      .on('error', fail)
      .end(body);
  });
  if (status !== 200) throw new Error(`the server refused the device batch: ${status}`);
}
