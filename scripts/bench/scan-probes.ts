// A /24 scan with port probes against the SNMP-only scan, in the same run (issue 33). On a
// namespace LAN (test/helpers/printer-lan.ts) the agent runs in the box namespace and scans the
// LAN's /24 as a manual range; on it, a printer that answers only IPP (ippeveprinter, announcing
// nothing) and one that answers SNMP (snmpsim, a Kyocera recording); the other 251 addresses are
// silent (nobody answers ARP for them). Scans alternate between discovery.port_probes_enabled on
// and off, with the default SNMP timeout (2000 ms) and concurrency (64); each scan is timed from
// POST /discover to the state leaving "running" (polled every 50 ms), and the agent's own `ms`
// of its "discovery done" log line is given too.
//
//   npm run build && node dist/scripts/bench/scan-probes.js [--rounds 3]     # root: network namespaces
import { createPrinterLan, printerLanUnavailable } from '../../test/helpers/printer-lan.js';
import { startAgentInBox } from '../../test/helpers/lan.js';
import { ensureSnmpsim, fixturePath, startSnmpSim } from '../../test/helpers/snmpsim.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = arg('--rounds', 3);
const SNMP_PORT = 1161;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const skip = printerLanUnavailable() ?? ensureSnmpsim();
if (skip) {
  console.log(`skipped: ${skip}`);
  process.exit(0);
}
const lan = createPrinterLan();
const ippHost = lan.addHost('ipp-printer');
const snmpHost = lan.addHost('snmp-printer');
const agent = await startAgentInBox(lan, { mdns: false });
const sim = await startSnmpSim({ endpoints: [{ address: snmpHost.address, recording: fixturePath('printmaster/kyocera_p2040.snmprec') }], port: SNMP_PORT, netns: snmpHost.ns });
type Mode = 'probes' | 'snmp_only';
const results: Record<Mode, { wall_ms: number[]; agent_ms: number[]; found: number[] }> = {
  probes: { wall_ms: [], agent_ms: [], found: [] },
  snmp_only: { wall_ms: [], agent_ms: [], found: [] },
};
const post = async (path: string, body?: unknown) => {
  const r = await agent.request({ method: 'POST', path, headers: { 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.body}`);
  return r;
};
try {
  await lan.startPrinter(ippHost, { make: 'Acme', model: 'Quiet 5', queue: 'Bench Printer', announce: false });
  await post('/settings', { snmp: { port: SNMP_PORT }, discovery: { manual_ranges: true, ranges_text: lan.subnet } });
  for (let i = 0; i < rounds; i++) {
    for (const mode of ['probes', 'snmp_only'] as Mode[]) {
      await post('/settings', { discovery: { port_probes_enabled: mode === 'probes' } });
      const logBefore = agent.stdout().length;
      const t = performance.now();
      const id = (JSON.parse((await post('/discover')).body) as { scan_id: number }).scan_id;
      type Status = { scan_id: number; state: string; found: number } | null;
      let st: Status;
      for (;;) {
        st = JSON.parse((await agent.request('/discover')).body) as Status;
        if (st && st.scan_id === id && st.state !== 'running') break;
        await sleep(50);
      }
      results[mode].wall_ms.push(Math.round(performance.now() - t));
      results[mode].found.push(st!.found);
      const done = agent
        .stdout()
        .slice(logBefore)
        .split('\n')
        .find((l) => l.includes('"discovery done"'));
      if (done) results[mode].agent_ms.push((JSON.parse(done) as { ms: number }).ms);
    }
  }
} finally {
  await agent.stop();
  await sim.stop();
  lan.destroy();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  JSON.stringify({
    rounds,
    targets: 254,
    snmp_timeout_ms: 2000,
    probes: { ...results.probes, median_wall_ms: median(results.probes.wall_ms) },
    snmp_only: { ...results.snmp_only, median_wall_ms: median(results.snmp_only.wall_ms) },
  }),
);
