// A renumbered printer to moved. On a site LAN of network namespaces (test/kit/site-lan.ts)
// the agent runs in the box namespace with mDNS on; one saved printer (ippeveprinter under its own
// Avahi). Two kinds of rounds, each to a new address (the agent's announcement gate reads an
// address at most once a minute: a new address is news):
//   renumber:   the printer's address changed under its running software (DHCP); Avahi
//               re-announces at the new one. Timed from the address change to the saved record's
//               ip being the new one.
//   power cut:  every process of the printer's host SIGKILLed (no goodbye), the address changed,
//               the printer started again (Avahi announces at boot). Timed from the power coming
//               back (the start of the printer's software) to the record's ip being the new one.
// An observer in the box namespace polls GET /api/devices/profile every 20 ms (one kept-alive
// HTTPS connection) and notes the wall time it first sees the new ip.
//
//   npm run build && node dist/scripts/bench/renumber.js [--rounds 5]     # root: network namespaces
import { spawn } from 'node:child_process';
import { startAgentInBox, type BoxAgent } from '../../test/kit/lan.js';
import { killNamespace, ip } from '../../test/kit/printer-lan.js';
import { createSiteLan, siteLanUnavailable } from '../../test/kit/site-lan.js';
import { repoRoot } from '../../test/kit/snmpsim.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = arg('--rounds', 5);
const GUARD_MS = 120_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const OBSERVER = String.raw`
import https from 'node:https';
const cfg = JSON.parse(process.argv[1]);
const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
const get = () => new Promise((resolve, reject) => {
  https.get({ host: '127.0.0.1', port: cfg.port, path: '/api/devices/profile?serial=' + encodeURIComponent(cfg.serial), agent }, (res) => {
    let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => { try { resolve(JSON.parse(b)); } catch (e) { reject(e); } });
  }).on('error', reject);
});
console.log(JSON.stringify({ ready: true }));
for (;;) {
  const p = await get().catch(() => undefined);
  if (p && p.device && p.device.ip === cfg.to) {
    console.log(JSON.stringify({ at: Date.now() }));
    agent.destroy(); process.exit(0);
  }
  await new Promise((r) => setTimeout(r, 20));
}
`;

/** Starts an observer waiting for the record's ip to be `to`; `seen` resolves the wall time it was. */
async function observe(ns: string, port: number, serial: string, to: string): Promise<{ seen: Promise<number>; stop(): void }> {
  const p = spawn('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', OBSERVER, JSON.stringify({ port, serial, to })], { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const seen = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`the record did not move to ${to} within ${GUARD_MS} ms`));
    }, GUARD_MS);
    p.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      for (const line of out.split('\n').filter(Boolean)) {
        const m = JSON.parse(line) as { ready?: boolean; at?: number };
        if (m.ready) ready();
        if (m.at !== undefined) {
          clearTimeout(timer);
          resolve(m.at);
        }
      }
    });
  });
  await isReady;
  return { seen, stop: () => p.kill('SIGKILL') };
}

const skip = siteLanUnavailable();
if (skip) {
  console.log(`skipped: ${skip}`);
  process.exit(0);
}
const lan = createSiteLan();
const host = lan.addHost('bench-printer');
let agent: BoxAgent | undefined;
const renumbered: number[] = [];
const powerCut: number[] = [];
try {
  await lan.startPrinter(host, { make: 'Acme', model: 'Laser 9', queue: 'Bench Printer' });
  const serial = `UUID-${lan.printerUuid(host)}`;
  agent = await startAgentInBox(lan, { mdns: true });
  const deadline = Date.now() + GUARD_MS;
  for (;;) {
    const r = await agent.request({ path: '/devices/discovered?include_known=true', maxBody: 1 << 20 });
    if (r.status === 200 && (JSON.parse(r.body) as { serial: string }[]).some((d) => d.serial === serial)) break;
    if (Date.now() > deadline) throw new Error(`the printer was not listed:\n${agent.stdout().slice(-3000)}`);
    await sleep(200);
  }
  const save = await agent.request({ method: 'POST', path: '/devices/save', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ serial }) });
  if (save.status !== 200) throw new Error(`save: ${save.status} ${save.body}`);
  const port = agent.config.httpsPort;

  for (let i = 0; i < rounds; i++) {
    const to = `${lan.prefix}.${101 + i}`;
    const o = await observe(lan.boxNs, port, serial, to);
    const t0 = Date.now();
    lan.renumber(host, 101 + i);
    renumbered.push((await o.seen) - t0);
    console.error(`renumber ${i + 1}: ${renumbered.at(-1)} ms`);
  }
  for (let i = 0; i < rounds; i++) {
    const octet = 151 + i;
    const to = `${lan.prefix}.${octet}`;
    const o = await observe(lan.boxNs, port, serial, to);
    // lan.powerCycle's steps, with the time taken where the power comes back.
    killNamespace(host.ns, 'SIGKILL');
    while (ip('netns', 'pids', host.ns).out.trim()) await sleep(50);
    lan.renumber(host, octet);
    const t0 = Date.now();
    await lan.startPrinter(host, host.printerOpts!);
    powerCut.push((await o.seen) - t0);
    console.error(`power cut ${i + 1}: ${powerCut.at(-1)} ms`);
  }
} finally {
  await agent?.stop();
  lan.destroy();
}
const summary = (t: number[]) => {
  const s = [...t].sort((a, b) => a - b);
  return { ms: t, median_ms: s[Math.floor(s.length / 2)], min_ms: s[0], max_ms: s.at(-1) };
};
console.log(JSON.stringify({ rounds, renumbered_to_moved: summary(renumbered), power_cut_new_address_to_moved: summary(powerCut) }));
