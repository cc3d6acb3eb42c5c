// At boot the agent starts beside provisioning (printbox-provision.service): two processes open
// a new database at once, migrate it, and make the setup code. Real processes on a real file,
// started together many times: each must find the other's work done instead of doing it again.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../../src/store/db.js';
import { AccountStore, hashSetupCode } from '../../../src/store/accounts.js';
import { latestVersion } from '../../../src/store/migrations.js';

const src = (rel: string) => fileURLToPath(new URL(`../../../src/${rel}`, import.meta.url));
const ROUNDS = 12;

/** Runs `body` in two processes that start their work together (once `go` exists); their outputs. */
async function together(dir: string, body: string): Promise<string[]> {
  const go = join(dir, 'go');
  const script = `
    const { existsSync, writeFileSync } = await import('node:fs');
    const { openDatabase } = await import(${JSON.stringify(src('store/db.js'))});
    const { AccountStore } = await import(${JSON.stringify(src('store/accounts.js'))});
    const { ensureSetupCode } = await import(${JSON.stringify(src('auth/setup-code.js'))});
    writeFileSync(${JSON.stringify(join(dir, 'ready-'))} + process.pid, '');
    const wait = new Int32Array(new SharedArrayBuffer(4));
    while (!existsSync(${JSON.stringify(go)})) Atomics.wait(wait, 0, 0, 1);
    ${body}`;
  const runs = [0, 1].map(
    () =>
      new Promise<string>((resolve, reject) => {
        const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        p.stdout.on('data', (b: Buffer) => (out += b));
        p.stderr.on('data', (b: Buffer) => (err += b));
        p.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`exit ${code}: ${err.trim()}`))));
      }),
  );
  // The start is given once both have loaded their modules (progress, not a time).
  while (readdirSync(dir).filter((f) => f.startsWith('ready-')).length < 2) await new Promise((r) => setTimeout(r, 5));
  writeFileSync(go, '');
  return Promise.all(runs);
}

test('two processes opening a new database at once: both migrate it, each step applied once', async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'printbox-two-'));
    try {
      const db = join(dir, 'printbox.db');
      const out = await together(dir, `const db = openDatabase(${JSON.stringify(db)}); console.log(db.pragma('user_version', { simple: true })); db.close();`);
      assert.deepEqual(out, [String(latestVersion), String(latestVersion)], `round ${round}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('two processes making the setup code at once: one code, in the file and as the stored hash', async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'printbox-two-'));
    try {
      const file = join(dir, 'printbox.db');
      openDatabase(file).close(); // the schema first: this test is about the code
      const out = await together(
        dir,
        `const db = openDatabase(${JSON.stringify(file)}); console.log(ensureSetupCode(new AccountStore(db), ${JSON.stringify(dir)})); db.close();`,
      );
      assert.equal(out[0], out[1], `round ${round}: both processes show the same code`);
      assert.equal(readFileSync(join(dir, 'setup-code'), 'utf8').trim(), out[0]);
      const db = openDatabase(file);
      assert.equal(new AccountStore(db).setupCodeHash(), hashSetupCode(out[0]), `round ${round}: the code shown is the one that works`);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
