// The agent's start-up: one "start-up phases" line once the first request has been
// answered, and the work the first answer does not need (the scan at start-up, among others)
// started only after it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { startAgent, stopAll, writeConfig } from '../../kit/agent.js';
import { until } from '../../kit/until.js';

after(stopAll);

interface Line {
  msg: string;
  phases_ms?: Record<string, number>;
  total_ms?: number;
}
const lines = (out: string): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

test('the phases line follows the first answer; the scan at start-up starts after it', async () => {
  const config = await writeConfig();
  // Automatic discovery on, with nothing to scan (no subnet, no ranges): its start is still logged.
  appendFileSync(config.configPath, 'auto_discover = true\nsubnet_scan = false\n');
  const agent = await startAgent({ config });
  await until('the scan at start-up', () => lines(agent.stdout()).some((l) => l.msg === 'discovery started'));
  const log = lines(agent.stdout());
  const phases = log.filter((l) => l.msg === 'start-up phases');
  assert.equal(phases.length, 1, 'one phases line');
  const { phases_ms, total_ms } = phases[0];
  assert.deepEqual(Object.keys(phases_ms!), ['node', 'modules', 'config', 'database', 'stores', 'certificate', 'listen', 'ready', 'first_answer']);
  for (const [name, ms] of Object.entries(phases_ms!)) assert.ok(Number.isInteger(ms) && ms >= 0, `${name}: ${ms}`);
  assert.equal(Object.values(phases_ms!).reduce((a, b) => a + b, 0), total_ms);
  const order = (msg: string) => log.findIndex((l) => l.msg === msg);
  assert.ok(order('agent ready') < order('start-up phases'), 'ready before the first answer');
  assert.ok(order('start-up phases') < order('discovery started'), 'the scan after the first answer');
  await agent.get('/api/version');
  assert.equal(lines(agent.stdout()).filter((l) => l.msg === 'start-up phases').length, 1, 'still one line after more requests');
});
