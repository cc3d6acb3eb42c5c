// Bounded shutdown: SIGTERM -> exit of the real agent, with the unit's Node flags,
// while it is busy with work that waits on the network. 100 saved printers that never answer
// (loopback addresses nothing listens on), snmp_timeout_ms 10000, discover_concurrency 2: a polling
// round or a scan of them would take 500 s. Scenarios, each run --runs times on a fresh agent:
//   idle       nothing running (the floor: listeners, server link, database close)
//   round      a polling round of the 100 (started by the server's `collect` command, as the
//              schedule starts it), SIGTERM 1 s into it
//   everything the round, a scan of the 100 addresses and 3 single reads (POST
//              /devices/metrics/collect) at once, SIGTERM 1 s in
//   rollup     the start-up roll-up catch-up of 14 days of raw snapshots of 500 printers (the
//              scheduled pass's day batches), SIGTERM once its first day is written
// Reported per scenario: SIGTERM -> exit (ms, as the parent sees the process end), min / median /
// max, the agent's own figure (its "stopped" log line) and the exit codes. The enrolled server is
// the test peer (test/kit/server-peer.ts) on 127.0.0.1. Only 127.0.0.0/8 is contacted.
//   npm run build && node dist/scripts/bench/shutdown.js [--runs 5] [--scenarios idle,round,everything,rollup]
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import { openDatabase } from '../../src/store/db.js';
import { inserter, reading } from '../../test/kit/rollup-db.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpsRequest, importNdjson, writeConfig } from '../../test/kit/agent.js';
import { device, ndjson } from '../../test/kit/seed.js';
import { startServerPeer, type ServerPeer } from '../../test/kit/server-peer.js';
import { unitNodeFlags } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const argOf = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RUNS = Number(argOf('runs', '5'));
const SCENARIOS = argOf('scenarios', 'idle,round,everything,rollup').split(',') as Scenario[];
type Scenario = 'idle' | 'round' | 'everything' | 'rollup';

const SILENT = Array.from({ length: 100 }, (_, i) => ({ serial: `SILENT-${String(i + 1).padStart(3, '0')}`, ip: `127.0.21.${i + 1}` }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  ms: number;
  agentMs?: number;
  code: number | null;
  signal: string | null;
  deadline: boolean;
  /** The agent logged that the work under way was stopped (not finished). */
  cut: boolean;
}

const HOUR = 3_600_000;
/** A database holding 14 days of raw snapshots of 500 printers, never rolled up (made once). */
function rollupTemplate(): string {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-shutdown-bench-'));
  const file = join(dir, 'printbox.db');
  const db = openDatabase(file);
  const ins = inserter(db);
  const end = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  for (let ts = end - 14 * 24 * HOUR; ts < end; ts += 15 * 60_000) {
    ins(Array.from({ length: 500 }, (_, d) => reading(`R${String(d).padStart(4, '0')}`, d, ts)));
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return file;
}
let template: string | undefined;

async function once(peer: ServerPeer, scenario: Scenario): Promise<Run> {
  const cfg = await writeConfig({
    httpPort: 0,
    serverUrl: peer.url,
    server: { enrollment_token: peer.enrollmentToken, ca_file: peer.caFile },
  });
  let proc: ChildProcess | undefined;
  try {
    if (scenario === 'rollup') {
      template ??= rollupTemplate();
      mkdirSync(cfg.dataDir, { recursive: true });
      copyFileSync(template, join(cfg.dataDir, 'printbox.db'));
    }
    const imported = await importNdjson(cfg.configPath, ndjson(SILENT.map((d) => device(d.serial, { ip: d.ip, is_saved: true }))));
    if (imported.code !== 0) throw new Error(`seed import failed: ${imported.stderr}`);
    let out = '';
    proc = spawn(process.execPath, [...unitNodeFlags(), cli, 'serve', '--config', cfg.configPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    proc.stdout!.on('data', (b: Buffer) => (out += b.toString('utf8')));
    const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((r) =>
      proc!.once('exit', (code, signal) => r({ code, signal, at: Date.now() })),
    );
    const post = (path: string, body: unknown) =>
      httpsRequest(cfg.httpsPort, path, {
        insecure: true,
        method: 'POST',
        timeoutMs: 30_000,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
      });
    for (let k = 0; ; k++) {
      try {
        if ((await httpsRequest(cfg.httpsPort, '/api/version', { insecure: true, timeoutMs: 2000 })).status === 200) break;
      } catch {
        if (k > 200) throw new Error('agent not ready');
      }
      await sleep(100);
    }
    await peer.waitFor(() => peer.agentSockets().some((s) => s.closedAt === undefined), 20_000, 'agent socket');
    const settings = await post('/settings', {
      discovery: { allowed_ranges: ['127.0.0.0/8'], snmp_timeout_ms: 10_000, discover_concurrency: 2, manual_ranges: true, ranges_text: '127.0.21.1-100' },
    });
    if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.body}`);
    if (scenario === 'round' || scenario === 'everything') {
      void peer.command('collect', {}).catch(() => undefined);
      for (let k = 0; !out.includes('"polling round started"'); k++) {
        if (k > 400) throw new Error('the polling round did not start');
        await sleep(25);
      }
    }
    if (scenario === 'everything') {
      if ((await post('/discover', {})).status !== 202) throw new Error('scan not started');
      for (const d of SILENT.slice(0, 3)) void post('/devices/metrics/collect', { serial: d.serial }).catch(() => undefined);
    }
    if (scenario === 'rollup') {
      // Once the first day batch is committed (read-only connection, WAL: no lock held).
      const db = new Database(join(cfg.dataDir, 'printbox.db'), { readonly: true });
      const wm = db.prepare("SELECT done_until FROM rollup_state WHERE tier = 'hourly'").pluck();
      for (let k = 0; wm.get() === undefined; k++) {
        if (k > 2000 || out.includes('"rollup pass done"')) throw new Error('the roll-up pass was not caught running');
        await sleep(5);
      }
      db.close();
    } else {
      await sleep(1000);
    }
    const t0 = Date.now();
    proc.kill('SIGTERM');
    const backstop = setTimeout(() => proc!.kill('SIGKILL'), 60_000);
    const exit = await exited;
    clearTimeout(backstop);
    const stopped = /"ms":(\d+),"msg":"stopped"/.exec(out);
    return {
      ms: exit.at - t0,
      agentMs: stopped ? Number(stopped[1]) : undefined,
      code: exit.code,
      signal: exit.signal,
      deadline: out.includes('shutdown deadline reached'),
      cut:
        scenario === 'idle' ||
        (scenario === 'rollup'
          ? out.includes('rollup pass stopped between batches')
          : out.includes('"polling round stopped"') && (scenario === 'round' || out.includes('"discovery stopped"'))),
    };
  } finally {
    if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    rmSync(cfg.dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const peer = await startServerPeer();
try {
  console.log(`SIGTERM -> exit, ${RUNS} runs per scenario; Node flags: ${unitNodeFlags().join(' ') || '(none)'}`);
  console.log('| scenario | min ms | median ms | max ms | agent "stopped" ms (max) | exit codes | deadline hit | work cut short |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const scenario of SCENARIOS) {
    const runs: Run[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await once(peer, scenario));
    const ms = runs.map((r) => r.ms);
    const agent = runs.map((r) => r.agentMs ?? NaN);
    const codes = [...new Set(runs.map((r) => (r.signal ? r.signal : String(r.code))))].join(',');
    console.log(
      `| ${scenario} | ${Math.min(...ms)} | ${median(ms)} | ${Math.max(...ms)} | ${Math.max(...agent)} | ${codes} | ${runs.filter((r) => r.deadline).length} | ${runs.filter((r) => r.cut).length}/${runs.length} |`,
    );
  }
} finally {
  await peer.stop();
  if (template) rmSync(dirname(template), { recursive: true, force: true });
}
