// The agent's start-up phases line: each phase's length, in order, logged once when
// the first request has been answered, whatever comes after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StartupPhases } from '../../../src/log/startup-phases.js';

test('phases are the time between marks, in order, and the total is the last mark', () => {
  let now = 1000;
  const phases = new StartupPhases(() => now);
  now = 1250;
  phases.mark('config');
  now = 1900;
  phases.mark('database');
  const { phases_ms, total_ms } = phases.snapshot();
  assert.deepEqual(Object.keys(phases_ms).slice(-3), ['modules', 'config', 'database']);
  assert.equal(phases_ms.config, 250);
  assert.equal(phases_ms.database, 650);
  assert.equal(total_ms, 1900);
  const sum = Object.values(phases_ms).reduce((a, b) => a + b, 0);
  assert.equal(sum, total_ms, 'the phases add up to the total');
});

test('fractional times: the rounded phases still add up to the rounded total', () => {
  let now = 0.4;
  const phases = new StartupPhases(() => now);
  for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) {
    now = 0.4 + (i + 1) * 1.4; // each phase 1.4 ms: rounding each alone would give 1 + 1 + 1 + 1
    phases.mark(name);
  }
  const { phases_ms, total_ms } = phases.snapshot();
  assert.equal(Object.values(phases_ms).reduce((a, b) => a + b, 0), total_ms);
  assert.equal(total_ms, 6);
});

test('one line, after the first answer only', async () => {
  const lines: { obj: object; msg: string }[] = [];
  const phases = new StartupPhases();
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  phases.mark('listen');
  phases.logAtFirstAnswer(server, { info: (obj, msg) => lines.push({ obj, msg }) });
  assert.equal(lines.length, 0, 'nothing before a request');
  const { port } = server.address() as AddressInfo;
  const get = () =>
    new Promise<void>((resolve, reject) => {
      request({ host: '127.0.0.1', port, agent: false }, (res) => res.resume().on('end', resolve)).on('error', reject).end();
    });
  await get();
  await get();
  server.close();
  assert.equal(lines.length, 1, 'one line for two requests');
  assert.equal(lines[0].msg, 'start-up phases');
  const { phases_ms, total_ms } = lines[0].obj as { phases_ms: Record<string, number>; total_ms: number };
  assert.deepEqual(Object.keys(phases_ms).slice(-2), ['listen', 'first_answer']);
  assert.ok(total_ms >= phases_ms.listen + phases_ms.first_answer);
});
