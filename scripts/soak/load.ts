// Read load during a scan and a roll-up: a fixed 200 requests/s (autocannon's
// overallRate, not as fast as it can) over the read endpoints of a real agent holding a 500-printer
// site, for --duration seconds (default 600), while the agent scans (snmpsim printers and silent
// addresses on loopback, one scan after another for the whole run) and a roll-up runs: at
// --rollup-at seconds two days of raw history of every printer are imported through the CLI (a
// writer beside the agent, as a restore is) and rolled up, either by `printbox-agent rollup` at
// once (--rollup-by cli, the default: another process on the same 2 cores and database) or by the
// agent's own scheduled pass at 5 past the hour (--rollup-by schedule: start the run so that a
// :05 falls after the import). Reports errors (connection
// errors, timeouts, non-2xx: must be 0) and latency p50/p99 (goal: p99 < 50 ms).
//   npm run build && node dist/scripts/soak/load.js [--duration 600] [--rate 200] [--rollup-by cli|schedule]
// Needs Debian's snmpsim (bash scripts/setup-test-deps.sh). Only 127.0.0.0/8 is used.
import autocannon from 'autocannon';
import { startAgent, importNdjson, runCli, type Agent } from '../../test/kit/agent.js';
import { startSnmpSim, fixturePath, type SnmpSim } from '../../test/kit/snmpsim.js';
import { device, metrics, ndjson, DAY, MINUTE } from '../../test/kit/seed.js';
import { isMain, machineLine, numberArg, quantile } from './cli.js';

const FLEET = 500;
const POLL_MINUTES = 15;
const RECORDINGS = ['kyocera_p2040', 'epson_sc', 'epson_cw', 'kyocera_cs4053', 'brother'].map((r) => `printmaster/${r}.snmprec`);
/** Simulated printers answering on 127.0.5.1-20; the scan covers 127.0.5.1-254 (the rest is silent). */
const SIM_PRINTERS = 20;

export interface LoadOptions {
  durationSeconds: number;
  rate?: number;
  /** Seconds into the run when the history import and the roll-up start (default a quarter in). */
  rollupAtSeconds?: number;
  rollupBy?: 'cli' | 'schedule';
  log?: (line: string) => void;
}

/** Latency of the answers that arrived in one phase of the run. */
export interface PhaseLatency {
  phase: string;
  seconds: number;
  answers: number;
  p50: number;
  p99: number;
  max: number;
}

export interface LoadResult {
  durationSeconds: number;
  rate: number;
  requests: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  scans: number;
  rollup: string;
  /** The same answers split by what ran beside the scan: nothing else, the import, the roll-up. */
  phases: PhaseLatency[];
  endpoints: string[];
}

/** Which phase the run is in now; answers are filed under it as they arrive. */
class Phases {
  private current = 'scan only';
  private readonly latencies = new Map<string, number[]>();
  private readonly spans = new Map<string, number>();
  private since = Date.now();
  enter(phase: string): void {
    this.spans.set(this.current, (this.spans.get(this.current) ?? 0) + Date.now() - this.since);
    this.current = phase;
    this.since = Date.now();
  }
  record(ms: number): void {
    const list = this.latencies.get(this.current) ?? [];
    list.push(ms);
    this.latencies.set(this.current, list);
  }
  summary(): PhaseLatency[] {
    this.enter(this.current);
    return [...this.latencies].map(([phase, list]) => {
      const sorted = [...list].sort((a, b) => a - b);
      const r = (v: number) => Math.round(v * 10) / 10;
      return { phase, seconds: (this.spans.get(phase) ?? 0) / 1000, answers: list.length, p50: r(quantile(sorted, 0.5)), p99: r(quantile(sorted, 0.99)), max: r(sorted[sorted.length - 1]) };
    });
  }
}

const serialOf = (i: number) => `LOAD${String(i).padStart(5, '0')}`;

/** The site: FLEET saved printers, each with a record and its latest snapshot. */
function fleet(now: number): string {
  const lines: object[] = [];
  for (let i = 0; i < FLEET; i++) {
    const serial = serialOf(i);
    lines.push(device(serial, `127.0.${6 + Math.floor(i / 250)}.${(i % 250) + 1}`, now, { is_saved: true, manufacturer: 'Kyocera', model: 'ECOSYS P2040dw', location: `Floor ${i % 5}` }));
    lines.push(metrics(serial, 'raw', now - MINUTE, { page_count: 7000 + i, toner_levels: { black: 50 } }));
  }
  return ndjson(lines);
}

/**
 * The last two days of raw history of every printer (a 15-minute poll): what the roll-up folds.
 * Imported during the run, so no pass has rolled these hours yet (a box catching up after an
 * outage of its clock or a restore does the same work).
 */
function history(now: number): string {
  const lines: object[] = [];
  for (let i = 0; i < FLEET; i++) {
    for (let t = now - 2 * DAY; t < now - 2 * MINUTE; t += POLL_MINUTES * MINUTE) {
      lines.push(metrics(serialOf(i), 'raw', t, { page_count: 6000 + i + Math.floor((t - now + 2 * DAY) / 60_000), toner_levels: { black: 60 } }));
    }
  }
  return ndjson(lines);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function post(agent: Agent, path: string, body: unknown) {
  return agent.request(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body) });
}

/** Scans 127.0.5.1-254 again and again until `stop.now`; resolves how many scans completed. */
async function scanLoop(agent: Agent, stop: { now: boolean }, log: (l: string) => void): Promise<number> {
  let scans = 0;
  while (!stop.now) {
    const started = await post(agent, '/discover', {});
    if (started.status !== 202 && started.status !== 409) throw new Error(`POST /discover: ${started.status} ${started.body}`);
    let state = { state: 'running', found: 0 };
    while (state.state === 'running' && !stop.now) {
      await sleep(500);
      state = JSON.parse((await agent.get('/discover')).body) as typeof state;
    }
    if (state.state !== 'running') {
      scans++;
      if (scans === 1 || scans % 10 === 0) log(`scan ${scans} done: ${state.found} printers found`);
    }
  }
  return scans;
}

/** The history import and the roll-up, as the options say; resolves a line for the report. */
async function rollupDuringLoad(agent: Agent, by: 'cli' | 'schedule', phases: Phases, log: (l: string) => void): Promise<string> {
  const ndjsonText = history(Date.now());
  const t0 = Date.now();
  phases.enter('history import (CLI)');
  const imp = await importNdjson(agent.configPath, ndjsonText);
  phases.enter('scan only');
  if (imp.code !== 0) throw new Error(`history import failed: ${imp.stderr}`);
  const importMs = Date.now() - t0;
  log(`imported two days of raw history (${FLEET * 2 * (DAY / (POLL_MINUTES * MINUTE))} snapshots) in ${importMs} ms`);
  if (by === 'schedule') return `history imported in ${importMs} ms; roll-up left to the agent's schedule (5 past the hour)`;
  const t1 = Date.now();
  phases.enter('roll-up (CLI)');
  const r = await runCli(['rollup'], { configPath: agent.configPath, timeoutMs: 600_000 });
  phases.enter('scan only');
  if (r.code !== 0) throw new Error(`rollup failed: ${r.stderr}`);
  const line = `history import ${importMs} ms, then printbox-agent rollup ${Date.now() - t1} ms: ${r.stdout.trim().replace(/\s+/g, ' ').slice(0, 300)}`;
  log(line);
  return line;
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const log = opts.log ?? (() => {});
  const rate = opts.rate ?? 200;
  const by = opts.rollupBy ?? 'cli';
  let sim: SnmpSim | undefined;
  let agent: Agent | undefined;
  const stop = { now: false };
  try {
    sim = await startSnmpSim({
      endpoints: Array.from({ length: SIM_PRINTERS }, (_, i) => ({ address: `127.0.5.${i + 1}`, recording: fixturePath(RECORDINGS[i % RECORDINGS.length]) })),
    });
    log('importing the 500-printer site');
    agent = await startAgent({ seed: fleet(Date.now()), readyTimeoutMs: 120_000 });
    const a = agent;
    const settings = await post(a, '/settings', {
      discovery: { manual_ranges: true, ranges_text: '127.0.5.1-254', allowed_ranges: ['127.0.5.0/24'], snmp_timeout_ms: 2000 },
      snmp: { port: sim.port },
    });
    if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.body}`);

    const endpoints = [
      `/api/devices/metrics/latest?serial=${serialOf(42)}`,
      '/devices/list',
      `/api/devices/metrics/history?serial=${serialOf(7)}&period=day`,
      '/api/version',
      `/api/devices/metrics/history?serial=${serialOf(300)}&period=week`,
      `/api/devices/profile?serial=${serialOf(123)}`,
      `/api/devices/metrics/bounds?serial=${serialOf(9)}`,
      '/settings',
    ];
    const scans = scanLoop(a, stop, log);
    const rollupAt = opts.rollupAtSeconds ?? Math.floor(opts.durationSeconds / 4);
    const phases = new Phases();
    const rollup = sleep(rollupAt * 1000).then(() => rollupDuringLoad(a, by, phases, log));
    log(`load: ${rate} requests/s for ${opts.durationSeconds} s over ${endpoints.length} read endpoints; roll-up at ${rollupAt} s (${by})`);
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const run = autocannon({
        url: `https://127.0.0.1:${a.httpsPort}`,
        connections: 10,
        overallRate: rate,
        duration: opts.durationSeconds,
        timeout: 10,
        // autocannon's correction for coordinated omission assumes an interval of ceil(1/rate) = 1 ms
        // (seconds taken for ms) and fills in a synthetic sample for every ms of a slow answer: one
        // 150 ms answer became 150 samples and the p99 of a run read seconds. Answers are taken as
        // measured; the report says how far the rate sent fell short of the rate asked (what the
        // correction is about).
        ignoreCoordinatedOmission: true,
        headers: { Accept: 'application/json' },
        requests: endpoints.map((path) => ({ method: 'GET', path })),
      }, (err, res) => (err ? reject(err) : resolve(res)));
      run.on('response', (_client, _status, _bytes, ms) => phases.record(ms));
    });
    stop.now = true;
    const [scanCount, rollupLine] = await Promise.all([scans, rollup]);
    const schedulePasses = (a.stdout().match(/"reason":"schedule"[^\n]*rollup pass done|rollup pass done[^\n]*"reason":"schedule"/g) ?? []).length;
    return {
      durationSeconds: opts.durationSeconds,
      rate,
      requests: result.requests.total,
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      scans: scanCount,
      rollup: `${rollupLine}; scheduled passes in the agent during the run: ${schedulePasses}`,
      phases: phases.summary(),
      endpoints,
    };
  } finally {
    stop.now = true;
    await agent?.stop();
    await sim?.stop();
  }
}

export function formatLoad(r: LoadResult): string {
  return [
    `load during a scan and a roll-up: ${machineLine()}`,
    `rate:       ${r.rate} requests/s for ${r.durationSeconds} s over ${r.endpoints.length} endpoints (${r.endpoints.map((e) => e.split('?')[0]).join(', ')})`,
    `requests:   ${r.requests} (${(r.requests / r.durationSeconds).toFixed(1)}/s sent of the ${r.rate}/s asked)`,
    `errors:     ${r.errors + r.non2xx} (connection errors ${r.errors}, of them timeouts ${r.timeouts}; non-2xx ${r.non2xx})`,
    `latency:    p50 ${r.p50} ms, p90 ${r.p90} ms, p99 ${r.p99} ms (goal < 50 ms), max ${r.max} ms`,
    ...r.phases.map((p) => `  ${`${p.phase}:`.padEnd(26)} ${p.seconds.toFixed(1)} s, ${p.answers} answers, p50 ${p.p50} ms, p99 ${p.p99} ms, max ${p.max} ms`),
    `scans:      ${r.scans} completed during the run`,
    `roll-up:    ${r.rollup}`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const by = process.argv.includes('schedule') ? 'schedule' : 'cli';
  const result = await runLoad({
    durationSeconds: numberArg('duration', 600),
    rate: numberArg('rate', 200),
    rollupAtSeconds: process.argv.includes('--rollup-at') ? numberArg('rollup-at', 0) : undefined,
    rollupBy: by,
    log: (line) => console.log(line),
  });
  console.log(formatLoad(result));
  process.exitCode = result.errors + result.non2xx === 0 ? 0 : 1;
}
