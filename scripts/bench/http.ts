// The agent's HTTP cost: the agent against minimal-server.ts (node:https +
// better-sqlite3, the same database, certificate, queries and JSON) in one run, interleaved and
// repeated, under autocannon (16 connections, keep-alive; the servers on a core of their own,
// autocannon on the others: pinnedApart). For each endpoint: requests/s, p50/p99 latency, the
// server's CPU per request (from /proc), and agent/minimal ratios, the CPU ratio as the median of
// each round's pair of runs. Then start-up: spawn to the first 200 of each. Everything on 127.0.0.1.
//   npm run build && node dist/scripts/bench/http.js [--devices 500] [--seconds 3] [--rounds 5] [--db FILE]
//     [--flags unit|none] [--only SUBSTRING] [--gc] [--release none|agent|both]
// --flags: both servers run with the agent unit's Node flags and memory environment (the default:
// what the box runs), or with none. --only: just the endpoints whose path contains SUBSTRING.
// --gc: both servers run with V8's --trace-gc, and each endpoint's row says how many young and full
// collections each server ran and their pause per 1,000 requests of its timed runs (the trace's
// own writes cost a little CPU: compare the ratios of runs without --gc).
// --release: after each endpoint's warm-up, the agent, or both servers, go through the memory
// release a polling round ends with (heap-release.ts), then serve the load 10 s more before the
// timed runs: `agent` is a box's agent against a minimal server that never had it, `both` compares
// like with like.
// --db: a copy of that database is served instead of a generated fleet, and history is measured
// too (each period): use the 2-year fleet that history.ts generates and caches, e.g.
// /var/tmp/printbox-bench/fleet-500x730-old60/printbox.db.
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import Database from 'better-sqlite3';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { device, metrics, ndjson } from '../../test/kit/seed.js';
import { readSnmprec } from '../../test/kit/snmprec.js';
import { parsePrinter, type ParsedPrinter } from '../../src/snmp/parse/printer.js';
import { cpuMs, freePort, pinnedApart, unitEnvironment, unitNodeFlags, waitCpuIdle } from './process.js';
import { releaseAgentHeap, releaseMinimalHeap } from './heap-release.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const minimal = join(here, 'minimal-server.js');
const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DEVICES = Number(option('devices') ?? 500);
const SECONDS = Number(option('seconds') ?? 3);
const ROUNDS = Number(option('rounds') ?? 5);
const CONNECTIONS = 16;
const DB = option('db') ?? '';
const UNIT_FLAGS = (option('flags') ?? 'unit') === 'unit';
const ONLY = option('only') ?? '';
const GC = process.argv.includes('--gc');
const RELEASE = option('release') ?? 'none';
if (!['none', 'agent', 'both'].includes(RELEASE)) throw new Error(`--release: none, agent or both, not ${RELEASE}`);
const nodeFlags = UNIT_FLAGS ? unitNodeFlags() : [];
const env = { ...process.env, ...(UNIT_FLAGS ? unitEnvironment() : {}) };

// The real printers' recordings (test/fixtures/snmp), parsed as a scan parses them: the fleet's
// PrinterInfo records are theirs (1-3 KiB each), not made up.
function recordedPrinters(now: number): ParsedPrinter[] {
  const root = join(here, '../../../test/fixtures/snmp');
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(root, d.name)).filter((f) => f.endsWith('.snmprec')).map((f) => join(root, d.name, f)))
    .sort()
    .map((file) => parsePrinter(readSnmprec(file), '127.0.0.1', new Date(now)));
}

/** A fleet like a site's: DEVICES saved printers, each a recorded printer's PrinterInfo, and a latest snapshot. */
function fleet(now: number): string {
  const printers = recordedPrinters(now);
  const lines: object[] = [];
  for (let i = 0; i < DEVICES; i++) {
    const p = printers[i % printers.length];
    const serial = `BENCH${String(i).padStart(5, '0')}`;
    const ip = `127.0.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    const info = { ...p.info, ip, serial };
    lines.push(device(serial, ip, now, {
      manufacturer: info.manufacturer, model: info.model, hostname: serial.toLowerCase(), source_type: 'snmp', is_saved: true,
      location: `Floor ${i % 5}`, consumables: info.consumables, status_messages: info.status_messages, printer_info: info,
    }));
    lines.push(metrics(serial, 'raw', now - 60_000, { page_count: 7000 + i, toner_levels: p.metrics.toner_levels }));
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
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, cpuPerReq: cpu / r.requests.total, bytes: r.throughput.average / r.requests.average, requests: r.requests.total };
}

/** The --gc column: a server's collections over its timed runs, per 1,000 requests. */
function gcColumnText(trace: string, requests: number): string {
  const { young, full, ms } = gcTrace(trace);
  const per = (x: number) => ((x * 1000) / requests).toFixed(x * 1000 >= requests * 10 ? 1 : 2);
  return ` ${per(young)} / ${per(full)}, ${per(ms)} ms |`;
}

/** --trace-gc's lines in `text`: young (Scavenge) and full (Mark-Compact) collections, and their pauses in ms. */
function gcTrace(text: string) {
  const gc = { young: 0, full: 0, ms: 0 };
  for (const m of text.matchAll(/ms: (Scavenge|Mark-Compact)\b.*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/g)) {
    if (m[1] === 'Scavenge') gc.young++;
    else gc.full++;
    gc.ms += Number(m[2]);
  }
  return gc;
}

const dir = mkdtempSync(join(tmpdir(), 'printbox-http-bench-'));
const procs: ChildProcess[] = [];
try {
  const [agentPort, minimalPort] = [await freePort(), await freePort()];
  const config = join(dir, 'agent.toml');
  writeFileSync(config, `data_dir = "${dir}/data"\n[discovery]\nmdns_enabled = false\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${agentPort}\nhttp_port = 0\n[web.auth]\nmode = "local"\nallow_local_admin = true\n[log]\nlevel = "warn"\n`);
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

  // Start-up: spawn to the first 200 on /api/version, the median of STARTS starts of each, the
  // last start of each kept for the load runs. The agent makes its certificate on its very first
  // start, which is not timed: a box's certificate is made once.
  const STARTS = 5;
  const agentArgs = [...nodeFlags, cli, 'serve', '--config', config];
  const minimalArgs = [...nodeFlags, minimal, join(dir, 'data/printbox.db'), join(dir, 'data/tls/agent.crt'), join(dir, 'data/tls/agent.key'), String(minimalPort)];
  // Under --gc each server's trace goes to a file of its own (the last start's is the one timed).
  const gcLog = (port: number) => join(dir, `gc-${port}.log`);
  const start = async (args: string[], port: number) => {
    const t0 = Date.now();
    const out = GC ? openSync(gcLog(port), 'w') : 'ignore';
    const p = spawn(process.execPath, GC ? ['--trace-gc', ...args] : args, { stdio: ['ignore', out, out], env });
    if (typeof out === 'number') closeSync(out);
    procs.push(p);
    await waitFor200(port, '/api/version', Date.now() + 30_000);
    return { p, ms: Date.now() - t0 };
  };
  const stop = (p: ChildProcess) => new Promise((r) => (p.kill('SIGTERM'), p.once('exit', r)));
  await stop((await start(agentArgs, agentPort)).p);
  const startTimes = { agent: [] as number[], minimal: [] as number[] };
  let agent!: ChildProcess;
  let bare!: ChildProcess;
  for (let i = 0; i < STARTS; i++) {
    const a = await start(agentArgs, agentPort);
    const m = await start(minimalArgs, minimalPort);
    startTimes.agent.push(a.ms);
    startTimes.minimal.push(m.ms);
    if (i < STARTS - 1) await Promise.all([stop(a.p), stop(m.p)]);
    else [agent, bare] = [a.p, m.p];
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [agentStart, bareStart] = [median(startTimes.agent), median(startTimes.minimal)];
  // The agent judges every saved printer's alerts after it starts: the timed runs wait for that.
  const settled = await waitCpuIdle(agent.pid!, Date.now() + 600_000);

  console.log(`node ${process.version} ${nodeFlags.join(' ') || '(no flags)'}; ${DB ? `fleet ${DB}` : `${DEVICES} saved devices`}; autocannon ${CONNECTIONS} connections, ${SECONDS} s a run, ${ROUNDS} rounds, agent and minimal server interleaved; the agent's start-up work done after ${(settled / 1000).toFixed(0)} s; memory release before the runs: ${RELEASE}`);
  let endpoints = [`/api/devices/metrics/latest?serial=${serial}`, '/devices/list', '/api/version'];
  if (DB) for (const p of ['day', 'week', 'month', 'year']) endpoints.push(`/api/devices/metrics/history?serial=${serial}&period=${p}`);
  endpoints = endpoints.filter((p) => p.includes(ONLY));
  const gcColumn = GC ? ' collections per 1,000 requests: young / full, pause ms |' : '';
  console.log(`| endpoint | server | req/s | p50 ms | p99 ms | CPU ms/request | KiB/response | req/s ratio (agent/minimal) | CPU ratio (minimal/agent), median of the rounds [min-max] |${gcColumn}`);
  console.log(`|---|---|---|---|---|---|---|---|---|${GC ? '---|' : ''}`);
  for (const path of endpoints) {
    // Warm both (JIT, page cache) out of the timed runs.
    await autocannon({ url: `https://127.0.0.1:${agentPort}${path}`, connections: 4, duration: 1 });
    await autocannon({ url: `https://127.0.0.1:${minimalPort}${path}`, connections: 4, duration: 1 });
    if (RELEASE !== 'none') {
      await releaseAgentHeap(agentPort);
      if (RELEASE === 'both') await releaseMinimalHeap(minimalPort);
      for (const p of [agent, bare]) await waitCpuIdle(p.pid!, Date.now() + 60_000);
      for (const port of [agentPort, minimalPort]) await autocannon({ url: `https://127.0.0.1:${port}${path}`, connections: CONNECTIONS, duration: 10 });
    }
    const runs: Record<'agent' | 'minimal', Awaited<ReturnType<typeof load>>[]> = { agent: [], minimal: [] };
    const traced = { agent: agentPort, minimal: minimalPort };
    const traceFrom = GC ? { agent: statSync(gcLog(agentPort)).size, minimal: statSync(gcLog(minimalPort)).size } : undefined;
    await pinnedApart([agent.pid!, bare.pid!], async () => {
      for (let r = 0; r < ROUNDS; r++) {
        runs.agent.push(await load(agentPort, agent.pid!, path));
        runs.minimal.push(await load(minimalPort, bare.pid!, path));
      }
    });
    const row = (k: 'agent' | 'minimal') => ({
      rps: median(runs[k].map((x) => x.rps)),
      p50: median(runs[k].map((x) => x.p50)),
      p99: median(runs[k].map((x) => x.p99)),
      cpu: median(runs[k].map((x) => x.cpuPerReq)),
      kb: median(runs[k].map((x) => x.bytes)) / 1024,
      gc: traceFrom ? gcColumnText(readFileSync(gcLog(traced[k])).subarray(traceFrom[k]).toString(), runs[k].reduce((n, x) => n + x.requests, 0)) : '',
    });
    const a = row('agent');
    const m = row('minimal');
    // A round's two runs follow each other: their ratio leaves out what drifts between rounds.
    const cpuRatios = runs.agent.map((x, i) => runs.minimal[i].cpuPerReq / x.cpuPerReq).sort((x, y) => x - y);
    const name = path.includes('period=') ? `history ${path.split('period=')[1]}` : path.split('?')[0];
    console.log(`| ${name} | agent | ${a.rps.toFixed(0)} | ${a.p50} | ${a.p99} | ${a.cpu.toFixed(3)} | ${a.kb.toFixed(1)} | **${(a.rps / m.rps).toFixed(2)}x** | **${median(cpuRatios).toFixed(2)}x** [${cpuRatios[0].toFixed(2)}-${cpuRatios[cpuRatios.length - 1].toFixed(2)}] |${a.gc}`);
    console.log(`| ${name} | minimal | ${m.rps.toFixed(0)} | ${m.p50} | ${m.p99} | ${m.cpu.toFixed(3)} | ${m.kb.toFixed(1)} | | |${m.gc}`);
  }
  console.log(`\nstart-up, spawn to the first 200 on /api/version, median of ${STARTS}: agent ${agentStart} ms (${startTimes.agent.join(', ')}), minimal server ${bareStart} ms (${startTimes.minimal.join(', ')}): ${(agentStart / bareStart).toFixed(1)}x`);
} finally {
  for (const p of procs) p.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
