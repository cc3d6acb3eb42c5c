// Discovery benchmark (not a test): a /24 on loopback with 50 simulated printers (snmpsim serving
// real recordings) and 200 silent addresses, scanned at the scanner's default settings.
//
//   npx tsc -p . && node dist/scripts/bench/scan.js [--concurrency N] [--timeout MS] [--printers N] [--silent N]
//
// Reports: scan time against the floor the silent addresses' timeouts force at the configured
// concurrency; SNMP requests/s the scanner sustains against the simulator beside the simulator's own
// ceiling (single-OID GETs, many in flight); CPU and peak memory of this process (the scanner) and
// the simulator's CPU; then an identity table: every recording in test/fixtures/snmp read as
// discovery reads it, manufacturer, model and serial found beside the ones expected. Every packet
// goes to 127.88.0.0/24 or 127.79.3.0/24 (allowed_ranges is set to them).
import { readFileSync } from 'node:fs';
import type { SnmpCredential } from '../../src/snmp/client.js';
import { DEFAULT_SCAN_CONCURRENCY, DEFAULT_SCAN_TIMEOUT_MS, readHost, scan } from '../../src/snmp/scan.js';
import { fixturePath, startSnmpSim } from '../../test/kit/snmpsim.js';
import { identityOverUdp } from '../../test/kit/identity.js';
import { simulatorCeiling } from './snmp-ceiling.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

const concurrency = arg('concurrency', DEFAULT_SCAN_CONCURRENCY);
const timeoutMs = arg('timeout', DEFAULT_SCAN_TIMEOUT_MS);
const nPrinters = arg('printers', 50);
const nSilent = arg('silent', 200);
const ALLOWED = ['127.88.0.0/24'];
const PUBLIC: SnmpCredential = { version: 'v2c', community: 'public' };
const RECORDINGS = ['brother', 'epson_cw', 'epson_sc', 'kyocera_cs4053', 'kyocera_p2040'].map((n) => fixturePath(`printmaster/${n}.snmprec`));

const printers = Array.from({ length: nPrinters }, (_, i) => `127.88.0.${i + 1}`);
const silent = Array.from({ length: nSilent }, (_, i) => `127.88.0.${nPrinters + i + 1}`);

function cpuTicks(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]); // utime + stime, clock ticks (100/s)
  } catch {
    return 0;
  }
}

async function main() {
  console.log(`node ${process.version}; scanner defaults: timeout ${timeoutMs} ms, concurrency ${concurrency}, retries 0 (probe) / 1 (read)`);
  console.log(`targets: ${nPrinters} printers + ${nSilent} silent addresses in 127.88.0.0/24`);
  const sim = await startSnmpSim({
    endpoints: printers.map((address, i) => ({ address, recording: RECORDINGS[i % RECORDINGS.length] })),
  });
  try {
    // Warm the simulator's indexes (first read of a recording builds its index) out of the timed path.
    await Promise.all(printers.slice(0, RECORDINGS.length).map((a) => readHost(a, { credentials: [PUBLIC], port: sim.port, timeoutMs, allowedRanges: ALLOWED })));

    // 1. The /24 scan at default settings.
    const simTicks0 = cpuTicks(sim.pids[0]);
    const cpu0 = process.cpuUsage();
    let peakRss = process.memoryUsage().rss;
    let peakHeap = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 50);
    const result = await scan({
      targets: [...printers, ...silent],
      credentials: [PUBLIC],
      port: sim.port,
      timeoutMs,
      concurrency,
      allowedRanges: ALLOWED,
    });
    clearInterval(sampler);
    const cpu = process.cpuUsage(cpu0);
    const simCpuS = (cpuTicks(sim.pids[0]) - simTicks0) / 100;
    const floorMs = Math.ceil(nSilent / concurrency) * timeoutMs;
    const oids = result.hosts.reduce((n, h) => n + h.values.size, 0);
    console.log('\n## /24 scan');
    console.log(`found ${result.hosts.length}/${nPrinters} printers (${result.hosts.filter((h) => h.partial).length} partial), ${oids} values read`);
    console.log(`scan time ${(result.durationMs / 1000).toFixed(2)} s; silent-timeout floor ceil(${nSilent}/${concurrency})*${timeoutMs} ms = ${(floorMs / 1000).toFixed(2)} s; ratio ${(result.durationMs / floorMs).toFixed(2)} (target <= 2)`);
    console.log(`requests ${result.requests} (${nSilent} of them probes to silent addresses)`);
    console.log(`scanner CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s (user ${(cpu.user / 1e6).toFixed(2)}, system ${(cpu.system / 1e6).toFixed(2)}); simulator CPU ${simCpuS.toFixed(2)} s`);
    console.log(`scanner peak RSS ${(peakRss / 2 ** 20).toFixed(1)} MiB (process max RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(1)} MiB), peak heap ${(peakHeap / 2 ** 20).toFixed(1)} MiB`);

    // 2. Requests/s the scanner sustains reading the printers (no silent addresses in the path).
    const t1 = Date.now();
    const simTicks1 = cpuTicks(sim.pids[0]);
    const cpu1 = process.cpuUsage();
    const reads = await scan({ targets: printers, credentials: [PUBLIC], port: sim.port, timeoutMs, concurrency, allowedRanges: ALLOWED });
    const readS = (Date.now() - t1) / 1000;
    const cpuR = process.cpuUsage(cpu1);
    const simBusy = (cpuTicks(sim.pids[0]) - simTicks1) / 100 / readS;
    console.log('\n## read rate (printers only)');
    console.log(`${reads.hosts.length} printers read in ${readS.toFixed(2)} s: ${(reads.requests / readS).toFixed(0)} requests/s (GET + GETBULK, max-repetitions 20), ${(reads.hosts.reduce((n, h) => n + h.values.size, 0) / readS).toFixed(0)} values/s`);
    console.log(`scanner CPU ${(((cpuR.user + cpuR.system) / 1e6 / readS) * 100).toFixed(0)}% of a core; simulator CPU ${(simBusy * 100).toFixed(0)}% of a core`);

    // 3. The simulator's own ceiling: single-OID GETs, 32 in flight.
    const ceiling = await simulatorCeiling(printers, sim.port, 5, 32, ALLOWED);
    console.log('\n## simulator ceiling');
    console.log(`snmpsim answers ${ceiling.toFixed(0)} single-OID GETs/s (32 in flight, 5 s)`);
  } finally {
    await sim.stop();
  }

  // 4. Identity over every recording.
  const rows = await identityOverUdp();
  const same = (a: unknown, b: unknown) => (a ?? null) === (b ?? null);
  console.log('\n## identity (every recording in test/fixtures/snmp, read over UDP)');
  console.log('| recording | manufacturer | model | serial | as expected |');
  console.log('|---|---|---|---|---|');
  let ok = 0;
  for (const r of rows) {
    const match = same(r.found.manufacturer, r.expected.manufacturer) && same(r.found.model, r.expected.model) && same(r.found.serial, r.expected.serial);
    if (match) ok++;
    const cell = (f: string | undefined, e: string | null) => (same(f, e) ? (f ?? '-') : `${f ?? '-'} (expected ${e ?? '-'})`);
    console.log(`| ${r.recording} | ${cell(r.found.manufacturer, r.expected.manufacturer)} | ${cell(r.found.model, r.expected.model)} | ${cell(r.found.serial, r.expected.serial)} | ${match ? 'yes' : 'no'} |`);
  }
  console.log(`${ok}/${rows.length} recordings identified as expected`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
