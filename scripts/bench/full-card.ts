// Start on a full card ("start on a full disk in under 5 s, serving reads"). The real
// agent, with the unit's Node flags, on a real file system that is full: a tmpfs (root only) holding
// a database of 500 printers with 14 days of 15-minute raw readings, filled to the last byte. Each
// run: spawn -> first 200 of GET /devices/list (the saved printers: a real read of the database),
// then a write must get 507. Two cases, --runs times each:
//   reserve     the card is full but the agent's reserve file is there: it is given back at once
//   no-reserve  nothing to give back: the database is opened for this process alone
// Only 127.0.0.1 is contacted.
//   npm run build && node dist/scripts/bench/full-card.js [--runs 5]
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/store/db.js';
import { ensureReserve, releaseReserve } from '../../src/store/reserve-file.js';
import { inserter, reading } from '../../test/kit/rollup-db.js';
import { httpsRequest, importNdjson, writeConfig } from '../../test/kit/agent.js';
import { device, ndjson } from '../../test/kit/seed.js';
import { fill, mountCard, unfill, unmountCards } from '../../test/kit/card.js';
import { unitNodeFlags } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5;
const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 500 saved printers, 14 days of raw readings every 15 minutes (made once, copied onto each card). */
async function template(): Promise<string> {
  const cfg = await writeConfig({ httpPort: 0 });
  const r = await importNdjson(cfg.configPath, ndjson(Array.from({ length: 500 }, (_, i) => device(`FULL-${i}`, { is_saved: true }))));
  if (r.code !== 0) throw new Error(r.stderr);
  const file = join(cfg.dataDir, 'printbox.db');
  const db = openDatabase(file);
  const ins = inserter(db);
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  for (let ts = end - 14 * 24 * HOUR; ts < end; ts += 15 * 60_000) ins(Array.from({ length: 500 }, (_, i) => reading(`FULL-${i}`, i, ts)));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return file;
}

async function oneRun(db: string, withReserve: boolean): Promise<{ ready: number; write: number }> {
  const card = mountCard(Math.ceil(statSync(db).size / 1048576) + 48);
  const cfg = await writeConfig({ dataDir: join(card, 'data'), httpPort: 0 });
  mkdirSync(cfg.dataDir, { recursive: true });
  copyFileSync(db, join(cfg.dataDir, 'printbox.db'));
  if (withReserve) ensureReserve(cfg.dataDir, 0);
  else releaseReserve(cfg.dataDir);
  fill(card);
  const t0 = performance.now();
  const p = spawn(process.execPath, [...unitNodeFlags(), cli, 'serve', '--config', cfg.configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  p.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise((r) => p.once('exit', r));
  try {
    let ready = NaN;
    for (let i = 0; i < 300 && Number.isNaN(ready); i++) {
      if (p.exitCode !== null) throw new Error(`the agent exited (${p.exitCode}): ${stderr}`);
      const r = await httpsRequest(cfg.httpsPort, '/devices/list', { insecure: true, timeoutMs: 2000, headers: { Accept: 'application/json' } }).catch(() => undefined);
      if (r?.status === 200 && r.body.includes('FULL-499')) ready = performance.now() - t0;
      else await sleep(20);
    }
    const w = await httpsRequest(cfg.httpsPort, '/settings', {
      insecure: true,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ collection: { interval_minutes: 31 } }),
    });
    return { ready, write: w.status };
  } finally {
    p.kill('SIGTERM');
    await exited;
    unfill(card);
    rmSync(cfg.dir, { recursive: true, force: true });
    unmountCards();
  }
}

const db = await template();
console.log(`database: ${(statSync(db).size / 1048576).toFixed(1)} MiB (500 printers, 14 days of raw readings); node flags: ${unitNodeFlags().join(' ')}`);
for (const withReserve of [true, false]) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await oneRun(db, withReserve));
  const ms = runs.map((r) => r.ready).sort((a, b) => a - b);
  console.log(
    `${withReserve ? 'reserve   ' : 'no-reserve'}: spawn -> first 200 of /devices/list (500 printers) min ${ms[0].toFixed(0)} / median ${ms[ms.length >> 1].toFixed(0)} / max ${ms[ms.length - 1].toFixed(0)} ms; a write then answers ${[...new Set(runs.map((r) => r.write))].join(', ')}`,
  );
}
rmSync(dirname(dirname(db)), { recursive: true, force: true });
