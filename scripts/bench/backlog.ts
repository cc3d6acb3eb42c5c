// The server link's backlog drain (issue 16): a 24 h outage of a 500-printer site polled every
// 15 minutes leaves 48,000 raw snapshots waiting. The agent, enrolled with the test peer
// (test/server-peer: real HTTPS and WebSocket on loopback), drains them at its default batch size
// and rate, with the unit's Node flags. Two drains: one alone (time, bytes on the wire per
// snapshot, gzip'd and not, the agent's CPU and peak RSS), one under /devices/list load (p50/p99
// during the drain against the same agent idle before and after). Everything on 127.0.0.1.
//   npm run build && node dist/scripts/bench/backlog.js [--devices 500] [--hours 24] [--poll-minutes 15]
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { device, metrics, ndjson } from '../../test/helpers/seed.js';
import { startServerPeer } from '../../test/server-peer/peer.js';
import { cpuMs, freePort, rssMiB, unitNodeFlags } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '../../src/cli.js');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const DEVICES = arg('devices', 500);
const HOURS = arg('hours', 24);
const POLL_MIN = arg('poll-minutes', 15);
const PER_DEVICE = Math.round((HOURS * 60) / POLL_MIN);
const TOTAL = DEVICES * PER_DEVICE;


async function p99(port: number, seconds: number) {
  const r = await autocannon({ url: `https://127.0.0.1:${port}/devices/list`, connections: 4, duration: seconds });
  return { p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, errors: r.errors + r.non2xx };
}

const NODE_FLAGS = unitNodeFlags();

/** The outage's readings, as the agent would have stored them: one snapshot a device a poll. */
function outage(now: number): string {
  const lines: object[] = [];
  for (let d = 0; d < DEVICES; d++) {
    lines.push(device(`BACKLOG${String(d).padStart(5, '0')}`, { ip: `127.0.${Math.floor(d / 250)}.${(d % 250) + 1}`, is_saved: true, model: 'ECOSYS P2040dw', manufacturer: 'Kyocera' }));
  }
  for (let i = 0; i < PER_DEVICE; i++) {
    const ts = now - HOURS * 3_600_000 + i * POLL_MIN * 60_000;
    for (let d = 0; d < DEVICES; d++) {
      lines.push(metrics(`BACKLOG${String(d).padStart(5, '0')}`, 'raw', ts, {
        page_count: 10_000 + d * 10 + i, mono_pages: 8_000 + i, color_pages: 2_000 + d, toner_levels: { black: 80 - (i % 50), cyan: 60, magenta: 55, yellow: 70 },
      }));
    }
  }
  return ndjson(lines);
}

async function drain(withLoad: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'printbox-backlog-bench-'));
  const peer = await startServerPeer();
  let agent: ChildProcess | undefined;
  try {
    const port = await freePort();
    const config = join(dir, 'agent.toml');
    writeFileSync(
      config,
      `data_dir = "${dir}/data"\n[discovery]\nmdns_enabled = false\n[web]\nlisten_address = "127.0.0.1"\nhttps_port = ${port}\nhttp_port = 0\n[web.auth]\nmode = "local"\n` +
        `[server]\nurl = "${peer.url}"\nenrollment_token = "${peer.enrollmentToken}"\nca_file = "${peer.caFile}"\n[log]\nlevel = "warn"\n`,
    );
    writeFileSync(join(dir, 'seed.ndjson'), outage(Date.now()));
    execFileSync(process.execPath, [cli, 'import', join(dir, 'seed.ndjson'), '--config', config]);
    // Uploads fail while the agent starts (the uplink is down for them); registration goes through.
    await peer.setMode('error500', { only: ['/api/v1/metrics/batch'] });
    agent = spawn(process.execPath, [...NODE_FLAGS, cli, 'serve', '--config', config], { stdio: 'ignore' });
    const pid = agent.pid!;
    for (let k = 0; k < 200; k++) {
      try {
        await p99(port, 0.2);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const idleBefore = withLoad ? await p99(port, 5) : undefined;
    await peer.setMode('ok');
    const tOk = Date.now();
    const cpu0 = cpuMs(pid);
    let peak = rssMiB(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 200);
    const during = withLoad ? await p99(port, 10) : undefined;
    await peer.waitFor(() => (peer.distinctSnapshots().size >= TOTAL ? true : undefined), 30 * 60_000, 'the whole backlog');
    clearInterval(sampler);
    // From the first batch the server took (the agent may still be in its retry wait at `ok`).
    const t0 = peer.batches('metrics')[0].at;
    const drainMs = Date.now() - t0;
    const cpu = cpuMs(pid) - cpu0;
    if (withLoad) {
      const after = await p99(port, 10);
      const row = (what: string, r: Awaited<ReturnType<typeof p99>>) =>
        console.log(`| /devices/list (${DEVICES} devices) p50 / p99, ${what} | ${r.p50} / ${r.p99} ms (${r.rps.toFixed(0)} req/s, 4 connections${r.errors ? `, ${r.errors} errors` : ''}) |`);
      row('idle before', idleBefore!);
      row('during the drain', during!);
      row('idle after', after);
      return;
    }
    const batches = peer.batches('metrics');
    const wire = batches.reduce((n, b) => n + b.wireBytes, 0);
    const raw = batches.reduce((n, b) => n + b.bytes, 0);
    const items = batches.reduce((n, b) => n + b.items.length, 0);
    console.log(`| drained | ${items} snapshots (${peer.distinctSnapshots().size} distinct) in ${(drainMs / 1000).toFixed(1)} s, ${batches.length} batches; the first ${((t0 - tOk) / 1000).toFixed(1)} s after the uplink came back (the retry wait) |`);
    console.log(`| bytes per snapshot on the wire (gzip) / uncompressed | ${(wire / items).toFixed(1)} / ${(raw / items).toFixed(1)} |`);
    console.log(`| agent CPU while draining | ${(cpu / 1000).toFixed(2)} s (${((100 * cpu) / drainMs).toFixed(1)}% of one core) |`);
    console.log(`| agent peak RSS while draining | ${peak.toFixed(0)} MiB |`);
  } finally {
    agent?.kill('SIGTERM');
    await peer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`node ${process.version} ${NODE_FLAGS.join(' ')}; ${DEVICES} devices x ${PER_DEVICE} snapshots (${HOURS} h at ${POLL_MIN} min) = ${TOTAL} waiting; default batch size and rate`);
console.log('| measure | value |\n|---|---|');
await drain(false);
await drain(true);
