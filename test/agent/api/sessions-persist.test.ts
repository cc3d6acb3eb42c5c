// Sessions outlast an agent restart: the database keeps the SHA-256 of each
// token with its user and expiry, never the token; sign-out, a password change (in the UI or with
// `passwd` on the box) end them as before, and expired rows are pruned. Real agent processes on
// one data directory, real HTTPS, the real SQLite file read byte for byte.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startAgent, writeConfig, expectJson, expectTextError, type Agent, type Res } from '../../kit/agent.js';
import { MAX_SESSIONS, SessionStore, tokenHash } from '../../../src/auth/sessions.js';
import { openDatabase } from '../../../src/store/db.js';

const json = (value: unknown, cookie?: string) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(cookie ? { Cookie: cookie } : {}) },
  body: JSON.stringify(value),
});
const tokenOf = (r: Res): string => {
  const c = (r.headers['set-cookie'] ?? []).find((v) => v.startsWith('pm_agent_session='));
  assert.ok(c, `no session cookie: ${r.status} ${r.body}`);
  return c.split(';')[0].slice('pm_agent_session='.length);
};
const cookie = (token: string) => `pm_agent_session=${token}`;

describe('sessions kept in the database', () => {
  let agent: Agent;
  let dbFile = '';
  const login = async (password = 'first password') => {
    const r = await agent.request('/api/v1/auth/login', json({ username: 'admin', password }));
    assert.equal(r.status, 200, r.body);
    return tokenOf(r);
  };
  const works = async (token: string) => expectJson(await agent.request('/devices/list', { headers: { Cookie: cookie(token), Accept: 'application/json' } }));
  const refused = async (token: string) =>
    expectTextError(await agent.request('/devices/list', { headers: { Cookie: cookie(token) } }), 401, 'unauthorized');
  const rows = () => {
    const db = openDatabase(dbFile, { readonly: true });
    try {
      return db.prepare('SELECT token_hash, user, created_at, expires_at FROM sessions ORDER BY created_at').all() as {
        token_hash: Buffer; user: string; created_at: number; expires_at: number;
      }[];
    } finally {
      db.close();
    }
  };

  before(async () => {
    const config = await writeConfig({ authMode: 'password', allowLocalAdmin: false });
    const made = await runCli(['passwd', 'admin'], { configPath: config.configPath, input: 'first password\n' });
    assert.equal(made.code, 0, made.stderr);
    agent = await startAgent({ config });
    dbFile = join(agent.dataDir, 'printbox.db');
    assert.ok(existsSync(dbFile), dbFile);
  });
  after(() => agent?.stop());

  test('a restart on the same data directory keeps the technician signed in', async () => {
    const t0 = Date.now();
    const a = await login();
    const b = await login();
    await works(a);
    await agent.restart();
    await works(a);
    await works(b);
    const stored = rows();
    assert.equal(stored.length, 2);
    for (const r of stored) {
      assert.equal(r.user, 'admin');
      assert.ok(Math.abs(r.expires_at - (t0 + 86_400_000)) < 60_000, `expires_at ${r.expires_at}`);
    }
  });

  test('the database holds SHA-256 hashes of the tokens, never a token', async () => {
    const t = await login();
    const want = createHash('sha256').update(t).digest();
    assert.ok(rows().some((r) => r.token_hash.equals(want)), 'the row is keyed by the SHA-256 of the token');
    // Every byte SQLite wrote (the file and its write-ahead log): no token in any spelling a
    // cookie or a decoder would give.
    const bytes = [dbFile, `${dbFile}-wal`].filter(existsSync).map((f) => readFileSync(f));
    for (const form of [Buffer.from(t, 'latin1'), Buffer.from(t, 'base64url'), Buffer.from(Buffer.from(t, 'base64url').toString('hex'), 'latin1')]) {
      for (const b of bytes) assert.equal(b.indexOf(form), -1, 'a token (or its bytes) was found in the database files');
    }
  });

  test('sign-out ends a session for good, across a restart; the others stay', async () => {
    const a = await login();
    const b = await login();
    const out = await agent.request('/api/v1/auth/logout', { method: 'POST', headers: { Cookie: cookie(a) } });
    assert.equal(out.status, 204);
    await refused(a);
    assert.ok(!rows().some((r) => r.token_hash.equals(tokenHash(a))), 'its row is gone');
    await agent.restart();
    await refused(a);
    await works(b);
  });

  test('a password change ends the other sessions, across a restart', async () => {
    const keep = await login();
    const other = await login();
    const r = await agent.request('/api/v1/auth/password', json({ current_password: 'first password', new_password: 'second password' }, cookie(keep)));
    assert.equal(r.status, 204, r.body);
    await refused(other);
    await agent.restart();
    await refused(other);
    await works(keep);
    assert.deepEqual(rows().map((x) => x.token_hash.toString('hex')), [tokenHash(keep).toString('hex')], 'only the changer\'s own session is left');
  });

  test('passwd on the box ends every session of the user at once, the agent running', async () => {
    const t = await login('second password');
    await works(t);
    const r = await runCli(['passwd', 'admin'], { configPath: agent.configPath, input: 'third password\n' });
    assert.equal(r.code, 0, r.stderr);
    await refused(t);
    assert.equal(rows().length, 0);
  });

  test('expired rows are pruned when the agent starts', async () => {
    const t = await login('third password');
    // A row whose expiry has passed, written beside the agent (WAL: a second writer waits its turn).
    const db = openDatabase(dbFile);
    db.prepare('INSERT INTO sessions (token_hash, user, created_at, expires_at) VALUES (?, ?, ?, ?)').run(tokenHash('old token'), 'admin', 1, 2);
    db.close();
    assert.equal(rows().length, 2);
    await agent.restart();
    assert.deepEqual(rows().map((x) => x.token_hash.toString('hex')), [tokenHash(t).toString('hex')]);
    await works(t);
  });
});

describe('SessionStore on its own', () => {
  test('an expired session is refused and pruned; the table is capped, oldest first', () => {
    let t = 1_000_000;
    const db = openDatabase(':memory:');
    const s = new SessionStore(db, () => t);
    const count = () => db.prepare('SELECT count(*) FROM sessions').pluck().get() as number;
    const short = s.create('a', t + 1000).token;
    const long = s.create('a').token;
    t += 1001;
    s.sweep();
    assert.equal(count(), 1, 'the expired row is pruned');
    assert.equal(s.get(short), undefined);
    assert.equal(s.get(long)?.user, 'a');
    t += 86_400_000;
    assert.equal(s.get(long), undefined, 'expired at its time');
    assert.equal(count(), 0, 'and its row removed when seen');
    const first = s.create('b').token;
    t += 1;
    db.transaction(() => {
      for (let i = 1; i < MAX_SESSIONS; i++) s.create('b');
    })();
    assert.equal(count(), MAX_SESSIONS);
    t += 1;
    const last = s.create('b').token;
    assert.equal(count(), MAX_SESSIONS, 'still at the cap');
    assert.equal(s.get(first), undefined, 'the oldest went');
    assert.ok(s.get(last));
    db.close();
  });

  test('a card that takes no writes: sign-in and sign-out still work for this run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'printbox-sessions-'));
    try {
      const file = join(dir, 'a.db');
      const writable = openDatabase(file);
      const s0 = new SessionStore(writable);
      const before = s0.create('c').token;
      writable.close();
      const problems: string[] = [];
      const ro = openDatabase(file, { readonly: true });
      const s = new SessionStore(ro, Date.now, (err, doing) => problems.push(`${doing}: ${(err as NodeJS.ErrnoException).code}`));
      const t = s.create('c').token;
      assert.equal(s.get(t)?.user, 'c', 'kept in memory');
      assert.match(problems[0], /^storing a session: SQLITE_READONLY/);
      assert.equal(s.get(before)?.user, 'c');
      s.delete(before);
      assert.equal(s.get(before), undefined, 'refused although its row could not be deleted');
      s.delete(t);
      assert.equal(s.get(t), undefined);
      ro.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
