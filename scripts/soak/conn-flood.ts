// Connection flood soak: a real agent in its own network namespace, with the
// unit's Node flags, environment and LimitNOFILE, flooded from the laptop namespace with 25,000
// TCP connections that never send a byte plus 8,000 that send 5 bytes of a TLS ClientHello, all
// opened at once and then re-opened as the box closes them for --sustain seconds. Phase 1 from
// one address; phase 2 spread over --addresses addresses of the /24 (crossing the cap on all
// connections). Reported: connections held, the agent's RSS (before, peak, after), another
// host's /api/version latency during the flood, and whether the agent stayed up.
//   npm run build && node dist/scripts/soak/conn-flood.js [--idle 25000] [--partial 8000] [--sustain 20] [--addresses 200]
// Needs root (ip netns). Traffic stays inside the two namespaces (198.18.7.0/24).
import { spawnSync } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { createLan, lanUnavailable, startAgentInBox, type BoxAgent, type Lan } from '../../test/kit/lan.js';
import { probe, startFlood, widenPortRange, type ProbeResult } from '../../test/kit/flood.js';
import { rssMiB, unitEnvironment, unitFileLimit, unitMemoryMax, unitNodeFlags } from '../bench/process.js';
import { CONNECTION_LIMITS } from '../../src/web/connection-gate.js';
import { HANDSHAKE_TIMEOUT_MS } from '../../src/web/listeners.js';
import { isMain, machineLine, numberArg, quantile } from './cli.js';

/** The agent's open TCP sockets, from /proc (the connections it holds, its listeners and its links). */
function agentSockets(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      /* closed meanwhile */
    }
  }
  return n;
}

interface PhaseResult {
  attempted: number;
  /** Most connections open at once as the flood saw them (the box's accept queue included), and the agent's sockets. */
  heldMax: number;
  agentSocketsBefore: number;
  agentSocketsMax: number;
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
  probes: ProbeResult[];
  alive: boolean;
  seconds: number;
}

async function phase(lan: Lan, agent: BoxAgent, from: string | string[], idle: number, partial: number, sustainS: number): Promise<PhaseResult> {
  const pid = agent.proc.pid!;
  const t0 = Date.now();
  const rssBefore = rssMiB(pid);
  let rssPeak = rssBefore;
  const agentSocketsBefore = agentSockets(pid);
  let agentSocketsMax = agentSocketsBefore;
  const sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssMiB(pid));
      agentSocketsMax = Math.max(agentSocketsMax, agentSockets(pid));
    } catch {
      /* the agent is gone: reported below */
    }
  }, 100);
  const flood = await startFlood(lan.laptopNs, { host: lan.boxAddress, port: agent.config.httpsPort, from, idle, partial, pending: 400, sustainMs: sustainS * 1000 });
  let heldMax = 0;
  const watch = setInterval(() => (heldMax = Math.max(heldMax, flood.last().open)), 100);
  // Another host asks every 250 ms for as long as the flood lasts (each probe's own timeout: 5 s).
  const probing = probe(lan.laptopNs, {
    host: lan.boxAddress, port: agent.config.httpsPort, from: lan.proxyLaptop,
    count: Math.max(4, Math.round((sustainS * 1000) / 300)), intervalMs: 250, timeoutMs: 5000,
  });
  const probes = await probing;
  const done = await flood.until((t) => t.done, 600_000, 'the flood over');
  clearInterval(watch);
  heldMax = Math.max(heldMax, done.open);
  // The box closes what it still holds at the handshake timeout.
  await flood.until((t) => t.open === 0, HANDSHAKE_TIMEOUT_MS + 30_000, 'every connection closed by the box').catch((e: Error) => console.log(`  ${e.message}`));
  const last = await flood.stop();
  clearInterval(sampler);
  return {
    attempted: last.attempted, heldMax, agentSocketsBefore, agentSocketsMax, rssBefore, rssPeak, rssAfter: agent.alive() ? rssMiB(pid) : NaN,
    probes, alive: agent.alive(), seconds: (Date.now() - t0) / 1000,
  };
}

function report(name: string, r: PhaseResult): boolean {
  const ms = r.probes.filter((p) => p.status === 200).map((p) => p.ms).sort((a, b) => a - b);
  const refused = r.probes.length - ms.length;
  console.log(`${name}:`);
  console.log(`  connections attempted ${r.attempted}; open at once as the flood saw them (the kernel's accept queue included) at most ${r.heldMax}`);
  console.log(`  agent's sockets: ${r.agentSocketsBefore} before, at most ${r.agentSocketsMax} during (held connections = the difference)`);
  console.log(`  agent RSS: before ${r.rssBefore.toFixed(1)} MiB, peak ${r.rssPeak.toFixed(1)} MiB, after ${r.rssAfter.toFixed(1)} MiB`);
  console.log(`  another host's GET /api/version: ${ms.length} answered of ${r.probes.length}` +
    (ms.length ? `, p50 ${quantile(ms, 0.5).toFixed(0)} ms, p95 ${quantile(ms, 0.95).toFixed(0)} ms, max ${ms[ms.length - 1].toFixed(0)} ms` : '') +
    (refused ? `; not answered: ${[...new Set(r.probes.filter((p) => p.status !== 200).map((p) => p.error))].join(', ')}` : ''));
  console.log(`  agent up: ${r.alive}; ${r.seconds.toFixed(0)} s`);
  return r.alive;
}

if (isMain(import.meta.url)) {
  const unavailable = lanUnavailable();
  if (unavailable) {
    console.log(`connection flood soak needs network namespaces: ${unavailable}`);
    process.exit(2);
  }
  const idle = numberArg('idle', 25_000);
  const partial = numberArg('partial', 8_000);
  const sustain = numberArg('sustain', 20);
  const addressCount = Math.min(numberArg('addresses', 200), 230);
  console.log(`connection flood soak: ${machineLine()}`);
  console.log(`agent: Node flags ${unitNodeFlags().join(' ')}; LimitNOFILE ${unitFileLimit()}; MemoryMax ${(unitMemoryMax()! / 2 ** 20).toFixed(0)} MiB (not applied here: RSS is measured)`);
  console.log(`caps: ${CONNECTION_LIMITS.maxConnections} connections, ${CONNECTION_LIMITS.maxPerAddress} per address; TLS handshake timeout ${HANDSHAKE_TIMEOUT_MS / 1000} s`);
  console.log(`flood: ${idle} idle TCP + ${partial} with 5 bytes of a ClientHello, re-opened for ${sustain} s as the box closes them`);
  const lan = createLan();
  let agent: BoxAgent | undefined;
  let ok = true;
  try {
    widenPortRange(lan.laptopNs);
    agent = await startAgentInBox(lan, { nodeFlags: unitNodeFlags(), env: unitEnvironment(), fdLimit: unitFileLimit() });
    ok = report('phase 1, one address (198.18.7.2)', await phase(lan, agent, lan.laptop, idle, partial, sustain)) && ok;
    const addresses = Array.from({ length: addressCount }, (_, i) => `198.18.7.${20 + i}`);
    for (const a of addresses) spawnSync('ip', ['-n', lan.laptopNs, 'addr', 'add', `${a}/24`, 'dev', `pbxl${lan.tag}`]);
    ok = report(`phase 2, ${addressCount} addresses (198.18.7.20-${19 + addressCount})`, await phase(lan, agent, addresses, idle, partial, sustain)) && ok;
    if (/heap out of memory/i.test(agent.stderr())) ok = false;
  } finally {
    await agent?.stop();
    lan.destroy();
  }
  // The agent's own count (one log line a minute and one at its stop).
  let refused = 0;
  let evicted = 0;
  for (const line of (agent?.stdout() ?? '').split('\n')) {
    if (!line.includes('connections refused')) continue;
    const rec = JSON.parse(line) as { refused: number; evicted: number };
    refused += rec.refused;
    evicted += rec.evicted;
  }
  console.log(`agent's log: ${refused} connections refused, ${evicted} evicted to make room for an address holding fewer`);
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
}
