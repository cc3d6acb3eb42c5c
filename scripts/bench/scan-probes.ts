// A /24 scan with port probes against the SNMP-only scan, in the same run. On a
// namespace LAN (test/kit/printer-lan.ts) the agent runs in the box namespace and scans the
// LAN's /24 as a manual range. The LAN, as a site's would be:
// - SNMP printers (snmpsim serving real recordings; one namespace, one address each on its link);
// - printers that answer only IPP (ippeveprinter, announcing nothing, no SNMP);
// - a host with only port 80 open (a web server: a NAS, a camera), one with only 9100 open (a
//   raw-socket service): neither is a printer by its ports alone, so neither is listed;
// - a host whose port 631 accepts and then says nothing (a hung service, a port a firewall holds
//   open): read by IPP because 631 is open, never answers, not listed;
// - every other address has no host at all: nobody answers ARP for it, so the kernel queues the
//   SYN or datagram, gives up after its ARP solicitations (3 x 1 s) and only then fails a TCP
//   connect (EHOSTUNREACH, raised locally, as on any real LAN); the probe's own 1 s timeout comes
//   first. The bench checks that this is how the namespace behaves before timing anything.
// Scans alternate between discovery.port_probes_enabled on and off, with the default SNMP timeout
// (2000 ms) and concurrency (64). Each scan is timed by ONE client process in the box namespace,
// started before the clock starts: POST /discover, then GET /discover every 50 ms until the state
// leaves "running" (wall); the agent's own `ms` of its "discovery done" line is given too, with
// its phases (snmp_ms, probes_ms, ipp_ms: when the last SNMP read, port probe and IPP read ended).
//
//   npm run build && node dist/scripts/bench/scan-probes.js [--rounds 3] [--snmp-printers 3] [--ipp-printers 2]   # root: namespaces
import { spawn, spawnSync } from 'node:child_process';
import { createPrinterLan, printerLanUnavailable, type PrinterHost } from '../../test/kit/printer-lan.js';
import { startAgentInBox, type BoxAgent } from '../../test/kit/lan.js';
import { ensureSnmpsim, fixturePath, startSnmpSim } from '../../test/kit/snmpsim.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = arg('--rounds', 3);
const nSnmp = arg('--snmp-printers', 3);
const nIpp = arg('--ipp-printers', 2);
const SNMP_PORT = 1161;
const RECORDINGS = ['kyocera_p2040', 'brother', 'epson_cw', 'kyocera_cs4053', 'epson_sc'].map((n) => fixturePath(`printmaster/${n}.snmprec`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const skip = printerLanUnavailable() ?? ensureSnmpsim();
if (skip) {
  console.log(`skipped: ${skip}`);
  process.exit(0);
}

/**
 * A TCP listener on `port` in a host's namespace (a service, not a printer): it accepts and closes,
 * or (mute) accepts and never says anything, as a hung service or a port a firewall holds open.
 */
async function listener(h: PrinterHost, port: number, mute = false) {
  const script = `require('node:net').createServer((s) => { s.on('error', () => {}); ${mute ? '' : 's.end();'} }).listen(${port}, process.argv[1], () => console.log('listening'));`;
  const proc = spawn('ip', ['netns', 'exec', h.ns, process.execPath, '-e', script, h.address], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  const deadline = Date.now() + 20_000;
  while (!out.includes('listening')) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`listener ${h.address}:${port} did not start`);
    await sleep(50);
  }
  return proc;
}

/**
 * How a TCP connect to an address with no host fails in the box namespace, and after how long:
 * a real LAN gives no answer at all until the kernel's ARP gives up (EHOSTUNREACH after about 3 s).
 * An immediate refusal or unreachable would make the bench's silent addresses cheaper than real ones.
 */
function silentConnect(boxNs: string, address: string): { ms: number; outcome: string } {
  const script = `const t = performance.now(); const s = require('node:net').connect(80, process.argv[1]);
    const end = (o) => { console.log(JSON.stringify({ ms: Math.round(performance.now() - t), outcome: o })); process.exit(0); };
    s.on('connect', () => end('connected')); s.on('error', (e) => end(e.code)); setTimeout(() => end('no answer in 6 s'), 6000);`;
  const r = spawnSync('ip', ['netns', 'exec', boxNs, process.execPath, '-e', script, address], { encoding: 'utf8' });
  return JSON.parse(r.stdout.trim()) as { ms: number; outcome: string };
}

/** One scan timed from inside the box namespace (a client started before the clock starts). */
const SCAN_CLIENT = String.raw`
const https = require('node:https');
const port = Number(process.argv[1]);
const call = (method, path) => new Promise((resolve, reject) => {
  const req = https.request({ host: '127.0.0.1', port, path, method, rejectUnauthorized: false, headers: { 'Content-Type': 'application/json', 'Content-Length': 0 } }, (res) => {
    let body = '';
    res.on('data', (c) => (body += c));
    res.on('end', () => (res.statusCode < 300 ? resolve(JSON.parse(body || 'null')) : reject(new Error(path + ': ' + res.statusCode + ' ' + body))));
  });
  req.on('error', reject);
  req.end();
});
(async () => {
  await call('GET', '/api/version'); // the TLS context and the connection code warm, off the clock
  const t = performance.now();
  const { scan_id } = await call('POST', '/discover');
  for (;;) {
    const st = await call('GET', '/discover');
    if (st && st.scan_id === scan_id && st.state !== 'running') {
      console.log(JSON.stringify({ wall_ms: Math.round(performance.now() - t), found: st.found, state: st.state }));
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
})().catch((e) => { console.error(e.message); process.exit(1); });
`;

function timedScan(boxNs: string, agent: BoxAgent): Promise<{ wall_ms: number; found: number; state: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('ip', ['netns', 'exec', boxNs, process.execPath, '-e', SCAN_CLIENT, String(agent.config.httpsPort)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim())) : reject(new Error(`scan client: ${err}`))));
  });
}

const lan = createPrinterLan();
const snmpHost = lan.addHost('snmp-printers');
const ippHosts = Array.from({ length: nIpp }, (_, i) => lan.addHost(`ipp-printer-${i}`));
const webHost = lan.addHost('web-only');
const rawHost = lan.addHost('raw-9100-only');
const muteHost = lan.addHost('mute-631');
// The SNMP printers: the first on the host's own address, the others beside it (.200 up).
const snmpAddresses = [snmpHost.address, ...Array.from({ length: nSnmp - 1 }, (_, i) => lan.subnet.replace(/\.0\/24$/, `.${200 + i}`))];
for (const a of snmpAddresses.slice(1)) spawnSync('ip', ['-n', snmpHost.ns, 'addr', 'add', `${a}/24`, 'dev', 'eth0']);
const silentAddress = lan.subnet.replace(/\.0\/24$/, '.150');
const procs: ReturnType<typeof spawn>[] = [];
const agent = await startAgentInBox(lan, { mdns: false });
const sim = await startSnmpSim({ endpoints: snmpAddresses.map((address, i) => ({ address, recording: RECORDINGS[i % RECORDINGS.length] })), port: SNMP_PORT, netns: snmpHost.ns, quiet: true });
type Mode = 'probes' | 'snmp_only';
type Run = { wall_ms: number; agent_ms?: number; snmp_ms?: number; probes_ms?: number; ipp_ms?: number; found: number };
const results: Record<Mode, Run[]> = { probes: [], snmp_only: [] };
const post = async (path: string, body?: unknown) => {
  const r = await agent.request({ method: 'POST', path, headers: { 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.body}`);
  return r;
};
let silent: { ms: number; outcome: string };
let listed: string[] = [];
try {
  silent = silentConnect(lan.boxNs, silentAddress);
  await Promise.all(ippHosts.map((h, i) => lan.startPrinter(h, { make: 'Acme', model: `Quiet ${i}`, queue: `Bench Printer ${i}`, announce: false })));
  procs.push(await listener(webHost, 80), await listener(rawHost, 9100), await listener(muteHost, 631, true));
  await post('/settings', { snmp: { port: SNMP_PORT }, discovery: { manual_ranges: true, ranges_text: lan.subnet } });
  for (let i = 0; i < rounds; i++) {
    for (const mode of ['probes', 'snmp_only'] as Mode[]) {
      await post('/settings', { discovery: { port_probes_enabled: mode === 'probes' } });
      const logBefore = agent.stdout().length;
      const run: Run = await timedScan(lan.boxNs, agent);
      const done = agent
        .stdout()
        .slice(logBefore)
        .split('\n')
        .find((l) => l.includes('"discovery done"'));
      if (done) {
        const d = JSON.parse(done) as { ms: number; snmp_ms?: number; probes_ms?: number; ipp_ms?: number };
        Object.assign(run, { agent_ms: d.ms, snmp_ms: d.snmp_ms, probes_ms: d.probes_ms, ipp_ms: d.ipp_ms });
      }
      results[mode].push(run);
      console.error(`round ${i + 1} ${mode}: ${JSON.stringify(run)}`);
    }
  }
  const r = await agent.request({ path: '/devices/discovered?include_known=true', maxBody: 1 << 20 });
  listed = (JSON.parse(r.body) as { ip: string }[]).map((d) => d.ip).sort();
} finally {
  await agent.stop();
  await sim.stop();
  for (const p of procs) p.kill('SIGKILL');
  lan.destroy();
}
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1] };
};
const summary = (m: Mode) => ({ wall_ms: stats(results[m].map((r) => r.wall_ms)), found: [...new Set(results[m].map((r) => r.found))], runs: results[m] });
console.log(
  JSON.stringify(
    {
      rounds,
      targets: 254,
      lan: { snmp_printers: snmpAddresses, ipp_only: ippHosts.map((h) => h.address), port_80_only: webHost.address, port_9100_only: rawHost.address, port_631_mute: muteHost.address, silent: 254 - snmpAddresses.length - ippHosts.length - 3 },
      silent_address_connect: silent!,
      snmp_timeout_ms: 2000,
      probes: summary('probes'),
      snmp_only: summary('snmp_only'),
      expected_found: { probes: nSnmp + nIpp, snmp_only: nSnmp },
      listed_after_all_scans: listed,
    },
    null,
    1,
  ),
);
