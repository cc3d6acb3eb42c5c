// The runtime the suite runs on is the box's: the Node.js of image/printbox.conf, with the
// better-sqlite3 the box ships. Both facts matter because better-sqlite3 12 under Node 24 aborted
// the agent (SIGABRT in Statement's finalizer, "RemoveEnvironmentCleanupHook: (env) != nullptr")
// whenever the garbage collector or the process exit finalized a statement.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../kit/agent.js';

test('the suite runs on the Node.js the box ships (scripts/box-node.sh)', () => {
  const conf = readFileSync(join(repoRoot, 'image/printbox.conf'), 'utf8');
  const shipped = /^NODE_VERSION=(\S+)$/m.exec(conf)?.[1];
  assert.ok(shipped, 'image/printbox.conf names NODE_VERSION');
  assert.equal(process.versions.node, shipped, 'run the tests with npm test (it puts the box\'s Node first in PATH)');
});

test('statements left to the garbage collector and the process exit do not abort Node', () => {
  // 2,000 statements made and dropped, a forced collection from a timer, then a normal exit that
  // finalizes whatever is left: better-sqlite3 12.11.1 on Node 24.21.0 exits 134 here every time.
  const script = `
    const Database = require(${JSON.stringify(join(repoRoot, 'node_modules/better-sqlite3'))});
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (a)');
    for (let i = 0; i < 2000; i++) db.prepare('INSERT INTO t VALUES (' + i + ')').run();
    setTimeout(() => { globalThis.gc(); console.log(db.prepare('SELECT count(*) FROM t').pluck().get()); }, 10);
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.stderr, '', 'nothing on stderr');
  assert.equal(r.signal, null, `no signal (got ${r.signal})`);
  assert.equal(r.status, 0);
  assert.equal(r.stdout.trim(), '2000');
});
