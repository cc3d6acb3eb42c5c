// Pure pieces of the access work: request-target checks, the login limiter, session expiry caps,
// trusted-proxy matching and password hashes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRequestTarget } from '../../../src/web/request-target.js';
import { LoginLimiter, isRefusal } from '../../../src/auth/login-limiter.js';
import { SessionStore, SESSION_MAX_MS } from '../../../src/auth/sessions.js';
import { compileTrust, RequestFacts } from '../../../src/auth/request-facts.js';
import type { IncomingMessage } from 'node:http';
import { hashPassword, verifyPassword } from '../../../src/auth/passwords.js';
import { openDatabase } from '../../../src/store/db.js';

test('request targets: canonical paths pass, every other spelling is refused', () => {
  for (const [raw, url] of [
    ['/settings', '/settings'],
    ['/api/devices/profile?serial=A//B', '/api/devices/profile?serial=A//B'],
    ['https://box.local:8443/settings?x=1', '/settings?x=1'],
    ['http://box.local', '/'],
    ['/', '/'],
    // Only the path is judged: a dot segment or an encoded separator in the query is a value.
    ['/x?p=/../y&q=%2F', '/x?p=/../y&q=%2F'],
    ['/.well-known/x', '/.well-known/x'],
  ]) assert.deepEqual(checkRequestTarget(raw), { ok: true, url }, raw);
  for (const raw of ['//settings', '///x', '/a//b', '/%2Fsettings', '/%2fsettings', '/%5Cx', '/./settings', '/x/../settings', '/..',
    '/%2E%2E/x', '/a\\b', '*', 'settings', '', '/x%00', '/x\u0001', 'https://box//settings',
    'https://box/../settings', '/x/..', '/x/.', '/x%2e%2E']) {
    const r = checkRequestTarget(raw);
    assert.equal(r.ok, false, raw);
  }
});

test('login limiter: five free attempts, then a doubling lock per key; success clears it', () => {
  let t = 0;
  const l = new LoginLimiter(() => t);
  const keys = ['addr:a', 'user:u'];
  const fail = () => {
    const a = l.begin(keys);
    assert.ok(!isRefusal(a), 'admitted');
    return a.failed();
  };
  for (let i = 1; i <= 4; i++) {
    assert.equal(fail(), i);
    assert.equal(l.retryAfter(keys), 0);
  }
  fail();
  assert.equal(l.retryAfter(keys), 1);
  assert.deepEqual(l.begin(keys), { wait: 1, key: 'user:u' }, 'a locked key refuses before anything is counted');
  assert.equal(l.retryAfter(['user:u']), 1, 'the account is locked for every address');
  assert.equal(l.retryAfter(['addr:b', 'user:v']), 0, 'others are not');
  t += 1000;
  fail();
  assert.equal(l.retryAfter(keys), 2);
  t += 2000;
  fail();
  assert.equal(l.retryAfter(keys), 4);
  for (let i = 0; i < 20; i++) {
    t += 15 * 60_000;
    fail();
  }
  assert.equal(l.retryAfter(keys), 15 * 60, 'capped at 15 minutes');
  l.succeeded(keys);
  assert.equal(l.retryAfter(keys), 0);
});

test('sessions: fallback 24 h, a far expiry capped, expired ones gone, a user logged out everywhere', () => {
  let t = 1_000_000;
  const s = new SessionStore(openDatabase(':memory:'), () => t);
  assert.equal(s.create('a').session.expires, t + 86_400_000);
  assert.equal(s.create('a', t + 10 * 365 * 86_400_000).session.expires, t + SESSION_MAX_MS);
  const short = s.create('b', t + 1000);
  t += 1001;
  assert.equal(s.get(short.token), undefined);
  const one = s.create('c').token;
  const two = s.create('c').token;
  s.deleteUser('c', two);
  assert.equal(s.get(one), undefined);
  assert.ok(s.get(two));
});

test('trusted proxies: CIDR lists, IPv4-mapped peers, and the /0 ranges proxy-addr refuses', () => {
  const loop = compileTrust(['127.0.0.0/8', '::1/128']);
  assert.ok(loop('127.0.0.5', 0) && loop('::ffff:127.0.0.1', 0) && loop('::1', 0));
  assert.ok(!loop('198.18.7.2', 0) && !loop('::ffff:198.18.7.2', 0));
  const all = compileTrust(['0.0.0.0/0', '::/0']);
  assert.ok(all('198.18.7.2', 0) && all('2001:db8::1', 0) && all('::ffff:198.18.7.2', 0));
  const v4 = compileTrust(['0.0.0.0/0']);
  assert.ok(!v4('2001:db8::1', 0));
});

test('loopback peers: judged once per connection, each connection by its own peer', () => {
  const facts = new RequestFacts([]);
  const socket = (remoteAddress?: string) => ({ remoteAddress });
  const request = (s: object, headers: Record<string, string> = {}) => ({ socket: s, headers }) as unknown as IncomingMessage;
  const [local, mapped, lan, gone] = [socket('127.0.0.1'), socket('::ffff:127.0.0.9'), socket('198.18.7.2'), socket(undefined)];
  for (let i = 0; i < 2; i++) {
    assert.equal(facts.fromLoopback(request(local)), true);
    assert.equal(facts.fromLoopback(request(mapped)), true);
    // X-Forwarded-For counts only from a trusted proxy: none here.
    assert.equal(facts.fromLoopback(request(lan, { 'x-forwarded-for': '127.0.0.1' })), false);
    assert.equal(facts.fromLoopback(request(gone)), false);
  }
  // A connection whose address was not known yet is judged again once it is.
  (gone as { remoteAddress?: string }).remoteAddress = '127.0.0.1';
  assert.equal(facts.fromLoopback(request(gone)), true);
});

test('password hashes: salted, verified, wrong or malformed refused', async () => {
  const a = await hashPassword('correct horse');
  const b = await hashPassword('correct horse');
  assert.notEqual(a, b);
  assert.match(a, /^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.equal(await verifyPassword('correct horse', a), true);
  assert.equal(await verifyPassword('correct horsf', a), false);
  assert.equal(await verifyPassword('correct horse', 'plain'), false);
  assert.equal(await verifyPassword('correct horse', a.replace('scrypt$15', 'scrypt$40')), false);
});
