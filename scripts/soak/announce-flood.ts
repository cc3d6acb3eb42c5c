// Announcement flood soak: the real agent, with the unit's Node flags and environment,
// in the box namespace of a namespace LAN with a real printer (ippeveprinter announced by Avahi),
// flooded as test/kit/site-floods.ts describes while the desk, another host, asks
// GET /api/version every second. Phases, one after the other on one agent:
//   quiet     no flood (the baseline);
//   flood     --minutes (5) of the mDNS flood at 10 packets/s x 20 new names (about 0.3 Mbit/s, the
//             flood that stopped the old browser) plus the device flood from 5 hosts (a new printer
//             at every IPP read, a Hello with a new endpoint every second);
//   storm     --storm-minutes (1) of the mDNS flood at 100 packets/s x 20 new names alone;
//   after     a quiet minute: what the agent keeps once the floods end.
// Reported per phase: the desk's answers (p50, p99, max), the agent's CPU (share of one core) and
// RSS (start, peak, end); then the discovery status (what was dropped, what is remembered) and the
// device records the device flood made.
//   npm run build && node dist/scripts/soak/announce-flood.js [--minutes 5] [--storm-minutes 1]
// Needs root (ip netns). Traffic stays inside the LAN's namespaces (10.77.<n>.0/24).
import { startAgentInBox, type BoxAgent } from '../../test/kit/lan.js';
import { printerLanUnavailable } from '../../test/kit/printer-lan.js';
import { createFloodSite, runFloods, type FloodOptions, type FloodSite } from '../../test/kit/site-floods.js';
import { cpuMs, rssMiB, unitEnvironment, unitMemoryMax, unitNodeFlags } from '../bench/process.js';
import { isMain, machineLine, numberArg, quantile } from './cli.js';

interface PhaseFigures {
  name: string;
  answered: number;
  asked: number;
  p50: number;
  p99: number;
  max: number;
  cpuPercent: number;
  rss: { start: number; peak: number; end: number };
}

async function phase(name: string, site: FloodSite, agent: BoxAgent, o: FloodOptions): Promise<PhaseFigures> {
  const pid = agent.proc.pid!;
  const rssStart = rssMiB(pid);
  let peak = rssStart;
  const sampler = setInterval(() => {
    if (agent.alive()) peak = Math.max(peak, rssMiB(pid));
  }, 500);
  const t0 = Date.now();
  const c0 = cpuMs(pid);
  try {
    const run = await runFloods(site, agent.config.httpsPort, o);
    const cpuPercent = ((cpuMs(pid) - c0) / (Date.now() - t0)) * 100;
    const ms = run.answers.filter((a) => a.status === 200).map((a) => a.ms).sort((a, b) => a - b);
    return { name, answered: ms.length, asked: run.answers.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: ms[ms.length - 1] ?? NaN, cpuPercent, rss: { start: rssStart, peak, end: rssMiB(pid) } };
  } finally {
    clearInterval(sampler);
  }
}

function report(f: PhaseFigures): void {
  console.log(
    `${f.name.padEnd(6)} desk GET /api/version: ${f.answered}/${f.asked} answered, p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms, max ${f.max.toFixed(0)} ms;` +
      ` agent CPU ${f.cpuPercent.toFixed(1)} % of a core; RSS ${f.rss.start.toFixed(1)} -> peak ${f.rss.peak.toFixed(1)} -> ${f.rss.end.toFixed(1)} MiB`,
  );
}

if (isMain(import.meta.url)) {
  const unavailable = printerLanUnavailable();
  if (unavailable) {
    console.log(`announcement flood soak needs the namespace LAN: ${unavailable}`);
    process.exit(2);
  }
  const minutes = numberArg('minutes', 5);
  const stormMinutes = numberArg('storm-minutes', 1);
  console.log(`announcement flood soak: ${machineLine()}`);
  console.log(`agent: Node flags ${unitNodeFlags().join(' ')}; MemoryMax ${((unitMemoryMax() ?? NaN) / 2 ** 20).toFixed(0)} MiB (not applied here: RSS is measured)`);
  const site = createFloodSite(5);
  let agent: BoxAgent | undefined;
  let ok = true;
  try {
    await site.lan.startPrinter(site.printer, { make: 'Acme', model: 'Laser 9', queue: 'Office Printer' });
    agent = await startAgentInBox(site.lan, { mdns: true, wsd: true, nodeFlags: unitNodeFlags(), env: unitEnvironment() });
    const desk = { deskEveryMs: 1000 };
    const phases = [
      await phase('quiet', site, agent, { ms: 60_000, packetsPerS: 0, namesPerPacket: 1, helloMs: 0, ...desk }),
      await phase('flood', site, agent, { ms: minutes * 60_000, packetsPerS: 10, namesPerPacket: 20, helloMs: 1000, ...desk }),
      await phase('storm', site, agent, { ms: stormMinutes * 60_000, packetsPerS: 100, namesPerPacket: 20, helloMs: 0, ...desk }),
      await phase('after', site, agent, { ms: 60_000, packetsPerS: 0, namesPerPacket: 1, helloMs: 0, ...desk }),
    ];
    phases.forEach(report);
    ok = agent.alive() && phases.every((p) => p.answered === p.asked);
    const status = JSON.parse((await agent.request({ path: '/discover/status', maxBody: 1 << 20 })).body) as Record<string, unknown>;
    console.log(`discovery status: ${JSON.stringify({ mdns: status.mdns, wsd: status.wsd, records: status.records })}`);
    const listed = JSON.parse((await agent.request({ path: '/devices/discovered?include_known=true', maxBody: 16 << 20 })).body) as { ip: string }[];
    const ghostRecords = listed.filter((d) => site.ghosts.some((g) => g.address === d.ip)).length;
    console.log(`device records: ${listed.length} listed, ${ghostRecords} of them made by the device flood (5 hosts, ${minutes} minutes)`);
    if (/heap out of memory/i.test(agent.stderr())) ok = false;
  } finally {
    await agent?.stop();
    site.lan.destroy();
  }
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
}
