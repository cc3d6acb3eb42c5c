// The central server's command table (server/commands.ts) and the update progress in the reference
// agent's form (server/update-progress.ts). Each command's answer is the frame the reference server
// shows; test/agent/server/commands.test.ts sends them through PrintMaster's own server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ServerCommands, type CommandDeps, type UpdateCommands } from '../../../src/server/commands.js';
import { toServerProgress } from '../../../src/server/update-progress.js';
import { UpdateError } from '../../../src/update/service.js';

type Frame = { type: string; data: Record<string, any> };

/**
 * A stand-in for the update service (update/service.ts, tested in test/unit/update/service.test.ts against a real
 * source): it records what the commands call and answers as told.
 */
class StandInUpdates implements UpdateCommands {
  calls: string[] = [];
  available: string | null = null;
  refuse?: UpdateError;
  async check() {
    this.calls.push('check');
    if (this.refuse) throw this.refuse;
    return { available_version: this.available };
  }
  async force(reason: string) {
    this.calls.push(`force:${reason}`);
    if (this.refuse) throw this.refuse;
    return {};
  }
  cancel() {
    this.calls.push('cancel');
    if (this.refuse) throw this.refuse;
    return {};
  }
}

function setUp(more: Partial<CommandDeps> = {}) {
  const frames: Frame[] = [];
  const updates = new StandInUpdates();
  const restarts: string[] = [];
  const commands = new ServerCommands({
    discovery: {
      start: () => ({ state: { scan_id: 7 } as never, alreadyRunning: false }),
      collect: async (serial: string) => (serial === 'KNOWN' ? ({ id: 1, serial, ts: 0 } as never) : undefined),
      collectSaved: async () => [],
    },
    updates: () => updates,
    restart: (reason) => void restarts.push(reason),
    send: (type, data) => (frames.push({ type, data }), true),
    log: pino({ level: 'silent' }),
    ...more,
  });
  return { commands, frames, updates, restarts };
}

test('the table names the reference UI\'s commands and the box\'s own', () => {
  const { commands } = setUp();
  assert.deepEqual(commands.names, ['check_update', 'force_update', 'cancel_update', 'restart', 'discover', 'collect']);
});

test('check_update checks, and installs a newer version as the reference agent does', async () => {
  const { commands, updates, frames } = setUp();
  await commands.run({ command: 'check_update' });
  assert.deepEqual(updates.calls, ['check'], 'up to date: nothing installed');
  updates.available = '9.9.9';
  await commands.run({ command: 'check_update' });
  assert.deepEqual(updates.calls, ['check', 'check', 'force:central server: check_update']);
  assert.deepEqual(frames, [], 'progress comes from the update service\'s own events, not from the command');
});

test('an update command the box refuses is a failed update_progress with the reason', async () => {
  const { commands, updates, frames } = setUp();
  updates.refuse = new UpdateError(501, 'updates need RAUC (/etc/rauc/system.conf is missing)');
  await commands.run({ command: 'force_update', reason: 'server_ui_force_reinstall' });
  assert.deepEqual(updates.calls, ['force:server_ui_force_reinstall'], 'the server\'s reason is passed on');
  assert.deepEqual(frames, [{ type: 'update_progress', data: { status: 'failed', progress: -1, message: updates.refuse.message, error: updates.refuse.message } }]);
  updates.refuse = new UpdateError(409, 'no update is in progress');
  await commands.run({ command: 'cancel_update' });
  assert.equal(frames[1].data.status, 'failed');
  assert.equal(frames[1].data.error, 'Cannot cancel: no update is in progress');
  const none = setUp({ updates: () => undefined });
  await none.commands.run({ command: 'check_update' });
  assert.equal(none.frames[0].data.error, 'updates are not available on this box');
});

test('restart calls the shutdown hook; without one it is answered as refused', async () => {
  const { commands, restarts, frames } = setUp();
  await commands.run({ command: 'restart' });
  assert.deepEqual(restarts, ['the central server asked for a restart']);
  assert.deepEqual(frames, []);
  const none = setUp({ restart: undefined });
  await none.commands.run({ command: 'restart' });
  assert.equal(none.frames[0].type, 'job_progress');
  assert.equal(none.frames[0].data.status, 'failed');
  assert.match(none.frames[0].data.error, /^restart is not available in this process/);
});

test('discover and collect answer a job_progress; an unknown or malformed command a failed one', async () => {
  const { commands, frames } = setUp();
  await commands.run({ command: 'discover' });
  await commands.run({ command: 'collect', serial: 'KNOWN' });
  await commands.run({ command: 'collect', serial: 'GONE' });
  await commands.run({ command: 'reboot_the_moon' });
  await commands.run({ command: 'constructor' });
  await commands.run({ command: 'x'.repeat(500) });
  await commands.run({});
  const jobs = frames.map((f) => [f.type, f.data.job_type, f.data.status, f.data.error]);
  const known = 'this box handles check_update, force_update, cancel_update, restart, discover, collect';
  assert.deepEqual(jobs, [
    ['job_progress', 'discover', 'completed', undefined],
    ['job_progress', 'collect', 'completed', undefined],
    ['job_progress', 'collect', 'failed', 'no snapshot read from GONE'],
    ['job_progress', 'reboot_the_moon', 'failed', `unknown command "reboot_the_moon": ${known}`],
    ['job_progress', 'constructor', 'failed', `unknown command "constructor": ${known}`],
    ['job_progress', 'x'.repeat(64), 'failed', `unknown command "${'x'.repeat(64)}": ${known}`],
    ['job_progress', 'command', 'failed', `unknown command null: ${known}`],
  ]);
  assert.equal(frames[0].data.result.scan_id, 7);
  assert.ok(frames.every((f) => /^[0-9a-f-]{36}$/.test(f.data.job_id)), 'each answer is a job of its own');
});

test('update progress in the reference agent\'s statuses and overall figures', () => {
  const cases: [Parameters<typeof toServerProgress>[0], string, number][] = [
    [{ state: 'checking' }, 'checking', -1],
    [{ state: 'downloading', version: '2.0.0', percent: 0 }, 'downloading', 0],
    [{ state: 'downloading', version: '2.0.0', percent: 100 }, 'downloading', 50],
    [{ state: 'verifying', version: '2.0.0' }, 'staging', 58],
    [{ state: 'installing', version: '2.0.0', percent: 50, message: 'Copying' }, 'applying', 70],
    [{ state: 'rebooting', version: '2.0.0', percent: 100 }, 'restarting', 80],
    [{ state: 'idle' }, 'idle', -1],
    [{ state: 'idle', error: 'cancelled' }, 'cancelled', -1],
    [{ state: 'idle', error: 'the bundle is for printbox-rpi, this box is printbox-amd64: refused' }, 'failed', -1],
  ];
  for (const [p, status, progress] of cases) {
    const out = toServerProgress(p);
    assert.equal(out.status, status, JSON.stringify(p));
    assert.equal(out.progress, progress, JSON.stringify(p));
    assert.equal(out.target_version, p.version, 'the version goes as target_version');
  }
  assert.equal(toServerProgress({ state: 'idle', error: 'refused' }).error, 'refused');
  assert.equal(toServerProgress({ state: 'installing', percent: 50, message: 'Copying' }).message, 'Copying');
});
