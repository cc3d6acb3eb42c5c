// The pieces of the sign-in limits, on a simulated clock: attempts counted when they start,
// the guess rate an attacker with a whole /24 gets (the figures in docs/api.md and
// docs/reliability.md), device keys apart from the account's, the hash queue's order and bound,
// device cookies' signatures, and the dummy hash's shape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoginLimiter, isRefusal, limiterKeys, setupKeys, signInKeys, type Attempt } from '../../../src/auth/login-limiter.js';
import { HashQueue } from '../../../src/auth/hash-queue.js';
import { DeviceCookies, deviceSecretPath, loadDeviceSecret } from '../../../src/auth/device-cookie.js';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dummyHash, hashPassword } from '../../../src/auth/passwords.js';

const HOUR = 3_600_000;

test('attempts are counted when they start: 100 at once get 5 checks, the 6th waits for none of them to end', () => {
  const l = new LoginLimiter(() => 0);
  const keys = limiterKeys('198.18.7.30', 'admin');
  const started = Array.from({ length: 100 }, () => l.begin(keys));
  const admitted = started.filter((a): a is Attempt => !isRefusal(a));
  assert.equal(admitted.length, 5);
  for (const r of started.slice(5)) assert.deepEqual(r, { wait: 1, key: 'user:admin' });
  // A right password among the first five clears the count; until then nothing more is checked.
  admitted[0].succeeded();
  assert.equal(l.retryAfter(keys), 0);
});

test('an attempt that checked nothing is taken back; one that failed stays counted', () => {
  const l = new LoginLimiter(() => 0);
  const keys = limiterKeys('a', 'u');
  for (let i = 0; i < 4; i++) (l.begin(keys) as Attempt).failed();
  const fifth = l.begin(keys) as Attempt;
  assert.equal(l.retryAfter(keys), 1, 'the fifth locks while it runs');
  fifth.abandoned();
  assert.equal(l.retryAfter(keys), 0);
});

/** Greedy attacker: every address tries whenever any is admitted; returns the checks in each hour. */
function attack(addresses: number, hours: number): number[] {
  let t = 0;
  const l = new LoginLimiter(() => t);
  const perHour = Array.from({ length: hours }, () => 0);
  const keys = Array.from({ length: addresses }, (_, i) => limiterKeys(`198.18.7.${i + 2}`, 'admin'));
  while (t < hours * HOUR) {
    let waitMs = Infinity;
    for (const k of keys) {
      const a = l.begin(k);
      if (isRefusal(a)) waitMs = Math.min(waitMs, a.wait * 1000);
      else {
        a.failed();
        perHour[Math.floor(t / HOUR)]++;
        waitMs = 0;
        break;
      }
    }
    t += waitMs;
  }
  return perHour;
}

test('an attacker holding 250 addresses of the /24 gets 17 guesses in the first hour, then 4 an hour', () => {
  const perHour = attack(250, 24);
  assert.equal(perHour[0], 17);
  for (const n of perHour.slice(1)) assert.ok(n <= 4, `${perHour}`);
  assert.deepEqual(attack(1, 24), perHour, 'the number of addresses changes nothing: the account key binds them all');
  // Pausing for the count to be forgotten (a day) gains nothing over retrying at each lock's end.
  console.log(`# guesses per hour at 250 addresses: ${perHour.join(' ')} (a day: ${perHour.reduce((a, b) => a + b)})`);
});

test('a device key is limited on its own failures: the account locked by others does not hold it back', () => {
  const l = new LoginLimiter(() => 0);
  for (let i = 0; i < 10; i++) {
    const a = l.begin(signInKeys(`10.0.0.${i}`, 'tech', undefined));
    if (!isRefusal(a)) a.failed();
  }
  assert.ok(l.retryAfter(signInKeys('10.0.0.99', 'tech', undefined)) > 0, 'the account is locked for untrusted clients');
  const dev = signInKeys('10.0.0.1', 'tech', 'device-1');
  assert.deepEqual(dev, ['device:device-1']);
  for (let i = 0; i < 5; i++) (l.begin(dev) as Attempt).failed();
  assert.deepEqual(l.begin(dev), { wait: 1, key: 'device:device-1' }, 'its own failures lock it');
  assert.equal(l.retryAfter(signInKeys('10.0.0.1', 'tech', 'device-2')), 0, 'another device is not');
  assert.deepEqual(setupKeys('10.0.0.1'), ['setup:10.0.0.1']);
});

test('hash queue: two at a time, the address with the least running and the oldest turn next, proved clients first, waiting bounded', async () => {
  const q = new HashQueue(2, 6, 4);
  const order: string[] = [];
  const gates: (() => void)[] = [];
  const job = (name: string) => () =>
    new Promise<string>((r) => {
      order.push(name);
      gates.push(() => r(name));
    });
  const done: Promise<string>[] = [];
  for (let i = 0; i < 5; i++) done.push(q.run('A', false, job(`A${i}`)));
  assert.deepEqual(q.load(), { running: 2, waiting: 3 });
  assert.equal(q.hasRoom(false), true);
  done.push(q.run('B', false, job('B0')));
  assert.equal(q.hasRoom(false), false, '4 untrusted jobs wait: the rest is kept for proved clients');
  assert.throws(() => q.run('C', false, job('C0')), /hash queue full/);
  assert.equal(q.hasRoom(true), true);
  done.push(q.run('D', true, job('P0')));
  while (order.length < 7) {
    gates.shift()!();
    await new Promise((r) => setImmediate(r));
  }
  while (gates.length) gates.shift()!();
  await Promise.all(done);
  assert.deepEqual(order, ['A0', 'A1', 'P0', 'B0', 'A2', 'A3', 'A4']);
  assert.deepEqual(q.load(), { running: 0, waiting: 0 });
});

test('hash queue: a sign-in from an address with nothing running waits for one hash only, however much another has queued', async () => {
  const q = new HashQueue(2, 32, 24);
  const order: string[] = [];
  const gates = new Map<string, () => void>();
  const job = (name: string) => () => new Promise<void>((r) => (order.push(name), gates.set(name, r)));
  const done = [0, 1, 2, 3, 4].map((i) => q.run('burst', false, job(`A${i}`)));
  done.push(q.run('user', false, job('B0')));
  gates.get('A0')!();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['A0', 'A1', 'B0'], 'B0 goes before the burst\'s third hash');
  for (let i = 0; order.length < 6 && i < 20; i++) {
    for (const [name, open] of gates) if (name !== 'A0') open();
    await new Promise((r) => setImmediate(r));
  }
  for (const open of gates.values()) open();
  await Promise.all(done);
  assert.equal(order.length, 6);
});

test('device cookies: genuine ones name their device; forged, foreign, stale or malformed ones nothing', () => {
  let t = 1_700_000_000_000;
  const cookies = new DeviceCookies(Buffer.alloc(32, 7), () => t);
  const value = cookies.issue('tech');
  assert.match(value, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}\.\d+\.[A-Za-z0-9_-]{43}$/);
  const id = cookies.deviceFor(value, 'tech');
  assert.ok(id);
  assert.equal(cookies.deviceFor(value, 'Tech'), id, 'names are matched as sign-in matches them');
  assert.notEqual(cookies.deviceFor(cookies.issue('tech'), 'tech'), id, 'each sign-in a new device id');
  assert.equal(cookies.deviceFor(value, 'admin'), undefined, 'a cookie for another account');
  assert.equal(new DeviceCookies(Buffer.alloc(32, 8), () => t).deviceFor(value, 'tech'), undefined, 'another box');
  const [name, , issued, mac] = value.split('.');
  assert.equal(cookies.deviceFor(`${name}.AAAAAAAAAAAAAAAAAAAAAA.${issued}.${mac}`, 'tech'), undefined, 'a changed id');
  assert.equal(cookies.deviceFor(`${Buffer.from('admin').toString('base64url')}.${value.split('.').slice(1).join('.')}`, 'admin'), undefined);
  for (const bad of ['', 'x', 'a.b.c.d', `${value}.x`, value.slice(0, -1)]) assert.equal(cookies.deviceFor(bad, 'tech'), undefined, bad);
  t += 401 * 86_400_000;
  assert.equal(cookies.deviceFor(value, 'tech'), undefined, 'older than 400 days');
});

test('the dummy hash for unknown names is a real hash with the parameters of real ones', async () => {
  const shape = (h: string) => h.split('$').map((p, i) => (i < 4 ? p : p.length));
  assert.deepEqual(shape(await dummyHash()), shape(await hashPassword('any password')));
  assert.equal(await dummyHash(), await dummyHash(), 'made once');
});

test('the device cookie secret: made once in the data directory (0600), kept across restarts, in memory when it cannot be written', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-device-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const problems: unknown[] = [];
  const first = loadDeviceSecret(dir, (e) => problems.push(e));
  assert.equal(first.length, 32);
  assert.equal(statSync(deviceSecretPath(dir)).mode & 0o777, 0o600);
  assert.deepEqual(loadDeviceSecret(dir, (e) => problems.push(e)), first, 'the same secret after a restart');
  writeFileSync(deviceSecretPath(dir), 'short\n');
  assert.notDeepEqual(loadDeviceSecret(dir, (e) => problems.push(e)), first, 'a damaged secret is replaced');
  assert.equal(problems.length, 0);
  // A data directory that is not one (even root cannot write there).
  const notDir = join(dir, 'a-file');
  writeFileSync(notDir, '');
  const kept = loadDeviceSecret(notDir, (e) => problems.push(e));
  assert.equal(kept.length, 32);
  assert.equal(problems.length, 1, 'kept in memory, said once');
});
