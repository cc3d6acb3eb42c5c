// Power-cut durability of the real agent: kill -9 it repeatedly while it stores snapshots from
// real SNMP polls (snmpsim on loopback), restart it, and check that the database is intact and
// every snapshot the API acknowledged is still there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { startAgent, expectJson, type Agent } from '../../kit/agent.js';
import { startSnmpSim, fixturePath, type SnmpSim } from '../../kit/snmpsim.js';

const PRINTERS = [
  { address: '127.0.2.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' },
  { address: '127.0.2.2', file: 'printmaster/epson_sc.snmprec', serial: 'X8G9000415' },
  { address: '127.0.2.3', file: 'printmaster/epson_cw.snmprec', serial: 'X7F4008528' },
];
const CYCLES = 6;
const WRITERS = 4;

let sim: SnmpSim;
let agent: Agent;

const post = (path: string, body: unknown) =>
  agent.request(path, { method: 'POST', timeoutMs: 5000, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });

before(async () => {
  sim = await startSnmpSim({ endpoints: PRINTERS.map((p) => ({ address: p.address, recording: fixturePath(p.file) })) });
  agent = await startAgent();
  expectJson(
    await post('/settings', {
      discovery: { manual_ranges: true, ranges_text: '127.0.2.1-3', allowed_ranges: ['127.0.2.0/24'], snmp_timeout_ms: 2000 },
      snmp: { port: sim.port },
    }),
  );
  // Find the printers (twice at most: the simulator may be slow to answer on a loaded machine).
  for (let attempt = 0; attempt < 2; attempt++) {
    expectJson(await post('/discover', {}), 202);
    let state: { state: string; found: number } = { state: 'running', found: 0 };
    for (let i = 0; i < 300 && state.state === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = expectJson(await agent.get('/discover')) as typeof state;
    }
    if (state.found === PRINTERS.length) break;
  }
  const saved = expectJson(await post('/devices/save/all', {})) as { serials: string[] };
  assert.deepEqual(saved.serials, PRINTERS.map((p) => p.serial).sort(), 'discovery found every printer');
});

after(async () => {
  await agent?.stop();
  await sim?.stop();
});

test(`kill -9 during polls, ${CYCLES} times: integrity holds and no acknowledged snapshot is lost`, async () => {
  const acknowledged = new Set<number>();
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    let stop = false;
    // Writers: each acknowledged collect is a committed raw snapshot with its id.
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const serial = PRINTERS[(w + i) % PRINTERS.length].serial;
        try {
          const r = await post('/devices/metrics/collect', { serial });
          if (r.status === 200) acknowledged.add((JSON.parse(r.body) as { id: number }).id);
        } catch {
          // the connection died with the process: that request was never acknowledged
        }
      }
    });
    // The kill lands while writes are in flight: after this cycle's first acknowledged snapshot
    // (however slow the machine), then a random while longer.
    const before = acknowledged.size;
    for (let waited = 0; acknowledged.size === before && waited < 30_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 900)));
    const exited = new Promise((r) => agent.proc.once('exit', r));
    agent.proc.kill('SIGKILL');
    await exited;
    stop = true;
    await Promise.all(writers);
    await agent.restart();
  }
  await agent.stop({ keepDir: true });

  assert.ok(acknowledged.size >= CYCLES, `write load too small: ${acknowledged.size} snapshots`);
  const db = new Database(join(agent.dataDir, 'printbox.db'), { readonly: true });
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const ids = new Set((db.prepare('SELECT id FROM metrics_raw').all() as { id: number }[]).map((r) => r.id));
    const lost = [...acknowledged].filter((id) => !ids.has(id));
    assert.deepEqual(lost, [], 'acknowledged snapshots missing after kill -9');
    const devices = db.prepare('SELECT count(*) AS n FROM devices WHERE is_saved = 1').get() as { n: number };
    assert.equal(devices.n, PRINTERS.length);
  } finally {
    db.close();
  }
});
