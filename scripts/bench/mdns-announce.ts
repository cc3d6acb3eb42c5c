// From an mDNS announcement to listed (goal: at most 2 s). On a namespace LAN
// (test/kit/printer-lan.ts) the agent runs in the box namespace; each round starts CUPS's
// ippeveprinter under its own Avahi, and an observer in the box namespace (a passive mDNS listener on
// multicast-dns) notes when the announcement reaches the box, then asks the agent's listing
// every 20 ms until the printer is listed by that announcement (last_seen at or after it).
// The printer is then stopped (Avahi says goodbye) and the next round starts.
//
// Then the idle cost of the passive listeners: the agent's CPU time (/proc/PID/stat) and RSS over
// --idle seconds with mdns_enabled, wsd_enabled and ssdp_enabled on (one printer announced on the
// LAN), then all off.
//
//   npm run build && node dist/scripts/bench/mdns-announce.js [--rounds 5] [--idle 60]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createPrinterLan, printerLanUnavailable } from '../../test/kit/printer-lan.js';
import { startAgentInBox } from '../../test/kit/lan.js';
import { repoRoot } from '../../test/kit/snmpsim.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = arg('--rounds', 5);
const idleSeconds = arg('--idle', 60);

/** CPU seconds (user + system) and RSS (MiB) of a process, from /proc. */
function usage(pid: number): { cpu: number; rssMiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]); // utime, stime (fields 14, 15)
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpu: ticks / 100, rssMiB: Math.round(Number(rss?.[1] ?? 0) / 102.4) / 10 };
}

async function idle(pid: number): Promise<{ cpu_percent: number; rss_mib: number }> {
  const a = usage(pid);
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const b = usage(pid);
  return { cpu_percent: Math.round(((b.cpu - a.cpu) / idleSeconds) * 1000) / 10, rss_mib: b.rssMiB };
}

// A passive observer (multicast-dns, it sends nothing: the agent alone asks) notes the first mDNS
// response from the printer's address that carries an _ipp._tcp record, i.e. Avahi's first
// announcement (its probes before it are queries), then polls the agent's listing.
const OBSERVER = String.raw`
import makeMdns from 'multicast-dns';
import https from 'node:https';
const cfg = JSON.parse(process.argv[1]);
const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
const get = () => new Promise((resolve, reject) => {
  https.get({ host: '127.0.0.1', port: cfg.port, path: '/devices/discovered?include_known=true', agent }, (res) => {
    let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(JSON.parse(b)));
  }).on('error', reject);
});
const mdns = makeMdns({ interface: cfg.iface, bind: '0.0.0.0', reuseAddr: true, loopback: false });
let announced;
mdns.on('response', async (r, from) => {
  const names = [...r.answers, ...(r.additionals || [])].map((a) => String(a.name).toLowerCase());
  if (process.env.BENCH_DEBUG) console.error('response', from.address, names);
  if (announced || from.address !== cfg.address || !names.some((n) => n.endsWith('_ipp._tcp.local'))) return;
  announced = { wall: Date.now(), t: performance.now() };
  for (;;) {
    const list = await get();
    const d = list.find((x) => x.ip === cfg.address);
    if (d && Date.parse(d.last_seen) >= announced.wall - 1 && !(d.status_messages || []).some((m) => m.includes('goodbye'))) {
      console.log(JSON.stringify({ ms: Math.round(performance.now() - announced.t) }));
      mdns.destroy(); agent.destroy(); process.exit(0);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
});
mdns.on('ready', () => console.log(JSON.stringify({ ready: true })));
`;

function observe(ns: string, port: number, address: string, iface: string): { ready: Promise<void>; result: Promise<number> } {
  const p = spawn('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', OBSERVER, JSON.stringify({ port, address, iface })], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let readyResolve: () => void;
  const ready = new Promise<void>((r) => (readyResolve = r));
  const result = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error('no announcement listed within 30 s'));
    }, 30_000);
    p.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      for (const line of out.split('\n').filter(Boolean)) {
        const m = JSON.parse(line) as { ready?: boolean; ms?: number };
        if (m.ready) readyResolve();
        if (m.ms !== undefined) {
          clearTimeout(timer);
          resolve(m.ms);
        }
      }
    });
  });
  return { ready, result };
}

const skip = printerLanUnavailable();
if (skip) {
  console.log(`skipped: ${skip}`);
  process.exit(0);
}
const lan = createPrinterLan();
const host = lan.addHost('bench-printer');
const agent = await startAgentInBox(lan, { mdns: true });
const times: number[] = [];
let idleOn: { cpu_percent: number; rss_mib: number } | undefined;
let idleOff: typeof idleOn;
try {
  for (let i = 0; i < rounds; i++) {
    const o = observe(lan.boxNs, agent.config.httpsPort, host.address, lan.boxAddress);
    await o.ready;
    await lan.startPrinter(host, { make: 'Acme', model: 'Laser 9', queue: 'Bench Printer' });
    times.push(await o.result);
    if (i < rounds - 1) await lan.stopPrinter(host);
  }
  if (idleSeconds > 0) {
    const listeners = async (on: boolean) => {
      const r = await agent.request({ method: 'POST', path: '/settings', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ discovery: { mdns_enabled: on, wsd_enabled: on, ssdp_enabled: on } }) });
      if (r.status !== 200) throw new Error(`turning the passive listeners ${on ? 'on' : 'off'}: ${r.status} ${r.body}`);
    };
    // Every passive listener at once (mDNS, WS-Discovery, SSDP), as an appliance with all of them on.
    await listeners(true);
    idleOn = await idle(agent.proc.pid!);
    await listeners(false);
    idleOff = await idle(agent.proc.pid!);
  }
} finally {
  await agent.stop();
  lan.destroy();
}
const sorted = [...times].sort((a, b) => a - b);
console.log(JSON.stringify({ rounds, announce_to_listed_ms: times, median_ms: sorted[Math.floor(sorted.length / 2)], min_ms: sorted[0], max_ms: sorted.at(-1), idle_seconds: idleSeconds, idle_listeners_on: idleOn, idle_listeners_off: idleOff }));
