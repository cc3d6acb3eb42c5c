// printbox-agent install-allowed VERSION: RAUC's pre-install handler asks it before an update is
// written (rootfs-overlay/usr/libexec/printbox/rauc-pre-install).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot, runCli } from '../../kit/agent.js';

const running = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const [major, minor, patch] = running.split(/[.-]/).map(Number);

test('install-allowed: the same or a newer version is allowed; an older one is refused, naming both', async () => {
  for (const v of [running, `${major}.${minor}.${patch + 1}`, `${major}.${minor + 1}.0`, `${major + 1}.0.0-rc.1`]) {
    const r = await runCli(['install-allowed', v]);
    assert.equal(r.code, 0, `${v}: ${r.stderr}`);
  }
  const older = [
    ...(running.includes('-') ? [] : [`${major}.${minor}.${patch}-rc.1`]),
    ...(patch > 0 ? [`${major}.${minor}.${patch - 1}`] : []),
    ...(minor > 0 ? [`${major}.${minor - 1}.99`] : []),
    ...(major > 0 ? [`${major - 1}.99.99`] : []),
  ];
  assert.ok(older.length >= 2, `older versions than ${running} to try`);
  for (const v of older) {
    const r = await runCli(['install-allowed', v]);
    assert.equal(r.code, 1, v);
    assert.match(r.stderr, new RegExp(`version ${v.replace(/\./g, '\\.')} is older than the running ${running.replace(/\./g, '\\.')}`));
  }
});

test('install-allowed: no version, two, or one that is not a version: exit 2 and why', async () => {
  for (const [args, why] of [
    [[], /usage: printbox-agent install-allowed VERSION/],
    [['1.0.0', '2.0.0'], /usage/],
    [[''], /usage/],
    [['latest'], /"latest" is not a version such as 1\.2\.3/],
  ] as const) {
    const r = await runCli(['install-allowed', ...args]);
    assert.equal(r.code, 2, JSON.stringify(args));
    assert.match(r.stderr, why);
  }
});
