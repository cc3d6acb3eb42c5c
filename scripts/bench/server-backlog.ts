// The backlog drain into PrintMaster's own central server: a box that held 48,000 raw
// readings (100 printers x 480 readings, 15 minutes apart: five days of an outage) enrolls with the
// reference server (../shared/tools/printmaster-server, started by its start.sh on loopback) and
// drains them at its defaults, with the unit's Node flags. Measured: the drain's time (first row on
// the server to the last), the requests it took (the server's "Metrics batch received" lines), the
// rows on the server, duplicates (rows of one printer at one time), how far a row's time is from its
// reading's own time, the agent's CPU and peak RSS, and GET /devices/list latency during the drain
// (two clients in a loop, each pausing 50 ms between requests) against the same after it.
// Everything on 127.0.0.1.
//   npm run build && node dist/scripts/bench/server-backlog.js [--devices 100] [--readings 480] [--poll-minutes 15] [--gap-ms 50]
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { device, metrics, ndjson } from '../../test/kit/seed.js';
import { printmasterUnavailable, startPrintmaster } from '../../test/kit/printmaster.js';
import { pmTime } from '../../test/kit/pm-checks.js';
import { cpuMs, freePort, rssMiB, unitNodeFlags } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const DEVICES = arg('devices', 100);
const READINGS = arg('readings', 480);
const POLL_MIN = arg('poll-minutes', 15);
const GAP_MS = arg('gap-ms', 50);
const TOTAL = DEVICES * READINGS;
const NODE_FLAGS = unitNodeFlags();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const serial = (d: number) => `SRVBACKLOG${String(d).padStart(4, '0')}`;

/** The outage's readings as the box stored them: one a printer a poll, the last one a poll ago. */
function outage(now: number): { text: string; times: number[] } {
  const times = Array.from({ length: READINGS }, (_, i) => now - (READINGS - i) * POLL_MIN * 60_000);
  const lines: object[] = [];
  for (let d = 0; d < DEVICES; d++) {
    lines.push(device(serial(d), { ip: `127.0.${100 + Math.floor(d / 250)}.${(d % 250) + 1}`, is_saved: true, model: 'ECOSYS P2040dw', manufacturer: 'Kyocera' }));
  }
  times.forEach((ts, i) => {
    for (let d = 0; d < DEVICES; d++) {
      lines.push(metrics(serial(d), 'raw', ts, {
        page_count: 10_000 + d * 10 + i, mono_pages: 8_000 + i, color_pages: 2_000 + d, toner_levels: { black: 80 - (i % 50), cyan: 60, magenta: 55, yellow: 70 },
      }));
    }
  });
  return { text: ndjson(lines), times };
}

/** GET /devices/list from `clients` loops, each pausing GAP_MS between requests (a UI's pace, not a flood), until stop(); the latencies in ms. */
function listLoop(port: number, clients: number) {
  const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
  const latencies: number[] = [];
  let errors = 0;
  let running = true;
  const once = () =>
    new Promise<void>((ok) => {
      const t = performance.now();
      https
        .get({ host: '127.0.0.1', port, path: '/devices/list', agent, headers: { accept: 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latencies.push(performance.now() - t);
            else errors++;
            ok();
          });
        })
        .on('error', () => {
          errors++;
          ok();
        });
    });
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      await once();
      await sleep(GAP_MS);
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return { latencies, errors };
    },
  };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const summary = (r: { latencies: number[]; errors: number }, seconds: number) => {
  const s = [...r.latencies].sort((a, b) => a - b);
  return `${pct(s, 50).toFixed(0)} / ${pct(s, 99).toFixed(0)} ms (${s.length} requests, ${(s.length / seconds).toFixed(0)} req/s, 2 clients ${GAP_MS} ms apart${r.errors ? `, ${r.errors} errors` : ''})`;
};

const why = printmasterUnavailable();
if (why) {
  console.error(`server-backlog: ${why}`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'printbox-server-backlog-'));
const pm = await startPrintmaster();
let agent: ChildProcess | undefined;
try {
  const port = await freePort();
  const config = join(dir, 'agent.toml');
  writeFileSync(
    config,
    `data_dir = "${dir}/data"\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${port}\nhttp_port = 0\n[web.auth]\nmode = "local"\n` +
      `[server]\nurl = "${pm.url}"\nenrollment_token = "${pm.token}"\nca_file = "${pm.caFile}"\n[log]\nlevel = "warn"\n`,
  );
  const seed = outage(Date.now());
  writeFileSync(join(dir, 'seed.ndjson'), seed.text);
  execFileSync(process.execPath, [cli, 'import', join(dir, 'seed.ndjson'), '--config', config]);

  const tStart = Date.now();
  agent = spawn(process.execPath, [...NODE_FLAGS, cli, 'serve', '--config', config], { stdio: 'ignore' });
  const pid = agent.pid!;
  const count = () => pm.query<{ n: number }>('SELECT count(*) AS n FROM metrics_history')[0].n;
  // The API's latency from the moment it answers until the drain ends.
  for (;;) {
    const up = await new Promise<boolean>((ok) =>
      https.get({ host: '127.0.0.1', port, path: '/api/version', rejectUnauthorized: false }, (r) => ok(r.statusCode === 200)).on('error', () => ok(false)),
    );
    if (up) break;
    if (Date.now() - tStart > 60_000) throw new Error('the agent did not start');
    await sleep(100);
  }
  const cpu0 = cpuMs(pid);
  let peak = rssMiB(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 200);
  const during = listLoop(port, 2);
  const tLoad = Date.now();
  let tFirst = 0;
  let n = 0;
  for (;;) {
    n = count();
    if (n > 0 && !tFirst) tFirst = Date.now();
    if (n >= TOTAL) break;
    if (Date.now() - tStart > 60 * 60_000) throw new Error(`the drain did not end within an hour: ${n} of ${TOTAL} rows`);
    await sleep(200);
  }
  const tDone = Date.now();
  const loaded = await during.stop();
  clearInterval(sampler);
  const cpu = cpuMs(pid) - cpu0;
  // A resend after a lost answer would come later: give the agent a moment to settle, then count.
  await sleep(3000);
  const idle = listLoop(port, 2);
  await sleep(10_000);
  const after = await idle.stop();

  const rows = pm.query<{ serial: string; timestamp: string }>('SELECT serial, timestamp FROM metrics_history');
  const bySerial = new Map<string, number[]>();
  for (const r of rows) {
    const l = bySerial.get(r.serial) ?? [];
    l.push(pmTime(r.timestamp));
    bySerial.set(r.serial, l);
  }
  let duplicates = 0;
  let worst = 0;
  let missing = 0;
  for (let d = 0; d < DEVICES; d++) {
    const got = (bySerial.get(serial(d)) ?? []).sort((a, b) => a - b);
    duplicates += got.length - new Set(got).size;
    missing += Math.max(0, READINGS - got.length);
    if (got.length === READINGS) for (let i = 0; i < READINGS; i++) worst = Math.max(worst, Math.abs(got[i] - seed.times[i]));
  }
  const log = pm.log();
  const metricBatches = log.split('\n').filter((l) => l.includes('Metrics batch received'));
  const deviceBatches = log.split('\n').filter((l) => l.includes('Devices batch received')).length;
  const sizes = metricBatches.map((l) => Number(/count=(\d+)/.exec(l)?.[1] ?? 0));
  const drainS = (tDone - tFirst) / 1000;

  console.log(`node ${process.version} ${NODE_FLAGS.join(' ')}; ${DEVICES} printers x ${READINGS} readings (${POLL_MIN} min apart) = ${TOTAL} waiting; the agent's default batch size and rate; PrintMaster's server (SQLite)`);
  console.log('| measure | value |\n|---|---|');
  console.log(`| drained | ${rows.length} rows on the server for ${TOTAL} readings in ${drainS.toFixed(1)} s (first row to last); ${((tDone - tStart) / 1000).toFixed(1)} s from the agent's start (registration and devices first) |`);
  console.log(`| requests | ${metricBatches.length} metrics batches (${Math.min(...sizes)}-${Math.max(...sizes)} readings each, ${(TOTAL / metricBatches.length).toFixed(1)} on average), ${deviceBatches} devices batches |`);
  console.log(`| duplicates / missing on the server | ${duplicates} / ${missing} |`);
  console.log(`| largest distance between a row's time and its reading's own time | ${(worst / 1000).toFixed(1)} s |`);
  console.log(`| agent CPU while draining | ${(cpu / 1000).toFixed(2)} s (${((100 * cpu) / (tDone - tLoad)).toFixed(1)}% of one core, with the /devices/list loop) |`);
  console.log(`| agent peak RSS while draining | ${peak.toFixed(0)} MiB |`);
  console.log(`| \`/devices/list\` (${DEVICES} devices) p50 / p99, during the drain | ${summary(loaded, (tDone - tLoad) / 1000)} |`);
  console.log(`| \`/devices/list\` p50 / p99, idle after | ${summary(after, 10)} |`);
} finally {
  agent?.kill('SIGTERM');
  await pm.kill();
  rmSync(dir, { recursive: true, force: true });
}
