// A large site on one box: 2,000 saved printers, each a real recording served by a fleet
// of snmpsimd processes on loopback, read by a real agent run with the unit's Node flags and memory
// environment (systemd/printbox-agent.service). In one run:
//   1. the simulators' own ceiling (single-OID GETs, 64 in flight over the fleet's addresses);
//   2. polling rounds through the agent's own schedule (collection.interval_minutes = 1, so rounds
//      follow each other within a minute instead of every 15: the figures per round do not depend
//      on the gap): each round's duration, readings, the agent's CPU (/proc/PID/stat) and bytes
//      written (/proc/PID/io write_bytes, wchar), the simulators' CPU; the agent's own
//      "polling round done" report beside it; RSS after each round;
//   3. /devices/list (all printers) one request at a time, agent and a minimal https +
//      better-sqlite3 server (minimal-server.ts, the same database file) taking turns: p50/p99 and
//      CPU per request; /api/devices/metrics/latest under autocannon (16 connections), both in turn,
//      before and after the lists, each after --warmup seconds of the same load, the memory
//      release a round ends with (heap-release.ts), and --warmup seconds again: req/s and CPU per
//      request (the servers on a core of their own, this process, the client, on the other:
//      pinnedApart);
//   4. with --history-db FILE (the 2-year fleet history.ts generates, e.g.
//      /var/tmp/printbox-bench-2000/fleet-2000x730-old60/printbox.db): history p50/p99 per period
//      through a second agent (unit flags) on a copy, one request at a time on random printers,
//      and the database's size.
//   With --board-mem-total KIB (a board's MemTotal, e.g. 437000 for a 512 MB Zero 2 W): the agent
//   runs with the heap cap the box's memory generator gives that board, in a memory cgroup at its
//   MemoryMax (board-memory.ts); its peak RSS, the cgroup's peak and OOM kills are reported.
// Every packet goes to 127.61.0.0/16 (allowed_ranges) or the agent's loopback HTTPS port.
//   npm run build && node dist/scripts/bench/large-site.js [--printers 2000] [--rounds 5] [--per-sim 30]
//     [--list-requests 60] [--seconds 5] [--warmup 10] [--history-db FILE] [--history-requests 200]
//     [--board-mem-total KIB] [--no-ceiling]
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openSession } from '../../src/snmp/client.js';
import { openDatabase } from '../../src/store/db.js';
import { MetricsStore } from '../../src/store/metrics.js';
import { readForecast } from '../../src/forecast/read.js';
import { parsePrinter } from '../../src/snmp/parse/printer.js';
import { simulatorCeiling } from './snmp-ceiling.js';
import { readSnmprec } from '../../test/kit/snmprec.js';
import { freeUdpPort, startSnmpSim, type SnmpSim } from '../../test/kit/snmpsim.js';
import { device, ndjson } from '../../test/kit/seed.js';
import { cpuMs, freePort, pinnedApart, rssMiB, unitEnvironment, unitNodeFlags, waitCpuIdle } from './process.js';
import { releaseAgentHeap, releaseMinimalHeap } from './heap-release.js';
import { call } from './https-call.js';
import { boardLimits, memoryCgroup, peakRssMiB, type MemoryCgroup } from './board-memory.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const minimal = join(here, 'minimal-server.js');
const option = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const PRINTERS = Number(option('printers', '2000'));
const ROUNDS = Number(option('rounds', '5'));
// snmpsimd keeps at most 32 data files open (DataFile.maxQueueEntries = 31): with more printers
// than that on one process it closes and reopens a recording's index on nearly every request.
// So the fleet is split into processes of at most 30 printers each.
const PER_SIM = Number(option('per-sim', '30'));
const LIST_REQUESTS = Number(option('list-requests', '60'));
const SECONDS = Number(option('seconds', '5'));
const WARMUP = Number(option('warmup', '10'));
const HISTORY_DB = option('history-db', '');
const HISTORY_REQUESTS = Number(option('history-requests', '200'));
const ALLOWED = '127.61.0.0/16';
const BOARD_MEM_TOTAL = option('board-mem-total', '');
const board = BOARD_MEM_TOTAL ? boardLimits(Number(BOARD_MEM_TOTAL)) : undefined;
const nodeFlags = unitNodeFlags(board ? { PRINTBOX_HEAP_MB: String(board.heapMb) } : {});
let cgroup: MemoryCgroup | undefined;
const env = { ...process.env, ...unitEnvironment() };
const log = (s: string) => process.stdout.write(s + '\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

function io(pid: number): { write_bytes: number; wchar: number } {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  const get = (k: string) => Number(new RegExp(`^${k}:\\s*(\\d+)$`, 'm').exec(text)![1]);
  return { write_bytes: get('write_bytes'), wchar: get('wchar') };
}
function simCpu(sims: SnmpSim[]): number {
  let total = 0;
  for (const s of sims) {
    for (const pid of s.pids) {
      if (!existsSync(`/proc/${pid}`)) throw new Error(`snmpsimd ${pid} (${s.workDir}) has exited`);
      total += cpuMs(pid);
    }
  }
  return total;
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const median = (xs: number[]) => pct(xs, 50);

// ---- the fleet: each printer a real recording with its own serial ----

interface Printer { serial: string; ip: string; recording: string }

/**
 * Every recording under test/fixtures/snmp with a serial, each printer a copy of one in turn with
 * that serial replaced (as text and in hex-written values) by one of its own: 2,000 printers are
 * 2,000 serials, as the agent would see them. Recordings without a serial are left out.
 */
function makeFleet(dir: string, now: number): Printer[] {
  const root = join(here, '../../../test/fixtures/snmp');
  const files = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(root, d.name)).filter((f) => f.endsWith('.snmprec')).map((f) => join(root, d.name, f)))
    .sort();
  const templates = files.flatMap((file) => {
    const serial = parsePrinter(readSnmprec(file), '127.0.0.1', new Date(now)).serial;
    return serial ? [{ file, serial, text: readFileSync(file, 'utf8') }] : [];
  });
  mkdirSync(dir, { recursive: true });
  const hex = (s: string) => Buffer.from(s, 'latin1').toString('hex');
  const printers: Printer[] = [];
  for (let i = 0; i < PRINTERS; i++) {
    const t = templates[i % templates.length];
    const serial = `${t.serial.slice(0, Math.max(2, t.serial.length - 5))}${String(i).padStart(5, '0')}`;
    const text = t.text
      .split('\n')
      .map((line) => {
        // An OID value written `0` makes snmpsimd's encoder fail and the process exit when it is
        // walked (zebra's hrDeviceID): `0.0` is the same null OID, written as snmpsim needs it.
        if (/\|6\|0$/.test(line)) return `${line}.0`;
        const m = /^([0-9.]+)\|(4x)\|([0-9a-fA-F]*)$/.exec(line);
        if (m && m[3].toLowerCase().includes(hex(t.serial))) return `${m[1]}|4x|${m[3].toLowerCase().split(hex(t.serial)).join(hex(serial))}`;
        return line.split(t.serial).join(serial);
      })
      .join('\n');
    const recording = join(dir, `${i}.snmprec`);
    writeFileSync(recording, text);
    printers.push({ serial, ip: `127.61.${Math.floor(i / 250)}.${(i % 250) + 1}`, recording });
  }
  // A few checked as a scan reads them: the serial the agent will find is the one saved.
  for (const p of [printers[0], printers[Math.floor(PRINTERS / 2)], printers[PRINTERS - 1]]) {
    const found = parsePrinter(readSnmprec(p.recording), p.ip, new Date(now)).serial;
    if (found !== p.serial) throw new Error(`${p.recording}: serial ${found}, expected ${p.serial}`);
  }
  log(`fleet: ${PRINTERS} printers from ${templates.length} recordings (${files.length - templates.length} without a serial left out), ${ALLOWED}`);
  return printers;
}

// ---- HTTP ----

function get(port: number, path: string, agent: https.Agent): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, agent, headers: { Accept: 'application/json' } }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

async function waitReady(port: number, deadline: number): Promise<void> {
  const a = new https.Agent({ rejectUnauthorized: false });
  try {
    for (;;) {
      if (await get(port, '/api/version', a).then((r) => r.status === 200, () => false)) return;
      if (Date.now() > deadline) throw new Error(`nothing answered on ${port}`);
      await sleep(100);
    }
  } finally {
    a.destroy();
  }
}

interface Server { name: string; port: number; pid: number }

/**
 * One request at a time on one keep-alive connection per server, the servers taking turns in
 * blocks of `block`, `paths()` giving each request's path: p50/p99 and CPU per request. Not
 * pinned (pinnedApart): a latency is the server's with every core open to all its threads, as on
 * a box. Pinned to one core, the list's p99 was 148 ms and history's p99 up to 18 ms, against
 * 104 and 11 ms unpinned in the next run (docs/performance.md).
 */
async function oneAtATime(servers: Server[], paths: () => string, total: number, block: number) {
  const out = new Map(servers.map((s) => [s.name, { ms: [] as number[], cpu: 0, n: 0, bytes: 0 }]));
  const agents = new Map(servers.map((s) => [s.name, new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })]));
  try {
    for (const s of servers) for (let i = 0; i < 3; i++) await get(s.port, paths(), agents.get(s.name)!); // warm
    for (let done = 0; done < total; done += block) {
      for (const s of servers) {
        const r = out.get(s.name)!;
        const cpu0 = cpuMs(s.pid);
        for (let i = 0; i < block; i++) {
          const t0 = process.hrtime.bigint();
          const res = await get(s.port, paths(), agents.get(s.name)!);
          r.ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
          if (res.status !== 200) throw new Error(`${s.name}: ${res.status}`);
          r.bytes = res.bytes;
        }
        r.cpu += cpuMs(s.pid) - cpu0;
        r.n += block;
      }
    }
  } finally {
    for (const a of agents.values()) a.destroy();
  }
  return out;
}

async function capacity(s: Server, path: string) {
  const cpu0 = cpuMs(s.pid);
  const r = await autocannon({ url: `https://127.0.0.1:${s.port}${path}`, connections: 16, duration: SECONDS });
  if (r.non2xx || r.errors) throw new Error(`${s.name} ${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p99: r.latency.p99, cpu: (cpuMs(s.pid) - cpu0) / r.requests.total };
}

/**
 * latest under autocannon, the servers taking turns (3 rounds after a warm-up): a table of their
 * medians. Each server serves the runs' own load for WARMUP seconds, goes through the memory
 * release a polling round ends with (heap-release.ts: the agent has been through it at every
 * round; the minimal server has not, and the release alone costs any Node server some 10 % a
 * request), and serves the load again for WARMUP seconds: the code V8 rebuilds after the release
 * takes some 8 s of load to settle (docs/performance.md). Capacity is what a request costs then.
 */
async function latestCapacity(servers: Server[], path: string, when: string): Promise<void> {
  const runs: Record<string, Awaited<ReturnType<typeof capacity>>[]> = { agent: [], minimal: [] };
  const warm = (s: Server) => autocannon({ url: `https://127.0.0.1:${s.port}${path}`, connections: 16, duration: WARMUP });
  await pinnedApart(servers.map((s) => s.pid), async () => {
    for (const s of servers) await warm(s);
    for (const s of servers) await (s.name === 'agent' ? releaseAgentHeap(s.port) : releaseMinimalHeap(s.port));
    for (const s of servers) await waitCpuIdle(s.pid, Date.now() + 60_000);
    for (const s of servers) await warm(s);
    for (let r = 0; r < 3; r++) for (const s of servers) runs[s.name].push(await capacity(s, path));
  });
  const lat = (k: string) => ({ rps: median(runs[k].map((x) => x.rps)), p99: median(runs[k].map((x) => x.p99)), cpu: median(runs[k].map((x) => x.cpu)) });
  // Each round's two runs follow each other: the median of their ratios leaves out the drift between rounds.
  const cpuRatios = runs.agent.map((x, i) => runs.minimal[i].cpu / x.cpu).sort((x, y) => x - y);
  const cpuRatio = median(cpuRatios);
  log('| request | server | req/s | p99 ms | CPU ms / request | ratio (minimal CPU / agent CPU, median of the rounds; req/s) |');
  log('|---|---|---|---|---|---|');
  for (const k of ['agent', 'minimal']) {
    const x = lat(k);
    log(`| latest ${when}, autocannon 16 connections, median of 3 x ${SECONDS} s after ${WARMUP} s | ${k} | ${x.rps.toFixed(0)} | ${x.p99} | ${x.cpu.toFixed(3)} | ${k === 'agent' ? `**${cpuRatio.toFixed(2)}x** [${cpuRatios[0].toFixed(2)}-${cpuRatios[cpuRatios.length - 1].toFixed(2)}]; ${(x.rps / lat('minimal').rps).toFixed(2)}x` : ''} |`);
  }
}

function agentConfig(dir: string, port: number, level: string): string {
  const config = join(dir, 'agent.toml');
  writeFileSync(
    config,
    `data_dir = "${dir}/data"\n[discovery]\nmdns_enabled = false\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${port}\nhttp_port = 0\n[web.auth]\nmode = "local"\nallow_local_admin = true\n[log]\nlevel = "${level}"\n`,
  );
  return config;
}

async function postSettings(port: number, body: unknown): Promise<void> {
  const res = await call(port, 'POST', '/settings', body);
  if (res.status !== 200) throw new Error(`settings: ${res.status} ${res.text}`);
}

const procs: ChildProcess[] = [];
const sims: SnmpSim[] = [];
const dir = mkdtempSync(join(tmpdir(), 'printbox-large-site-'));
const stop = (p: ChildProcess) => new Promise((r) => (p.exitCode !== null ? r(null) : (p.kill('SIGTERM'), p.once('exit', r))));

async function main(): Promise<void> {
  log(`# large site: ${PRINTERS} saved printers, node ${process.version} ${nodeFlags.join(' ')} ${Object.entries(unitEnvironment()).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  log(`started ${new Date().toISOString()}, load average ${load()} (2 cores, shared with other jobs)`);
  if (board) {
    cgroup = memoryCgroup('printbox-large-site', board);
    log(`board: MemTotal ${board.memTotalKiB} kB: MemoryMax ${board.memoryMax / 2 ** 20} MiB, MemoryHigh ${board.memoryHigh / 2 ** 20} MiB (${cgroup.version === 2 ? 'applied' : 'not applied: cgroup v1 has none'}), heap ${board.heapMb} MiB; the agent in ${cgroup.dir} (cgroup v${cgroup.version})`);
  }
  const now = Date.now();
  const printers = makeFleet(join(dir, 'recordings'), now);

  // 1. The simulators: processes of PER_SIM printers each, all on one UDP port, started 8 at a time.
  const port = await freeUdpPort(printers[0].ip);
  const t0 = Date.now();
  const parts: Printer[][] = [];
  for (let k = 0; k < PRINTERS; k += PER_SIM) parts.push(printers.slice(k, k + PER_SIM));
  for (let k = 0; k < parts.length; k += 8) {
    const started = await Promise.all(
      parts.slice(k, k + 8).map((part) => startSnmpSim({ endpoints: part.map((p) => ({ address: p.ip, recording: p.recording })), port, startTimeoutMs: 600_000, quiet: !process.argv.includes('--sim-log') })),
    );
    sims.push(...started);
  }
  log(`simulators: ${sims.length} snmpsimd processes, ${PER_SIM} printers each, port ${port}, started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // Each recording's index is built at its first request: once for every printer, before anything is timed.
  const w0 = Date.now();
  const queue = [...printers];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let p = queue.shift(); p; p = queue.shift()) {
        const s = openSession({ version: 'v2c', community: 'public' }, { host: p.ip, port, timeoutMs: 60_000, retries: 0, allowedRanges: [ALLOWED] });
        await s.get(['1.3.6.1.2.1.1.3.0']).finally(() => s.close());
      }
    }),
  );
  log(`simulators warmed (a GET to each printer, the recordings indexed): ${((Date.now() - w0) / 1000).toFixed(1)} s`);
  const sc0 = simCpu(sims);
  // --no-ceiling: not measured (on a machine too loaded for its 64 requests in flight to be answered in time).
  const ceiling = process.argv.includes('--no-ceiling') ? NaN : await simulatorCeiling(printers.map((p) => p.ip), port, 5, 64, [ALLOWED]);
  if (!Number.isNaN(ceiling)) log(`simulator ceiling: ${ceiling.toFixed(0)} single-OID GETs/s (64 in flight, 5 s; the simulators used ${((simCpu(sims) - sc0) / 5000 * 100).toFixed(0)} % of a core over it), load ${load()}`);

  // 2. The agent, the printers saved (imported, as a backup would bring them), the schedule at 1 minute.
  const httpsPort = await freePort();
  const config = agentConfig(dir, httpsPort, 'info');
  writeFileSync(join(dir, 'fleet.ndjson'), ndjson(printers.map((p) => device(p.serial, p.ip, now - 60_000, { source_type: 'snmp', is_saved: true }))));
  const imp = spawnSync(process.execPath, [cli, 'import', join(dir, 'fleet.ndjson'), '--config', config]);
  if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
  const agentArgs = [...nodeFlags, cli, 'serve', '--config', config];
  const agent = spawn(...(cgroup ? cgroup.wrap(process.execPath, agentArgs) : [process.execPath, agentArgs] as const), { stdio: ['ignore', 'pipe', 'inherit'], env });
  procs.push(agent);
  const pid = agent.pid!;
  interface Mark { at: number; cpu: number; io: ReturnType<typeof io>; sim: number }
  const mark = (): Mark => ({ at: Date.now(), cpu: cpuMs(pid), io: io(pid), sim: simCpu(sims) });
  const rounds: { start: Mark; end: Mark; devices: number; report: Record<string, number | boolean>; rss: number; late?: Record<string, unknown> }[] = [];
  let started: { mark: Mark; devices: number } | undefined;
  let partial = '';
  const otherWarnings: string[] = [];
  agent.stdout!.on('data', (b: Buffer) => {
    const lines = (partial + b.toString('utf8')).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const j = line.indexOf('{');
      if (j < 0) continue;
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line.slice(j)) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (rec.msg === 'polling round started') started = { mark: mark(), devices: rec.devices as number };
      else if (rec.msg === 'polling round done' && started) {
        rounds.push({ start: started.mark, end: mark(), devices: started.devices, report: rec as Record<string, number | boolean>, rss: rssMiB(pid) });
        started = undefined;
        log(`round ${rounds.length} done: ${JSON.stringify(rec)}, RSS ${rounds[rounds.length - 1].rss.toFixed(1)} MiB, load ${load()}`);
      } else if (typeof rec.msg === 'string' && rec.msg.startsWith('polling round ran late')) rounds[rounds.length - 1].late = rec;
      else if ((rec.level as number) >= 40 && otherWarnings.length < 20) otherWarnings.push(`${rec.msg} ${JSON.stringify(rec).slice(0, 200)}`);
    }
  });
  await waitReady(httpsPort, Date.now() + 120_000);
  log(`agent ready: RSS ${rssMiB(pid).toFixed(1)} MiB`);
  await postSettings(httpsPort, {
    discovery: { allowed_ranges: [ALLOWED], auto_discover: false, subnet_scan: false, port_probes_enabled: false },
    snmp: { port },
    collection: { interval_minutes: 1 },
  });
  const roundsDeadline = Date.now() + ROUNDS * 30 * 60_000;
  while (rounds.length < ROUNDS) {
    if (agent.exitCode !== null) throw new Error(`the agent exited (${agent.exitCode})`);
    if (Date.now() > roundsDeadline) throw new Error(`only ${rounds.length} rounds in time`);
    await sleep(500);
  }
  await postSettings(httpsPort, { collection: { interval_minutes: 1440 } });
  const rssAfter = rssMiB(pid);
  // The settings change has every saved printer's alerts judged again: the HTTP figures below wait for it.
  const settled = await waitCpuIdle(pid, Date.now() + 300_000);

  log(`\n## polling rounds (interval set to 1 minute: rounds follow each other; ${PRINTERS} printers)`);
  log('| round | readings / saved | duration s | agent CPU s | CPU % of a core over the round | CPU % of a 15-min interval | CPU ms / reading | write_bytes KiB / reading | wchar KiB / reading | simulators CPU % of a core | RSS after MiB | late | load |');
  log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  rounds.forEach((r, i) => {
    const s = (r.end.at - r.start.at) / 1000;
    const cpu = (r.end.cpu - r.start.cpu) / 1000;
    const n = r.report.snapshots as number;
    const wb = (r.end.io.write_bytes - r.start.io.write_bytes) / 1024;
    const wc = (r.end.io.wchar - r.start.io.wchar) / 1024;
    log(`| ${i + 1} | ${n} / ${r.devices} | ${s.toFixed(1)} (agent's own: ${((r.report.duration_ms as number) / 1000).toFixed(1)}) | ${cpu.toFixed(2)} (agent's own: ${((r.report.cpu_ms as number) / 1000).toFixed(2)}) | ${((cpu / s) * 100).toFixed(1)} | ${((cpu / 900) * 100).toFixed(2)} | ${((cpu * 1000) / n).toFixed(2)} | ${(wb / n).toFixed(2)} | ${(wc / n).toFixed(2)} | ${(((r.end.sim - r.start.sim) / 1000 / s) * 100).toFixed(0)} | ${r.rss.toFixed(1)} | ${r.late ? 'yes' : 'no'} | ${load()} |`);
  });
  log(`RSS after ${ROUNDS} rounds: ${rssAfter.toFixed(1)} MiB; database ${(statSync(join(dir, 'data/printbox.db')).size / 2 ** 20).toFixed(1)} MiB`);
  if (otherWarnings.length) log(`agent warnings: ${otherWarnings.join('\n  ')}`);

  // The HTTP part below asks no printer (the interval is a day now): the simulators go, so that
  // their processes (about 2.5 GB resident) do not share the machine with what is measured.
  await Promise.all(sims.map((s) => s.stop()));
  log(`simulators stopped before the HTTP part: load ${load()}`);

  // 3. /devices/list and latest against the minimal server on the same database file.
  const minimalPort = await freePort();
  const bare = spawn(process.execPath, [...nodeFlags, minimal, join(dir, 'data/printbox.db'), join(dir, 'data/tls/agent.crt'), join(dir, 'data/tls/agent.key'), String(minimalPort)], { stdio: 'ignore', env });
  procs.push(bare);
  await waitReady(minimalPort, Date.now() + 60_000);
  const servers: Server[] = [{ name: 'agent', port: httpsPort, pid }, { name: 'minimal', port: minimalPort, pid: bare.pid! }];
  log(`\n## HTTP, ${PRINTERS} saved printers (load ${load()}; after the agent's CPU went idle, ${(settled / 1000).toFixed(0)} s after the last round)`);
  // latest before and after the lists: the lists' 6 MB answers leave both heaps larger.
  const latest = `/api/devices/metrics/latest?serial=${encodeURIComponent(printers[42 % PRINTERS].serial)}`;
  await latestCapacity(servers, latest, 'before the lists');
  const list = await oneAtATime(servers, () => '/devices/list', LIST_REQUESTS, 10);
  log('| request | server | p50 ms | p99 ms | CPU ms / request | KiB | ratio (minimal CPU / agent CPU) |');
  log('|---|---|---|---|---|---|---|');
  const listCpu = (k: string) => list.get(k)!.cpu / list.get(k)!.n;
  for (const k of ['agent', 'minimal']) {
    const r = list.get(k)!;
    log(`| /devices/list, one at a time (${r.n}) | ${k} | ${pct(r.ms, 50).toFixed(1)} | ${pct(r.ms, 99).toFixed(1)} | ${listCpu(k).toFixed(1)} | ${(r.bytes / 1024).toFixed(0)} | ${k === 'agent' ? `**${(listCpu('minimal') / listCpu('agent')).toFixed(2)}x**` : ''} |`);
  }
  await latestCapacity(servers, latest, 'after the lists');
  if (cgroup) {
    log(`\n## under the board's limits: agent peak RSS (VmHWM) ${peakRssMiB(pid).toFixed(1)} MiB; the cgroup's peak ${(cgroup.peak() / 2 ** 20).toFixed(1)} MiB (RSS and page cache) of MemoryMax ${board!.memoryMax / 2 ** 20} MiB; allocations that hit the limit ${cgroup.limitHits()}; OOM kills ${cgroup.oomKills()}; the agent ${agent.exitCode === null && agent.signalCode === null ? 'still running' : `exited (${agent.exitCode ?? agent.signalCode})`}`);
  }
  await Promise.all([stop(agent), stop(bare)]);

  // 4. History at fleet scale: a copy of the 2-year fleet, a second agent and the minimal server on it.
  if (HISTORY_DB) await history();
  log(`\nfinished ${new Date().toISOString()}, load average ${load()}`);
}

async function history(): Promise<void> {
  const hdir = join(dir, 'history');
  mkdirSync(join(hdir, 'data'), { recursive: true });
  const src = new Database(HISTORY_DB, { readonly: true });
  const serials = src.prepare('SELECT serial FROM devices').pluck().all() as string[];
  src.close();
  const size = statSync(HISTORY_DB).size;
  copyFileSync(HISTORY_DB, join(hdir, 'data/printbox.db'));
  const port = await freePort();
  const config = agentConfig(hdir, port, 'warn');
  // The agent makes its certificate on its first start; the minimal server uses the same one.
  const agent = spawn(process.execPath, [...nodeFlags, cli, 'serve', '--config', config], { stdio: 'ignore', env });
  procs.push(agent);
  await waitReady(port, Date.now() + 180_000); // the start-up roll-up catch-up runs first
  // Then every saved printer's alerts are judged (its supply forecast, 90 days read and fitted):
  // timed requests wait until that is done.
  const settled = await waitCpuIdle(agent.pid!, Date.now() + 600_000);
  const minimalPort = await freePort();
  const bare = spawn(process.execPath, [...nodeFlags, minimal, join(hdir, 'data/printbox.db'), join(hdir, 'data/tls/agent.crt'), join(hdir, 'data/tls/agent.key'), String(minimalPort)], { stdio: 'ignore', env });
  procs.push(bare);
  await waitReady(minimalPort, Date.now() + 60_000);
  const servers: Server[] = [{ name: 'agent', port, pid: agent.pid! }, { name: 'minimal', port: minimalPort, pid: bare.pid! }];
  log(`\n## history, ${serials.length} printers x 2 years (${HISTORY_DB}: ${(size / 2 ** 20).toFixed(1)} MiB, ${(size / 2 ** 30).toFixed(3)} GiB), one request at a time on random printers, blocks of 25, after the agent's start-up work (${(settled / 1000).toFixed(0)} s) (load ${load()})`);
  log('| period | agent p50 ms | agent p99 ms | minimal p50 ms | minimal p99 ms | agent CPU ms / request |');
  log('|---|---|---|---|---|---|');
  for (const period of ['day', 'week', 'month', 'year']) {
    const path = () => `/api/devices/metrics/history?serial=${encodeURIComponent(serials[Math.floor(Math.random() * serials.length)])}&period=${period}`;
    const r = await oneAtATime(servers, path, HISTORY_REQUESTS, 25);
    const a = r.get('agent')!;
    const m = r.get('minimal')!;
    log(`| ${period} | ${pct(a.ms, 50).toFixed(2)} | **${pct(a.ms, 99).toFixed(2)}** | ${pct(m.ms, 50).toFixed(2)} | ${pct(m.ms, 99).toFixed(2)} | ${(a.cpu / a.n).toFixed(2)} |`);
  }
  await Promise.all([stop(agent), stop(bare)]);

  // What the alert service adds to each reading of a saved printer with a long history: its supply
  // forecast (90 days read and fitted, alerts/service.ts factsOf), timed in this process.
  const db = openDatabase(join(hdir, 'data/printbox.db'), { readonly: true });
  const metrics = new MetricsStore(db);
  const t = Date.now();
  const ms: number[] = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < 200; i++) {
    const t0 = process.hrtime.bigint();
    readForecast(metrics, serials[Math.floor(Math.random() * serials.length)], t);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const c = process.cpuUsage(c0);
  db.close();
  log(`\nsupply forecast of one printer (the alert service's read after each reading; 90 days), 200 printers in process: p50 ${pct(ms, 50).toFixed(2)} ms, p99 ${pct(ms, 99).toFixed(2)} ms, CPU ${((c.user + c.system) / 1000 / 200).toFixed(2)} ms each`);
}

// Interrupted: the simulators and agents go too.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void cleanUp().then(() => process.exit(130)));
async function cleanUp(): Promise<void> {
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(sims.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
  if (cgroup) {
    if (cgroup.oomKills() > 0) log(`OOM kills in the agent's cgroup: ${cgroup.oomKills()}`);
    cgroup.remove();
  }
}
try {
  await main();
} finally {
  await cleanUp();
}
