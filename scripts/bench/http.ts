// The agent's HTTP cost (issue 22): the agent against minimal-server.ts (node:https +
// better-sqlite3, the same database, certificate, queries and JSON) in one run, interleaved and
// repeated, under autocannon (16 connections, keep-alive). For each endpoint: requests/s,
// p50/p99 latency, the server's CPU per request (from /proc), and agent/minimal ratios. Then
// start-up: spawn to the first 200 of each. Everything on 127.0.0.1.
//   npm run build && node dist/scripts/bench/http.js [--devices 500] [--seconds 5] [--rounds 3] [--db FILE]
// --db: a copy of that database is served instead of a generated fleet, and history is measured
// too (each period): use the 2-year fleet that history.ts generates and caches, e.g.
// /var/tmp/printbox-bench/fleet-500x730-old60/printbox.db.
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { device, metrics, ndjson } from '../../test/helpers/seed.js';
import { cpuMs, freePort } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const minimal = join(here, 'minimal-server.js');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const DEVICES = arg('devices', 500);
const SECONDS = arg('seconds', 5);
const ROUNDS = arg('rounds', 3);
const CONNECTIONS = 16;
const dbIndex = process.argv.indexOf('--db');
const DB = dbIndex > 0 ? process.argv[dbIndex + 1] : '';


/** A fleet like a site's: DEVICES saved printers, each with a PrinterInfo and a latest snapshot. */
function fleet(now: number): string {
  const lines: object[] = [];
  for (let i = 0; i < DEVICES; i++) {
    const serial = `BENCH${String(i).padStart(5, '0')}`;
    const ip = `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    const info = {
      ip, manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', serial, last_seen: new Date(now).toISOString(), page_count: 7000 + i,
      toner_levels: { black: 50 + (i % 50) }, consumables: ['black', 'waste_toner'], status_messages: ['Ready'],
      learned_oids: { page_count_oid: '1.3.6.1.2.1.43.10.2.1.4.1.1' }, is_mono: true, firmware: '2S0_2F00.002.007',
    };
    lines.push(device(serial, ip, now, {
      manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', hostname: serial.toLowerCase(), source_type: 'snmp', is_saved: true,
      location: `Floor ${i % 5}`, consumables: ['black', 'waste_toner'], status_messages: ['Ready'], printer_info: info,
    }));
    lines.push(metrics(serial, 'raw', now - 60_000, { page_count: 7000 + i, toner_levels: { black: 50 + (i % 50) } }));
  }
  return ndjson(lines);
}

/** Polls GET path every 10 ms until it answers 200; resolves the ms it took. */
async function waitFor200(port: number, path: string, deadline: number): Promise<number> {
  const t0 = Date.now();
  const once = () =>
    new Promise<number>((resolve) => {
      const req = https.get({ host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
    });
  while ((await once()) !== 200) {
    if (Date.now() > deadline) throw new Error(`no 200 from ${port}${path}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - t0;
}

async function load(port: number, pid: number, path: string) {
  const cpu0 = cpuMs(pid);
  const r = await autocannon({ url: `https://127.0.0.1:${port}${path}`, connections: CONNECTIONS, duration: SECONDS });
  const cpu = cpuMs(pid) - cpu0;
  if (r.non2xx || r.errors) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, cpuPerReq: cpu / r.requests.total, bytes: r.throughput.average / r.requests.average };
}

const dir = mkdtempSync(join(tmpdir(), 'printbox-http-bench-'));
const procs: ChildProcess[] = [];
try {
  const [agentPort, minimalPort] = [await freePort(), await freePort()];
  const config = join(dir, 'agent.toml');
  writeFileSync(config, `data_dir = "${dir}/data"\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${agentPort}\nhttp_port = 0\n[web.auth]\nmode = "local"\nallow_local_admin = true\n[log]\nlevel = "warn"\n`);
  let serial = 'BENCH00042';
  if (DB) {
    // A consistent copy of the cached fleet (its WAL folded in), opened by both servers.
    mkdirSync(join(dir, 'data'), { recursive: true });
    const src = new Database(DB, { readonly: true });
    await src.backup(join(dir, 'data/printbox.db'));
    serial = (src.prepare('SELECT serial FROM devices ORDER BY serial LIMIT 1 OFFSET 42').get() as { serial: string }).serial;
    src.close();
  } else {
    writeFileSync(join(dir, 'fleet.ndjson'), fleet(Date.now()));
    const imp = spawnSync(process.execPath, [cli, 'import', join(dir, 'fleet.ndjson'), '--config', config]);
    if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
  }

  // Start-up: spawn to the first 200 (the agent's certificate is made on its first start; the
  // timed start is the second, as on a box).
  const startAgent = () => {
    const p = spawn(process.execPath, [cli, 'serve', '--config', config], { stdio: 'ignore' });
    procs.push(p);
    return p;
  };
  const first = startAgent();
  await waitFor200(agentPort, '/api/version', Date.now() + 30_000);
  first.kill('SIGTERM');
  await new Promise((r) => first.once('exit', r));
  const t0 = Date.now();
  const agent = startAgent();
  await waitFor200(agentPort, '/api/version', Date.now() + 30_000);
  const agentStart = Date.now() - t0;
  const t1 = Date.now();
  const bare = spawn(process.execPath, [minimal, join(dir, 'data/printbox.db'), join(dir, 'data/tls/agent.crt'), join(dir, 'data/tls/agent.key'), String(minimalPort)], { stdio: 'ignore' });
  procs.push(bare);
  await waitFor200(minimalPort, '/api/version', Date.now() + 30_000);
  const bareStart = Date.now() - t1;

  console.log(`node ${process.version}; ${DB ? `fleet ${DB}` : `${DEVICES} saved devices`}; autocannon ${CONNECTIONS} connections, ${SECONDS} s a run, ${ROUNDS} rounds, agent and minimal server interleaved`);
  const endpoints = [`/api/devices/metrics/latest?serial=${serial}`, '/devices/list', '/api/version'];
  if (DB) for (const p of ['day', 'week', 'month', 'year']) endpoints.push(`/api/devices/metrics/history?serial=${serial}&period=${p}`);
  console.log('| endpoint | server | req/s | p50 ms | p99 ms | CPU ms/request | req/s ratio (agent/minimal) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const path of endpoints) {
    // Warm both (JIT, page cache) out of the timed runs.
    await autocannon({ url: `https://127.0.0.1:${agentPort}${path}`, connections: 4, duration: 1 });
    await autocannon({ url: `https://127.0.0.1:${minimalPort}${path}`, connections: 4, duration: 1 });
    const runs: Record<'agent' | 'minimal', Awaited<ReturnType<typeof load>>[]> = { agent: [], minimal: [] };
    for (let r = 0; r < ROUNDS; r++) {
      runs.agent.push(await load(agentPort, agent.pid!, path));
      runs.minimal.push(await load(minimalPort, bare.pid!, path));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const row = (k: 'agent' | 'minimal') => ({
      rps: median(runs[k].map((x) => x.rps)),
      p50: median(runs[k].map((x) => x.p50)),
      p99: median(runs[k].map((x) => x.p99)),
      cpu: median(runs[k].map((x) => x.cpuPerReq)),
    });
    const a = row('agent');
    const m = row('minimal');
    const name = path.includes('period=') ? `history ${path.split('period=')[1]}` : path.split('?')[0];
    console.log(`| ${name} | agent | ${a.rps.toFixed(0)} | ${a.p50} | ${a.p99} | ${a.cpu.toFixed(3)} | **${(a.rps / m.rps).toFixed(2)}x** |`);
    console.log(`| ${name} | minimal | ${m.rps.toFixed(0)} | ${m.p50} | ${m.p99} | ${m.cpu.toFixed(3)} | |`);
  }
  console.log(`\nstart-up, spawn to the first 200 on /api/version: agent ${agentStart} ms, minimal server ${bareStart} ms (${(agentStart / bareStart).toFixed(1)}x)`);
} finally {
  for (const p of procs) p.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
