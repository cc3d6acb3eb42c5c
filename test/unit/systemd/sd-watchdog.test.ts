// The agent's systemd watchdog pings (src/systemd/notify.ts), with a stand-in `systemd-notify` first
// on PATH (a shell script that records its arguments, after a delay when asked): the real one needs
// a service manager's notify socket. Pings come at a quarter of WatchdogSec, a tick delayed by a
// blocked event loop is logged, and a slow systemd-notify is waited for and logged, not killed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWatchdog } from '../../../src/systemd/notify.js';
import type { Logger } from '../../../src/log/logger.js';

interface Warn { msg: string; [k: string]: unknown }

async function withWatchdog(watchdogUsec: number, notifySleepS: number, fn: (pings: () => string[], warns: Warn[]) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-watchdog-'));
  const file = join(dir, 'pings');
  writeFileSync(join(dir, 'systemd-notify'), `#!/bin/sh\nsleep ${notifySleepS}\necho "$*" >> '${file}'\n`, { mode: 0o755 });
  const saved = { PATH: process.env.PATH, NOTIFY_SOCKET: process.env.NOTIFY_SOCKET, WATCHDOG_USEC: process.env.WATCHDOG_USEC, WATCHDOG_PID: process.env.WATCHDOG_PID };
  Object.assign(process.env, { PATH: `${dir}:${process.env.PATH}`, NOTIFY_SOCKET: '/run/stand-in/notify', WATCHDOG_USEC: String(watchdogUsec) });
  delete process.env.WATCHDOG_PID;
  const warns: Warn[] = [];
  const log = { warn: (o: object, msg: string) => warns.push({ ...o, msg }) } as unknown as Logger;
  const stop = startWatchdog(log);
  try {
    await fn(() => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []), warns);
  } finally {
    stop();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits (following progress, bounded) until `done` holds. */
async function until(done: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`not within ${limitMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('watchdog: WATCHDOG=1 at a quarter of WatchdogSec; a tick held up by a blocked event loop is logged with how late it came', async () => {
  // WatchdogSec=4s: a ping every second.
  await withWatchdog(4_000_000, 0, async (pings, warns) => {
    await until(() => pings().length >= 2, 'two pings');
    assert.deepEqual(pings().slice(0, 2), ['WATCHDOG=1', 'WATCHDOG=1']);
    // The loop blocked for 2.5 s, past a whole interval.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2_500);
    await until(() => warns.some((w) => w.msg.startsWith('watchdog ping late')), 'a late-ping warning');
    const late = warns.find((w) => w.msg.startsWith('watchdog ping late'))!;
    assert.ok((late.late_ms as number) >= 1_000, `late_ms ${late.late_ms}`);
    assert.equal(late.watchdog_ms, 4_000);
  });
});

test('watchdog: a systemd-notify slower than the ping interval is waited for (its ping counts) and logged', async () => {
  // WatchdogSec=16s: a ping every 4 s, each child given 8 s; this one takes 5 s.
  await withWatchdog(16_000_000, 5, async (pings, warns) => {
    await until(() => warns.some((w) => w.msg.startsWith('watchdog ping slow')), 'a slow-ping warning');
    assert.equal(pings()[0], 'WATCHDOG=1', 'the slow ping was sent, not cut short');
    assert.ok(!warns.some((w) => w.msg === 'watchdog ping failed'), JSON.stringify(warns));
    const slow = warns.find((w) => w.msg.startsWith('watchdog ping slow'))!;
    assert.ok((slow.ms as number) >= 4_000, `ms ${slow.ms}`);
  });
});
