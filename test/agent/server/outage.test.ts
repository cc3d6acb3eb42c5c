// An outage of PrintMaster's own server: the server stopped while the box goes on
// reading (real SNMP reads of a simulated Kyocera, and rounds of readings ten minutes apart
// imported as a box that polled through the outage would hold them), then started again on the
// same data. Every reading arrives, once, at its own time; the link shows the failing uploads
// while it lasts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { importNdjson, startAgent, stopAll, type Agent } from '../../kit/agent.js';
import { printmasterUnavailable, startPrintmaster, type PmServer } from '../../kit/printmaster.js';
import { ensureSnmpsim, fixturePath, startSnmpSim, type SnmpSim } from '../../kit/snmpsim.js';
import { HOUR, MINUTE, device, metrics, ndjson, nowSeconds } from '../../kit/seed.js';
import {
  assertSameReadings, boxReadings, findAndSave, linkOf, postJson, protocolComplaints, serverReadings, until,
} from '../../kit/pm-checks.js';

const why = printmasterUnavailable() ?? ensureSnmpsim();

const PRINTER = { address: '127.0.5.1', file: 'printmaster/kyocera_p2040.snmprec', serial: 'VD21457943' };
const ROUNDS = 'PM-OUTAGE-1';
const ROUND_COUNT = 6;

describe('an outage of the PrintMaster server', { skip: why ?? false }, () => {
  let pm: PmServer;
  let sim: SnmpSim;
  let agent: Agent;
  const now = nowSeconds();

  before(async () => {
    [pm, sim] = await Promise.all([startPrintmaster(), startSnmpSim({ endpoints: [{ address: PRINTER.address, recording: fixturePath(PRINTER.file) }] })]);
    agent = await startAgent({
      serverUrl: pm.url,
      server: { enrollment_token: pm.token, ca_file: pm.caFile, upload_interval_ms: 0 },
      seed: ndjson([device(ROUNDS, { ip: '127.0.5.50' }), metrics(ROUNDS, 'raw', now - 2 * HOUR, { page_count: 100 })]),
    });
    await findAndSave(agent, sim.port, PRINTER.address, PRINTER.serial);
  });
  after(async () => {
    await stopAll();
    await Promise.all([pm?.kill(), sim?.stop()]);
  });

  test('readings made while the server is down all arrive once it is back, once each, at their own times', async () => {
    // Everything so far is on the server.
    await until('the first upload', async () => (await linkOf(agent)).backlog === 0 && serverReadings(pm, ROUNDS).length === 1);

    await pm.stop();
    // Polling rounds ten minutes apart during the outage, and real reads of the printer.
    const rounds = Array.from({ length: ROUND_COUNT }, (_, i) => now - (ROUND_COUNT - i) * 10 * MINUTE);
    const imported = await importNdjson(agent.configPath, ndjson(rounds.map((ts, i) => metrics(ROUNDS, 'raw', ts, { page_count: 101 + i }))));
    assert.equal(imported.code, 0, imported.stderr);
    const printerBefore = serverReadings(pm, PRINTER.serial).length;
    for (let i = 0; i < 3; i++) {
      const r = await postJson(agent, '/devices/metrics/collect', { serial: PRINTER.serial });
      assert.equal(r.status, 200, r.body);
    }
    const waiting = boxReadings(agent, PRINTER.serial).length - printerBefore + ROUND_COUNT;
    const down = await until('the backlog and the failure shown', async () => {
      const l = await linkOf(agent);
      return l.backlog === waiting && l.upload_error ? l : undefined;
    });
    assert.match(String(down.upload_error), /ECONNREFUSED/);
    assert.ok(down.state === 'offline' || down.state === 'failing', `the link does not say online while nothing reaches the server: ${String(down.state)}`);
    assert.equal(serverReadings(pm, ROUNDS).length, 1, 'nothing arrived while the server was down');

    await pm.start();
    await until('the backlog drained', async () => (await linkOf(agent)).backlog === 0, 60_000);
    for (const serial of [ROUNDS, PRINTER.serial]) {
      const box = boxReadings(agent, serial);
      await until(`${serial}'s readings on the server`, () => serverReadings(pm, serial).length >= box.length);
      assertSameReadings(serial, box, serverReadings(pm, serial));
    }
    const pages = pm.query<{ page_count: number }>('SELECT page_count FROM metrics_history WHERE serial = ? ORDER BY timestamp', ROUNDS);
    assert.deepEqual(pages.map((p) => p.page_count), [100, ...rounds.map((_, i) => 101 + i)], 'each round its own row, in order');
    const up = await until('the link back online', async () => {
      const l = await linkOf(agent);
      return l.state === 'online' ? l : undefined;
    }, 60_000);
    assert.equal(up.upload_error, undefined, 'the failure is gone once uploads go through');
    assert.deepEqual(protocolComplaints(pm.log()), []);
  });
});
