// The soak scripts (scripts/soak) in short, as CI runs them: the same code as the full
// runs of docs/reliability.md, with small counts. No timing is asserted: only that nothing
// acknowledged is lost, the database stays intact, the agent never crashes or answers an
// unexpected 5xx, and the read load gets no error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runKill9, formatKill9 } from '../../../scripts/soak/kill9.js';
import { runFuzzIsolated, formatFuzz } from '../../../scripts/soak/fuzz.js';
import { runLoad, formatLoad } from '../../../scripts/soak/load.js';
import { isolationUnavailable } from '../../../scripts/soak/isolate.js';
import { ensureSnmpsim } from '../../kit/snmpsim.js';

const noSnmpsim = ensureSnmpsim();

test('kill -9 under mixed writes, 10 cycles: nothing acknowledged is lost, integrity_check ok', { skip: noSnmpsim ?? false }, async () => {
  const r = await runKill9({ cycles: 10, seed: 7 });
  const report = formatKill9(r);
  assert.equal(r.cycles, 10, report);
  assert.ok(r.acknowledged.polls > 0 && r.acknowledged.updates > 0 && r.acknowledged.settings > 0 && r.acknowledged.imports > 0, `every kind of write acknowledged at least once:\n${report}`);
  assert.equal(r.lost, 0, report);
  assert.equal(r.integrityErrors, 0, report);
});

test('fuzzer, 2,000 requests over every route: no crash, no unexpected 5xx', { skip: isolationUnavailable() ?? false }, async () => {
  const r = await runFuzzIsolated({ requests: 2000, seed: 7 });
  const report = formatFuzz(r);
  assert.equal(r.requests, 2000, report);
  assert.ok(r.unauthenticated > 0, report);
  assert.equal(r.crashes, 0, report);
  assert.deepEqual(r.unexpected5xx, [], report);
});

test('fixed-rate read load for 20 s during a scan and a roll-up: no errors', { skip: noSnmpsim ?? false }, async () => {
  const r = await runLoad({ durationSeconds: 20, rollupAtSeconds: 2 });
  const report = formatLoad(r);
  assert.ok(r.requests > 0, report);
  assert.equal(r.errors, 0, report);
  assert.equal(r.non2xx, 0, report);
});
