// Log lines reach journald with their priority: under systemd (JOURNAL_STREAM set) each
// line begins with `<N>`, which journald takes as the priority; elsewhere the lines are plain JSON.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../kit/agent.js';

// The script names its own stdout as the journal stream, as systemd would (device:inode).
const script = (asJournal: boolean) => `
  const { fstatSync } = await import('node:fs');
  if (${asJournal}) { const st = fstatSync(1); process.env.JOURNAL_STREAM = st.dev + ':' + st.ino; }
  const { createLogger, LogRing } = await import(${JSON.stringify(join(repoRoot, 'dist/src/log/logger.js'))});
  const log = createLogger('debug', new LogRing());
  log.debug('d'); log.info('i'); log.warn('w'); log.error('e'); log.fatal('f');
`;
const run = (asJournal: boolean, env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, ['--input-type=module', '-e', script(asJournal)], { encoding: 'utf8', env });

test('under journald each line carries its syslog priority', () => {
  const r = run(true);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.deepEqual(lines.map((l) => /^<(\d)>/.exec(l)?.[1]), ['7', '6', '4', '3', '2']);
  assert.deepEqual(lines.map((l) => JSON.parse(l.replace(/^<\d>/, '')).msg), ['d', 'i', 'w', 'e', 'f']);
});

test('elsewhere the lines are plain JSON, also with a JOURNAL_STREAM inherited from elsewhere', () => {
  const { JOURNAL_STREAM: _j, ...env } = process.env;
  for (const r of [run(false, env), run(false, { ...env, JOURNAL_STREAM: '8:12345' })]) {
    assert.equal(r.status, 0, r.stderr);
    for (const l of r.stdout.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(l), l);
  }
});
