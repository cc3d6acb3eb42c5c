// The boot test (scripts/boot-test.sh) is told as numbered stage files sourced in order by a short
// runner. It needs a VM, so it cannot run here; what can be checked here is that every file parses
// and that the runner's knobs pick the stages scripts/test.sh relies on: the whole run, the stage
// "boot partition missing" alone in a VM of its own (PRINTBOX_BOOT_TEST_ONLY), the rest beside it
// (PRINTBOX_BOOT_TEST_SKIP), and the quick first-boot run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../kit/agent.js';

const runner = join(repoRoot, 'scripts/boot-test.sh');
const stagesDir = join(repoRoot, 'scripts/boot-test');

/** The stages `scripts/boot-test.sh --list` runs with these knobs (and no others). */
function stagesRun(knobs: Record<string, string>): string[] {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...knobs };
  const r = spawnSync('bash', [runner, '--list'], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l.startsWith('run ')).map((l) => l.replace(/^run +/, '').replace(/\.sh$/, ''));
}

const SET_UP = ['00-host', '10-build', '20-static-units', '30-vm-setup'];
const FIRST_BOOT = ['40-first-boot', '41-update-bundles', '42-first-boot-checks'];
const AFTER = ['50-provisioning', '60-watchdog', '70-journal', '80-usb', '90-ab-update'];

test('every file of the boot test parses (bash -n)', () => {
  const files = [runner, ...readdirSync(stagesDir).filter((f) => f.endsWith('.sh')).map((f) => join(stagesDir, f))];
  assert.ok(files.length > 10);
  for (const f of files) {
    const r = spawnSync('bash', ['-n', f], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${f}: ${r.stderr}`);
  }
});

test('the whole run: every stage but the first-boot-only second boot, the boot partition stage last', () => {
  assert.deepEqual(stagesRun({}), [...SET_UP, ...FIRST_BOOT, ...AFTER, '95-boot-partition']);
});

test('PRINTBOX_BOOT_TEST_ONLY=boot-partition: the set-up and that stage alone', () => {
  assert.deepEqual(stagesRun({ PRINTBOX_BOOT_TEST_ONLY: 'boot-partition' }), [...SET_UP, '95-boot-partition']);
});

test('PRINTBOX_BOOT_TEST_SKIP=boot-partition: everything else', () => {
  assert.deepEqual(stagesRun({ PRINTBOX_BOOT_TEST_SKIP: 'boot-partition' }), [...SET_UP, ...FIRST_BOOT, ...AFTER]);
});

test('PRINTBOX_BOOT_TEST_ONLY=first-boot: the first boot, its checks and a second boot, no update bundles', () => {
  assert.deepEqual(stagesRun({ PRINTBOX_BOOT_TEST_ONLY: 'first-boot' }), [...SET_UP, '40-first-boot', '42-first-boot-checks', '45-second-boot']);
});

test('every stage file is in the runner\'s list (a file left out fails the run, not silently)', () => {
  const files = readdirSync(stagesDir).filter((f) => /^\d\d-.*\.sh$/.test(f)).map((f) => f.replace(/\.sh$/, '')).sort();
  const listed = spawnSync('bash', [runner, '--list'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map((l) => l.split(/ +/)[1]!.replace(/\.sh$/, ''));
  assert.deepEqual(listed.sort(), files);
});
