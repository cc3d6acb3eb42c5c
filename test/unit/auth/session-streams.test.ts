// Channels bound to a session (auth/session-streams.ts) end when the session does: on a simulated
// clock at its expiry (also past setTimeout's longest delay), at sign-out and password change
// through the store's event, and when another process removed it, at the next recheck.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionStore, SESSION_MAX_MS, type SessionEnd } from '../../../src/auth/sessions.js';
import { SessionStreams } from '../../../src/auth/session-streams.js';
import { openDatabase } from '../../../src/store/db.js';
import { simClock } from '../../kit/sim-clock.js';

const HOUR = 3600_000;

function setup() {
  const clock = simClock(Date.UTC(2025, 0, 1));
  const store = new SessionStore(openDatabase(':memory:'), clock.now);
  const streams = new SessionStreams(store, clock.now, clock);
  const ends: [string, SessionEnd][] = [];
  const open = (name: string, user = 'tech', expires?: number) => {
    const { token, session } = store.create(user, expires);
    const binding = streams.bind(token, session, (why) => ends.push([name, why]));
    return { token, binding };
  };
  return { clock, store, streams, ends, open };
}

test('a stream ends at its session’s expiry, not before', () => {
  const { clock, ends, open, streams } = setup();
  open('a', 'tech', clock.now() + HOUR);
  clock.advance(HOUR - 1);
  assert.deepEqual(ends, []);
  clock.advance(1);
  assert.deepEqual(ends, [['a', 'expired']]);
  assert.equal(streams.size, 0);
});

test('a 30-day session (past setTimeout’s longest delay) ends at its expiry', () => {
  const { clock, ends, open } = setup();
  open('long', 'tech', clock.now() + SESSION_MAX_MS);
  clock.advance(SESSION_MAX_MS - HOUR);
  assert.deepEqual(ends, []);
  clock.advance(HOUR);
  assert.deepEqual(ends, [['long', 'expired']]);
});

test('logout ends that session’s streams only; a password change ends the user’s others', () => {
  const { store, ends, open, streams } = setup();
  const a = open('a');
  open('tech-elsewhere', 'tech'); // another session of the same user
  const other = open('other-user', 'someone');
  store.delete(a.token);
  assert.deepEqual(ends, [['a', 'logout']]);
  const keep = open('keeper');
  store.deleteUser('tech', keep.token);
  assert.deepEqual(ends.slice(1), [['tech-elsewhere', 'password_changed']]);
  assert.equal(streams.size, 2, 'the keeper and the other user’s stream stay');
  other.binding.unbind();
  assert.equal(streams.size, 1);
  store.delete(other.token);
  assert.equal(ends.length, 2, 'an unbound stream is not told');
});

test('a session removed by another process ends its stream at the next recheck', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pbx-streams-'));
  try {
    const file = join(dir, 'db.sqlite');
    const store = new SessionStore(openDatabase(file));
    const streams = new SessionStreams(store);
    const ends: SessionEnd[] = [];
    const { token, session } = store.create('tech');
    const b = streams.bind(token, session, (why) => ends.push(why));
    b.recheck();
    assert.deepEqual(ends, []);
    const elsewhere = openDatabase(file); // `printbox-agent passwd` beside the running agent
    new SessionStore(elsewhere).deleteUser('tech');
    elsewhere.close();
    b.recheck();
    assert.deepEqual(ends, ['ended']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
